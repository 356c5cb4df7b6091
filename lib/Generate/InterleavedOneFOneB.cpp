//===- InterleavedOneFOneB.cpp - interleaved 1F1B (Megatron-LM) -----------===//
//
// Megatron-LM's interleaved 1F1B (Narayanan et al. 2021) for any number of
// microbatches. Rank r holds chunks c = 0..v-1, chunk c being stage c*P + r.
// Microbatches form groups; every rank walks the forwards of a group chunk by
// chunk and its backwards chunk by chunk in reverse, after a warm-up of
// forwards, one forward and one backward at a time.
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
struct InterleavedOrder {
  std::vector<ChunkMicrobatch> forwards;
  std::vector<ChunkMicrobatch> backwards;
  int32_t largestGroup = 0;
};
} // namespace

/// Group sizes: floor(M/P) groups as even as possible, larger ones first, so
/// each holds P to 2P-1 microbatches; a single group of M when M < P.
/// Megatron uses groups of exactly P and needs P to divide M. A trailing
/// group smaller than P would leave rank 0 idle while its microbatches go
/// round the ring between chunks, and with the usual warm-up the list
/// simulation can even get stuck (P = 4, v = 3, M = 5); larger groups cost
/// (v-1)(G-P) more warm-up forwards instead.
static std::vector<int32_t> groupSizes(int32_t pp, int32_t microbatches) {
  const int32_t groups = std::max(1, microbatches / pp);
  std::vector<int32_t> sizes(groups, microbatches / groups);
  for (int32_t g = 0; g < microbatches % groups; ++g)
    ++sizes[g];
  return sizes;
}

static InterleavedOrder interleavedOrder(const PipelineShape &shape) {
  InterleavedOrder order;
  int32_t first = 0;
  for (int32_t size : groupSizes(shape.pp, shape.microbatches)) {
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

Schedule sched::generateInterleavedOneFOneB(const PipelineShape &shape) {
  Schedule schedule = emptySchedule(shape);
  const InterleavedOrder order = interleavedOrder(shape);
  const auto total = static_cast<int32_t>(order.forwards.size());
  for (int32_t r = 0; r < shape.pp; ++r) {
    auto compute = [&](ActionKind kind, ChunkMicrobatch unit) {
      return Action::compute(kind, unit.chunk * shape.pp + r, unit.microbatch);
    };
    // 2(P-1-r) chunk forwards cover the round trip to the last rank and
    // back, as in 1F1B counted in chunks; (v-1)G more let the last rank
    // reach the last chunk of a group before its first backward.
    const int32_t warmup = std::min(
        total, 2 * (shape.pp - 1 - r) + (shape.vpp - 1) * order.largestGroup);
    std::vector<Action> &actions = schedule.ranks[r].actions;
    actions.reserve(2 * total);
    for (int32_t k = 0; k < warmup; ++k)
      actions.push_back(compute(ActionKind::Forward, order.forwards[k]));
    for (int32_t k = warmup; k < total; ++k) {
      actions.push_back(compute(ActionKind::Forward, order.forwards[k]));
      actions.push_back(
          compute(ActionKind::Backward, order.backwards[k - warmup]));
    }
    for (int32_t k = total - warmup; k < total; ++k)
      actions.push_back(compute(ActionKind::Backward, order.backwards[k]));
  }
  return schedule;
}
