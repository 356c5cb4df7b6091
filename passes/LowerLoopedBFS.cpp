//===- LowerLoopedBFS.cpp - the sched-lower-looped-bfs pass ---------------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

namespace sched {
#define GEN_PASS_DEF_LOWERLOOPEDBFS
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {
struct LowerLoopedBFSPass : impl::LowerLoopedBFSBase<LowerLoopedBFSPass> {
  using LowerLoopedBFSBase::LowerLoopedBFSBase;

  void runOnOperation() override {
    if (failed(lowerPipelines(getOperation(), Strategy::LoopedBFS, memoryBudget,
                              auxConflicts)))
      signalPassFailure();
  }
};
} // namespace
