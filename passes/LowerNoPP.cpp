//===- LowerNoPP.cpp - the sched-lower-no-pp pass -------------------------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

namespace sched {
#define GEN_PASS_DEF_LOWERNOPP
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {
struct LowerNoPPPass : impl::LowerNoPPBase<LowerNoPPPass> {
  using LowerNoPPBase::LowerNoPPBase;

  void runOnOperation() override {
    if (failed(lowerPipelines(getOperation(), Strategy::NoPipeline,
                              memoryBudget, auxConflicts)))
      signalPassFailure();
  }
};
} // namespace
