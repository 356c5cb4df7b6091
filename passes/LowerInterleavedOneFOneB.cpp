//===- LowerInterleavedOneFOneB.cpp - sched-lower-interleaved-1f1b --------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

namespace sched {
#define GEN_PASS_DEF_LOWERINTERLEAVEDONEFONEB
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {
struct LowerInterleavedOneFOneBPass
    : impl::LowerInterleavedOneFOneBBase<LowerInterleavedOneFOneBPass> {
  using LowerInterleavedOneFOneBBase::LowerInterleavedOneFOneBBase;

  void runOnOperation() override {
    if (failed(lowerPipelines(getOperation(), Strategy::Interleaved1F1B,
                              memoryBudget, auxConflicts)))
      signalPassFailure();
  }
};
} // namespace
