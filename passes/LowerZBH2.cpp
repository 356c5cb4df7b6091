//===- LowerZBH2.cpp - the sched-lower-zb-h2 pass -------------------------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

namespace sched {
#define GEN_PASS_DEF_LOWERZBH2
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {
struct LowerZBH2Pass : impl::LowerZBH2Base<LowerZBH2Pass> {
  using LowerZBH2Base::LowerZBH2Base;

  void runOnOperation() override {
    if (failed(lowerPipelines(getOperation(), Strategy::ZBH2, memoryBudget,
                              auxConflicts)))
      signalPassFailure();
  }
};
} // namespace
