//===- LowerZBV.cpp - the sched-lower-zb-v pass ---------------------------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

namespace sched {
#define GEN_PASS_DEF_LOWERZBV
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {
struct LowerZBVPass : impl::LowerZBVBase<LowerZBVPass> {
  using LowerZBVBase::LowerZBVBase;

  void runOnOperation() override {
    if (failed(lowerPipelines(getOperation(), Strategy::ZBV, memoryBudget,
                              auxConflicts)))
      signalPassFailure();
  }
};
} // namespace
