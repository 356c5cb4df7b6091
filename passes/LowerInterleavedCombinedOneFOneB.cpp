//===- LowerInterleavedCombinedOneFOneB.cpp - its lowering pass ----------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

namespace sched {
#define GEN_PASS_DEF_LOWERINTERLEAVEDCOMBINEDONEFONEB
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {
struct LowerInterleavedCombinedOneFOneBPass
    : impl::LowerInterleavedCombinedOneFOneBBase<
          LowerInterleavedCombinedOneFOneBPass> {
  using LowerInterleavedCombinedOneFOneBBase::
      LowerInterleavedCombinedOneFOneBBase;

  void runOnOperation() override {
    if (failed(lowerPipelines(getOperation(), Strategy::InterleavedCombined1F1B,
                              memoryBudget, auxConflicts)))
      signalPassFailure();
  }
};
} // namespace
