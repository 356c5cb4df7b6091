//===- ScheduleIR.h - plain schedules to and from the dialect ---*- C++ -*-===//
//
// Converts between the sched dialect's pipeline/schedule ops and the plain
// forms in lib/Schedule and lib/Generate.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SCHEDULEIR_SCHEDULEIR_H
#define LIB_SCHEDULEIR_SCHEDULEIR_H

#include "dialects/Sched/SchedOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "lib/Generate/Strategy.h"
#include "lib/Limits/MemoryBudgetOption.h"
#include "lib/Schedule/RuntimePlan.h"
#include "lib/Schedule/Schedule.h"

namespace sched {

/// The unit of a pipeline's or schedule's stage times, as a discardable
/// attribute: "s" (seconds, as the planner writes them); absent, abstract
/// units. A lowering carries it from the pipeline to the schedule.
constexpr llvm::StringLiteral kTimeUnitAttr = "sched.time_unit";
/// The time one transfer between ranks takes, in the stage times' unit
/// (an f64 attribute on a pipeline or schedule; the planner's simulation
/// of a written plan used it). The simulator takes it unless told a comm
/// time.
constexpr llvm::StringLiteral kTransferTimeAttr = "sched.transfer_time";
/// An action's stream and events, as discardable string attributes
/// (SchedDialect::verifyOperationAttribute checks them): the stream it runs
/// on, the event its stream waits for before it, the event recorded on its
/// stream after it.
constexpr llvm::StringLiteral kStreamAttr = "sched.stream";
constexpr llvm::StringLiteral kWaitEventAttr = "sched.wait_event";
constexpr llvm::StringLiteral kRecordEventAttr = "sched.record_event";

/// The plain form of an aux-head scope.
AuxLossScope auxLossScope(AuxScope scope);

/// The shape and per-stage costs a `sched.pipeline` declares.
PipelineShape readPipelineShape(PipelineOp pipeline);

/// The highest stage of `pipeline` with a `global_batch` aux head (its
/// barrier covers the heads below it), or -1 when it has none.
int32_t highestGlobalBatchHead(PipelineOp pipeline);

/// The plain form of a `sched.schedule`. When `origins` is given it receives,
/// per rank and action, the op the action came from (for diagnostics).
mlir::FailureOr<Schedule>
readSchedule(ScheduleOp op,
             std::vector<std::vector<mlir::Operation *>> *origins = nullptr);

/// Where the ops written for a schedule come from: one location per rank
/// and per action (a bundle op takes its first member's).
struct ProgramLocations {
  std::vector<mlir::Location> ranks;
  std::vector<std::vector<mlir::Location>> actions;
};

/// Appends the rank programs of `schedule` to the body of `op`, at the
/// schedule's location unless `locations` says otherwise.
void writeRankPrograms(mlir::OpBuilder &builder, ScheduleOp op,
                       const Schedule &schedule,
                       const ProgramLocations *locations = nullptr);

/// The runtime plan of a `sched.schedule`: its plain form plus mesh, aux
/// heads, buffer slots (when sched-assign-buffers ran) and its memory_limit
/// as the verdict's limit. The verdict is "unverified"; the caller that
/// verified it says so.
mlir::FailureOr<RuntimePlan> readRuntimePlan(ScheduleOp op);

/// Creates a `sched.schedule` at the builder's insertion point that holds
/// `plan`: its declarations, rank programs and slot attributes. The plan's
/// group and peer indices must be in range.
ScheduleOp writeRuntimePlan(mlir::OpBuilder &builder, mlir::Location loc,
                            const RuntimePlan &plan,
                            const ProgramLocations *locations = nullptr);

/// Replaces `pipeline` by a `sched.schedule` of the same name that runs
/// `strategy`; declarations (stages, groups, aux heads, collectives) move
/// into the schedule. Emits a diagnostic at the pipeline on failure, among
/// them a lowering whose estimated working memory is over `memoryBudget`
/// bytes (lib/Limits), refused before anything is generated. Unless
/// `keepAuxConflicts`, a global-batch aux head whose order the strategy
/// breaks fails the lowering with one error at the head.
mlir::LogicalResult lowerPipeline(PipelineOp pipeline, Strategy strategy,
                                  int64_t memoryBudget,
                                  bool keepAuxConflicts = false);

/// Replaces `pipeline` by a `sched.schedule` of the same name (and memory
/// limit) that runs `schedule`; the declarations move into it, ahead of the
/// rank programs. `schedule` is of the pipeline's shape.
ScheduleOp replacePipeline(PipelineOp pipeline, const Schedule &schedule);

/// Lowers every `sched.pipeline` directly inside `module` with `strategy`.
/// `memoryBudget` and `auxConflicts` are the passes' options, checked
/// first (even when there is nothing to lower): the budget as
/// memoryBudgetBytes reads it; "error" (a head the order breaks fails the
/// lowering) or "keep" (lower anyway, for sched-legalize-aux-loss). Each
/// is refused with one error on the module.
mlir::LogicalResult lowerPipelines(mlir::ModuleOp module, Strategy strategy,
                                   const MemoryBudgetOption &memoryBudget,
                                   llvm::StringRef auxConflicts = "error");

} // namespace sched

#endif // LIB_SCHEDULEIR_SCHEDULEIR_H
