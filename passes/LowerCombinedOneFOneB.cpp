//===- LowerCombinedOneFOneB.cpp - sched-lower-combined-1f1b --------------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

namespace sched {
#define GEN_PASS_DEF_LOWERCOMBINEDONEFONEB
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {
struct LowerCombinedOneFOneBPass
    : impl::LowerCombinedOneFOneBBase<LowerCombinedOneFOneBPass> {
  using LowerCombinedOneFOneBBase::LowerCombinedOneFOneBBase;

  void runOnOperation() override {
    if (failed(lowerPipelines(getOperation(), Strategy::Combined1F1B,
                              memoryBudget, auxConflicts)))
      signalPassFailure();
  }
};
} // namespace
