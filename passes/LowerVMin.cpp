//===- LowerVMin.cpp - the sched-lower-v-min pass -------------------------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

namespace sched {
#define GEN_PASS_DEF_LOWERVMIN
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {
struct LowerVMinPass : impl::LowerVMinBase<LowerVMinPass> {
  using LowerVMinBase::LowerVMinBase;

  void runOnOperation() override {
    if (failed(lowerPipelines(getOperation(), Strategy::VMin, memoryBudget,
                              auxConflicts)))
      signalPassFailure();
  }
};
} // namespace
