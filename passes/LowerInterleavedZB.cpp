//===- LowerInterleavedZB.cpp - the sched-lower-interleaved-zb pass -------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

namespace sched {
#define GEN_PASS_DEF_LOWERINTERLEAVEDZB
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {
struct LowerInterleavedZBPass
    : impl::LowerInterleavedZBBase<LowerInterleavedZBPass> {
  using LowerInterleavedZBBase::LowerInterleavedZBBase;

  void runOnOperation() override {
    if (failed(lowerPipelines(getOperation(), Strategy::InterleavedZB,
                              memoryBudget, auxConflicts)))
      signalPassFailure();
  }
};
} // namespace
