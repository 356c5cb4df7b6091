//===- LowerGPipe.cpp - the sched-lower-gpipe pass ------------------------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

namespace sched {
#define GEN_PASS_DEF_LOWERGPIPE
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {
struct LowerGPipePass : impl::LowerGPipeBase<LowerGPipePass> {
  using LowerGPipeBase::LowerGPipeBase;

  void runOnOperation() override {
    if (failed(lowerPipelines(getOperation(), Strategy::GPipe, memoryBudget,
                              auxConflicts)))
      signalPassFailure();
  }
};
} // namespace
