//===- Strategy.h - pipeline strategies and their generators ----*- C++ -*-===//
//
// The pipeline strategies schedc knows, and the generators that turn a
// pipeline shape into a compute-only schedule (no transfers yet).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_GENERATE_STRATEGY_H
#define LIB_GENERATE_STRATEGY_H

#include "lib/Limits/ResourceLimits.h"
#include "lib/Schedule/Schedule.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace sched {

/// A pipeline schedule family.
enum class Strategy : uint8_t {
  GPipe,
  OneFOneB,
  Interleaved1F1B,
  LoopedBFS,
  ZBH1,
  ZBH2,
  InterleavedZB,
  ZBV,
  VHalf,
  VMin,
  DualPipeV,
  DualPipe,
  NoPipeline,
  Combined1F1B,
  InterleavedCombined1F1B,
};

/// What a pipeline looks like to a generator.
struct PipelineShape {
  int32_t pp = 1;
  int32_t vpp = 1;
  int32_t microbatches = 1;
  StagePlacement placement = StagePlacement::Loop;
  /// Per-stage costs, pp * vpp of them, or empty for unit costs.
  std::vector<StageCost> stageCosts;

  int32_t numStages() const { return pp * vpp; }
};

/// Every strategy, in the enum's order.
llvm::ArrayRef<Strategy> allStrategies();

/// The name a strategy goes by on the command line and in pass names.
llvm::StringRef strategyName(Strategy strategy);

/// The strategy called `name`, if any.
std::optional<Strategy> parseStrategy(llvm::StringRef name);

/// All strategy names, comma-separated, for error messages and help.
std::string strategyNames();

/// Why `strategy` does not apply to `shape`, or success.
llvm::Error checkPipelineShape(Strategy strategy, const PipelineShape &shape);

/// The compute actions `generateSchedule(strategy, shape)` produces,
/// exactly, computed without generating anything (in time linear in pp at
/// most). `shape` passes checkPipelineShape.
int64_t computeActionCount(Strategy strategy, const PipelineShape &shape);

/// The overlaps (sched.overlap: a forward and a backward issued together)
/// among those actions, exactly: the steady phases of DualPipe, DualPipeV
/// and the combined 1F1Bs; 0 for the other strategies. Their IR costs more
/// than two actions'.
int64_t computeOverlapCount(Strategy strategy, const PipelineShape &shape);

/// What lib/Limits estimates a request of `strategy` for `shape` by,
/// counted without generating anything: its actions, overlaps and
/// microbatches. Transfers are counted on the generated schedule
/// (countPlanInstructions, lib/Generate/PlanMemory.h).
RequestSize computeRequestSize(Strategy strategy, const PipelineShape &shape);

/// The stages per rank `strategy` takes when none are given: 2 for the V
/// strategies, else 1.
int32_t defaultVpp(Strategy strategy);

/// Generates the compute order of `strategy` for `shape`, or explains why
/// the strategy does not apply to that shape (checkPipelineShape).
llvm::Expected<Schedule> generateSchedule(Strategy strategy,
                                          const PipelineShape &shape);

/// One empty program per rank of `shape`, with its costs attached.
Schedule emptySchedule(const PipelineShape &shape);

/// GPipe: every forward, then every backward (Huang et al. 2019).
Schedule generateGPipe(const PipelineShape &shape);

/// 1F1B / PipeDream-Flush: warm-up forwards, then one forward one backward,
/// then the remaining backwards (Narayanan et al. 2021).
Schedule generateOneFOneB(const PipelineShape &shape);

/// Interleaved 1F1B (Narayanan et al. 2021, Megatron-LM): vpp chunks per
/// rank in loop placement, microbatches in groups of pp to 2pp-1 (one group
/// when M < pp) walked chunk by chunk, 2(P-1-r) + (vpp-1) * G warm-up
/// forwards on rank r, where G is the largest group. Any M >= 1.
Schedule generateInterleavedOneFOneB(const PipelineShape &shape);

/// Looped BFS (Lamy-Poirier 2023): loop placement, every microbatch of a
/// chunk before the next chunk, forwards then backwards in reverse chunk
/// order.
Schedule generateLoopedBFS(const PipelineShape &shape);

/// ZB-H1 (Qi et al. 2024): 1F1B with the backward split into I and W;
/// rank r lets up to r weight gradients wait, which fills the cool-down
/// while the peak stays at P activations.
Schedule generateZBH1(const PipelineShape &shape);

/// ZB-H2 (Qi et al. 2024): 2(P-1-r)+1 forwards before the first I and up
/// to 2r weight gradients waiting on rank r, so each rank runs without idle
/// from its first action to its last (peak 2P-1 activations).
Schedule generateZBH2(const PipelineShape &shape);

/// Interleaved zero bubble (Qi et al. 2024 on interleaved 1F1B; PyTorch's
/// ScheduleInterleavedZeroBubble): loop placement with vpp >= 1 chunks per
/// rank, interleaved 1F1B's groups and chunk order with the backward split
/// into I and W, (vpp-1) * G + pp-1-r warm-up forwards on rank r (G the
/// largest group) and up to r weight gradients waiting. With unit costs its
/// makespan is the least any schedule can have; vpp = 1 gives ZB-H1.
Schedule generateInterleavedZeroBubble(const PipelineShape &shape);

/// ZB-V (Qi et al. 2024): two stages per rank in a V (stage r and
/// 2P-1-r on rank r), split backward, up to 2P stage activations per rank;
/// list-scheduled in unit steps (docs/schedules.md).
Schedule generateZBV(const PipelineShape &shape);

/// V-Half (Qi et al. 2024b): ZB-V's V under a cap of P+2 stage activations,
/// about half of 1F1B's memory and half of its bubble.
Schedule generateVHalf(const PipelineShape &shape);

/// V-Min (Qi et al. 2024b): the V-Min building block repeated every six
/// steps; about a third of 1F1B's memory, two thirds of its bubble.
Schedule generateVMin(const PipelineShape &shape);

/// DualPipeV (DeepSeek): V placement, DeepSeek's warm-up and steady phase of
/// sched.overlap pairs (a forward with a backward of the other chunk), then
/// a list-scheduled cool-down. Any M >= 1; overlaps need M > P.
Schedule generateDualPipeV(const PipelineShape &shape);

/// DualPipe (DeepSeek): two replicas of the pp-stage pipeline, one fed
/// from each end (schedule stages 2 pp, replicas 2), in DeepSeek's eight
/// phases with sched.overlap pairs in the steady phase. Needs pp even, M
/// even and M >= 2 pp (checked by generateSchedule).
Schedule generateDualPipe(const PipelineShape &shape);

/// No pipeline: one stage, every microbatch's forward then its backward
/// (gradient accumulation).
Schedule generateNoPipeline(const PipelineShape &shape);

/// Combined 1F1B without a pipeline (Megatron-Core's
/// combined_1f1b_schedule_for_no_pipelining,
/// --overlap-moe-expert-parallel-comm): one stage; the forward of microbatch 0
/// alone, then M-1 sched.overlap pairs of the forward of microbatch i+1 with
/// the backward of microbatch i, then the last backward alone. Two activations
/// live at once.
Schedule generateCombinedOneFOneB(const PipelineShape &shape);

/// Interleaved combined 1F1B (Megatron-Core's interleaved 1F1B with
/// --overlap-moe-expert-parallel-comm,
/// combined_1f1b_schedule_for_interleaved_pipelining): interleaved 1F1B's
/// chunk order with one more warm-up forward per rank, so that each steady
/// step is a sched.overlap of a forward with an independent backward.
Schedule generateInterleavedCombinedOneFOneB(const PipelineShape &shape);

} // namespace sched

#endif // LIB_GENERATE_STRATEGY_H
