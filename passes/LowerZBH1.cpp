//===- LowerZBH1.cpp - the sched-lower-zb-h1 pass -------------------------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

namespace sched {
#define GEN_PASS_DEF_LOWERZBH1
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {
struct LowerZBH1Pass : impl::LowerZBH1Base<LowerZBH1Pass> {
  using LowerZBH1Base::LowerZBH1Base;

  void runOnOperation() override {
    if (failed(lowerPipelines(getOperation(), Strategy::ZBH1, memoryBudget,
                              auxConflicts)))
      signalPassFailure();
  }
};
} // namespace
