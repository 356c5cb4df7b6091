//===- LowerDualPipe.cpp - the sched-lower-dualpipe pass ------------------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

namespace sched {
#define GEN_PASS_DEF_LOWERDUALPIPE
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {
struct LowerDualPipePass : impl::LowerDualPipeBase<LowerDualPipePass> {
  using LowerDualPipeBase::LowerDualPipeBase;

  void runOnOperation() override {
    if (failed(lowerPipelines(getOperation(), Strategy::DualPipe, memoryBudget,
                              auxConflicts)))
      signalPassFailure();
  }
};
} // namespace
