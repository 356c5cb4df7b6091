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

#include "lib/Generate/Strategy.h"

#include <algorithm>

using namespace sched;

namespace {
/// One chunk of one microbatch, the unit of the interleaved order.
struct ChunkMicrobatch {
  int32_t chunk;
  int32_t microbatch;
};

/// The order every rank visits its chunks in, and the largest group.
struct ZeroBubbleOrder {
  std::vector<ChunkMicrobatch> forwards;
  std::vector<ChunkMicrobatch> backwards;
  int32_t largestGroup = 0;
};
} // namespace

/// The microbatch groups of interleaved 1F1B: max(1, M/P) groups as even as
/// possible, larger ones first, so each holds P to 2P-1 microbatches (all M
/// when M < P). PyTorch takes only M that its max(1, M/P) rounds divide, for
/// which these are its rounds; a remainder widens the first groups instead
/// of leaving a short group that would idle rank 0 between chunks.
static ZeroBubbleOrder zeroBubbleOrder(const PipelineShape &shape) {
  const int32_t m = shape.microbatches;
  const int32_t groups = std::max(1, m / shape.pp);
  ZeroBubbleOrder order;
  int32_t first = 0;
  for (int32_t g = 0; g < groups; ++g) {
    const int32_t size = m / groups + (g < m % groups ? 1 : 0);
    order.largestGroup = std::max(order.largestGroup, size);
    for (int32_t chunk = 0; chunk < shape.vpp; ++chunk)
      for (int32_t mb = first; mb < first + size; ++mb)
        order.forwards.push_back({chunk, mb});
    for (int32_t chunk = shape.vpp - 1; chunk >= 0; --chunk)
      for (int32_t mb = first; mb < first + size; ++mb)
        order.backwards.push_back({chunk, mb});
    first += size;
  }
  return order;
}

Schedule sched::generateInterleavedZeroBubble(const PipelineShape &shape) {
  Schedule schedule = emptySchedule(shape);
  const ZeroBubbleOrder order = zeroBubbleOrder(shape);
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
