//===- Simulate.cpp - the sched-simulate pass -----------------------------===//
//
// Runs the list simulation of lib/Simulate on every sched.schedule: a remark
// at the schedule with its makespan, bubble ratios and peak activations,
// and, with `annotate`, the start and end time of every action as
// attributes for later tools (pictures, traces) to read.
//
//===----------------------------------------------------------------------===//

#include "lib/Simulate/Simulate.h"
#include "lib/Schedule/CostSpec.h"
#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

namespace sched {
#define GEN_PASS_DEF_SIMULATESCHEDULES
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

static std::string joined(llvm::ArrayRef<double> values) {
  std::string text;
  for (double value : values) {
    if (!text.empty())
      text += " ";
    text += formatNumber(value);
  }
  return text;
}

namespace {
struct SimulatePass : impl::SimulateSchedulesBase<SimulatePass> {
  using SimulateSchedulesBase::SimulateSchedulesBase;

  void runOnOperation() override {
    if (std::optional<std::string> error =
            flagOptionError("annotate", annotate)) {
      mlir::emitError(getOperation().getLoc()) << "sched-simulate: " << *error;
      return signalPassFailure();
    }
    std::optional<CostSpec> spec;
    if (!cost.empty()) {
      llvm::Expected<CostSpec> parsed = parseCostSpec(cost);
      if (!parsed) {
        mlir::emitError(getOperation().getLoc())
            << "sched-simulate: " << llvm::toString(parsed.takeError());
        return signalPassFailure();
      }
      spec = *parsed;
    }
    for (auto scheduleOp : getOperation().getOps<ScheduleOp>())
      if (mlir::failed(simulateOne(scheduleOp, spec)))
        return signalPassFailure();
  }

  mlir::LogicalResult simulateOne(ScheduleOp scheduleOp,
                                  const std::optional<CostSpec> &spec) {
    std::vector<std::vector<mlir::Operation *>> origins;
    mlir::FailureOr<Schedule> schedule = readSchedule(scheduleOp, &origins);
    if (mlir::failed(schedule))
      return mlir::failure();
    SimulationOptions options;
    if (spec) {
      applyCostSpec(*schedule, *spec);
      options.comm = spec->comm.value_or(0);
      options.declaredTransfers = !spec->comm;
    }
    llvm::Expected<Timeline> timeline = simulate(*schedule, options);
    if (!timeline)
      return mlir::emitError(scheduleOp.getLoc())
             << llvm::toString(timeline.takeError());
    mlir::emitRemark(scheduleOp.getLoc())
        << "makespan " << formatNumber(timeline->makespan)
        << "; bubble ratio per rank " << joined(timeline->bubbleRatio)
        << "; peak activations per rank " << joined(timeline->peakActivations);
    if (!annotate)
      return mlir::success();
    mlir::Builder builder(scheduleOp.getContext());
    scheduleOp->setAttr("sched.makespan",
                        builder.getF64FloatAttr(timeline->makespan));
    for (size_t r = 0; r < origins.size(); ++r)
      for (size_t i = 0; i < origins[r].size(); ++i) {
        const ActionTime &time = timeline->times[r][i];
        origins[r][i]->setAttr("sched.start",
                               builder.getF64FloatAttr(time.start));
        origins[r][i]->setAttr("sched.end", builder.getF64FloatAttr(time.end));
      }
    return mlir::success();
  }
};
} // namespace
