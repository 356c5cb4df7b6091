//===- LowerDualPipeV.cpp - the sched-lower-dualpipe-v pass ---------------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

namespace sched {
#define GEN_PASS_DEF_LOWERDUALPIPEV
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {
struct LowerDualPipeVPass : impl::LowerDualPipeVBase<LowerDualPipeVPass> {
  using LowerDualPipeVBase::LowerDualPipeVBase;

  void runOnOperation() override {
    if (failed(lowerPipelines(getOperation(), Strategy::DualPipeV, memoryBudget,
                              auxConflicts)))
      signalPassFailure();
  }
};
} // namespace
