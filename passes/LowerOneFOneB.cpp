//===- LowerOneFOneB.cpp - the sched-lower-1f1b pass ----------------------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

namespace sched {
#define GEN_PASS_DEF_LOWERONEFONEB
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {
struct LowerOneFOneBPass : impl::LowerOneFOneBBase<LowerOneFOneBPass> {
  using LowerOneFOneBBase::LowerOneFOneBBase;

  void runOnOperation() override {
    if (failed(lowerPipelines(getOperation(), Strategy::OneFOneB, memoryBudget,
                              auxConflicts)))
      signalPassFailure();
  }
};
} // namespace
