//===- LowerVHalf.cpp - the sched-lower-v-half pass -----------------------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

namespace sched {
#define GEN_PASS_DEF_LOWERVHALF
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {
struct LowerVHalfPass : impl::LowerVHalfBase<LowerVHalfPass> {
  using LowerVHalfBase::LowerVHalfBase;

  void runOnOperation() override {
    if (failed(lowerPipelines(getOperation(), Strategy::VHalf, memoryBudget,
                              auxConflicts)))
      signalPassFailure();
  }
};
} // namespace
