//===- ZeroBubble.cpp - handcrafted zero-bubble schedules ZB-H1, ZB-H2 ----===//
//
// Qi et al. 2024, "Zero Bubble Pipeline Parallelism": the backward splits
// into I (input gradient, on the critical path) and W (weight gradient, free
// to wait). Both schedules give rank r the same program shape: some
// forwards, then I, W when enough W wait, F while forwards remain, and the
// waiting W last. They differ in how many forwards come before the first I
// and how many W may wait.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/Strategy.h"

#include <algorithm>

using namespace sched;

/// Fills `actions` with the program of the rank holding `stage` (one stage
/// per rank): `forwardsFirst` forwards,
/// then per microbatch I, a W once more than `waitingW` wait, and the next
/// F; the W still waiting at the end close the program.
static void appendZeroBubbleRank(std::vector<Action> &actions, int32_t stage,
                                 int32_t microbatches, int32_t forwardsFirst,
                                 int32_t waitingW) {
  actions.reserve(3 * microbatches);
  int32_t nextF = std::min(forwardsFirst, microbatches);
  for (int32_t mb = 0; mb < nextF; ++mb)
    actions.push_back(Action::compute(ActionKind::Forward, stage, mb));
  int32_t nextW = 0;
  for (int32_t nextI = 0; nextI < microbatches; ++nextI) {
    actions.push_back(Action::compute(ActionKind::BackwardInput, stage, nextI));
    if (nextI + 1 - nextW > waitingW)
      actions.push_back(
          Action::compute(ActionKind::BackwardWeight, stage, nextW++));
    if (nextF < microbatches)
      actions.push_back(Action::compute(ActionKind::Forward, stage, nextF++));
  }
  while (nextW < microbatches)
    actions.push_back(
        Action::compute(ActionKind::BackwardWeight, stage, nextW++));
}

Schedule sched::generateZBH1(const PipelineShape &shape) {
  Schedule schedule = emptySchedule(shape);
  // P-r forwards before the first I, as in 1F1B. The last microbatch's I
  // leaves rank r r steps before rank 0 is done with it; r waiting W fill
  // those steps. A waiting W holds only the weight-gradient part of an
  // activation, so the peak stays at P.
  for (int32_t r = 0; r < shape.pp; ++r)
    appendZeroBubbleRank(schedule.ranks[r].actions, r, shape.microbatches,
                         /*forwardsFirst=*/shape.pp - r, /*waitingW=*/r);
  return schedule;
}

Schedule sched::generateZBH2(const PipelineShape &shape) {
  Schedule schedule = emptySchedule(shape);
  const int32_t m = shape.microbatches;
  for (int32_t r = 0; r < shape.pp; ++r) {
    // With T_F = T_I, rank r's first I can start 2(P-1-r)+1 steps after its
    // first F; as many forwards fill that wait. Up to 2r waiting W then fill
    // the cool-down, so each rank runs from its first action to its last
    // without idle. Below 2P-1 microbatches the extra r W are capped at M-P:
    // more would pile up at the end of the middle ranks and lengthen the
    // step (docs/schedules.md).
    const int32_t waitingW = r + std::min(r, std::max(0, m - shape.pp));
    appendZeroBubbleRank(schedule.ranks[r].actions, r, m,
                         /*forwardsFirst=*/2 * (shape.pp - 1 - r) + 1,
                         waitingW);
  }
  return schedule;
}
