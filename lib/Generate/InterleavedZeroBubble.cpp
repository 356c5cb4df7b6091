//===- InterleavedZeroBubble.cpp - interleaved zero bubble (ZB on a loop) -===//
//
// Qi et al. 2024's split backward applied to interleaved 1F1B, as PyTorch's
// ScheduleInterleavedZeroBubble, for any number of microbatches. Rank r holds
// chunks c = 0..v-1, chunk c being stage c*P + r. Every rank walks its
// forwards group by group, chunk by chunk, and its input gradients in the
// reverse chunk order, as interleaved 1F1B; the backward splits into I and
// W, the warm-up counts one forward per hop instead of two (an I takes one
// step, not two), and rank r lets r weight gradients wait, as ZB-H1.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/InterleavedOrder.h"

#include <algorithm>

using namespace sched;

Schedule sched::generateInterleavedZeroBubble(const PipelineShape &shape) {
  Schedule schedule = emptySchedule(shape);
  const InterleavedOrder order = interleavedOrder(shape);
  const auto total = static_cast<int32_t>(order.forwards.size());
  for (int32_t r = 0; r < shape.pp; ++r) {
    auto compute = [&](ActionKind kind, ChunkMicrobatch unit) {
      return Action::compute(kind, unit.chunk * shape.pp + r, unit.microbatch);
    };
    // (v-1)G forwards let the last rank reach the last chunk of a group
    // before its first I, as in interleaved 1F1B; P-1-r more cover the hops
    // to the last rank, one step each way since an I takes one step. With
    // v = 1 this is ZB-H1's program.
    const int32_t warmup = std::min(
        total, (shape.vpp - 1) * order.largestGroup + shape.pp - 1 - r);
    std::vector<Action> &actions = schedule.ranks[r].actions;
    actions.reserve(3 * size_t(total));
    for (int32_t k = 0; k < warmup; ++k)
      actions.push_back(compute(ActionKind::Forward, order.forwards[k]));
    // Then per input gradient: the next forward while any remain, the I,
    // and the oldest W once r of them wait. The last microbatch's I leaves
    // rank r r steps before rank 0 is done with it; r waiting W fill them.
    int32_t nextW = 0;
    for (int32_t k = 0; k < total; ++k) {
      if (warmup + k < total)
        actions.push_back(
            compute(ActionKind::Forward, order.forwards[warmup + k]));
      actions.push_back(compute(ActionKind::BackwardInput, order.backwards[k]));
      if (k >= r)
        actions.push_back(
            compute(ActionKind::BackwardWeight, order.backwards[nextW++]));
    }
    while (nextW < total)
      actions.push_back(
          compute(ActionKind::BackwardWeight, order.backwards[nextW++]));
  }
  return schedule;
}
