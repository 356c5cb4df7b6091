//===- InterleavedOneFOneB.cpp - interleaved 1F1B (Megatron-LM) -----------===//
//
// Megatron-LM's interleaved 1F1B (Narayanan et al. 2021) for any number of
// microbatches. Rank r holds chunks c = 0..v-1, chunk c being stage c*P + r.
// Microbatches form groups; every rank walks the forwards of a group chunk by
// chunk and its backwards chunk by chunk in reverse, after a warm-up of
// forwards, one forward and one backward at a time. The walk also serves
// the combined variant (InterleavedCombinedOneFOneB.cpp).
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/InterleavedOrder.h"

#include <algorithm>

using namespace sched;

Schedule sched::interleavedOneFOneBSchedule(const PipelineShape &shape,
                                            bool combined) {
  Schedule schedule = emptySchedule(shape);
  const InterleavedOrder order = interleavedOrder(shape);
  const auto total = static_cast<int32_t>(order.forwards.size());
  for (int32_t r = 0; r < shape.pp; ++r) {
    auto compute = [&](ActionKind kind, ChunkMicrobatch unit) {
      return Action::compute(kind, unit.chunk * shape.pp + r, unit.microbatch);
    };
    // 2(P-1-r) chunk forwards cover the round trip to the last rank and
    // back, as in 1F1B counted in chunks; (v-1)G more let the last rank
    // reach the last chunk of a group before its first backward. Combined
    // 1F1B runs one more, so that the backward a forward runs beside never
    // waits for that forward.
    const int32_t warmup = std::min(
        total, 2 * (shape.pp - 1 - r) + (shape.vpp - 1) * order.largestGroup +
                   (combined ? 1 : 0));
    std::vector<Action> &actions = schedule.ranks[r].actions;
    actions.reserve(2 * total);
    for (int32_t k = 0; k < warmup; ++k)
      actions.push_back(compute(ActionKind::Forward, order.forwards[k]));
    uint32_t lastBundle = 0;
    for (int32_t k = warmup; k < total; ++k) {
      Action forward = compute(ActionKind::Forward, order.forwards[k]);
      Action backward =
          compute(ActionKind::Backward, order.backwards[k - warmup]);
      if (combined) {
        forward.bundle = backward.bundle = ++lastBundle;
        // Megatron-Core runs the pair layer by layer.
        forward.layerwise = backward.layerwise = true;
      }
      actions.push_back(forward);
      actions.push_back(backward);
    }
    for (int32_t k = total - warmup; k < total; ++k)
      actions.push_back(compute(ActionKind::Backward, order.backwards[k]));
  }
  return schedule;
}

Schedule sched::generateInterleavedOneFOneB(const PipelineShape &shape) {
  return interleavedOneFOneBSchedule(shape, /*combined=*/false);
}
