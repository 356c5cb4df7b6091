//===- CombinedOneFOneB.cpp - combined 1F1B without a pipeline ------------===//
//
// Megatron-Core's combined 1F1B for pp = 1
// (combined_1f1b_schedule_for_no_pipelining, enabled by
// --overlap-moe-expert-parallel-comm): the whole model is one stage, and the
// forward of one microbatch runs beside the backward of the previous one,
// layer by layer, so that each one's expert all-to-all hides under the
// other's computation. Microbatch 0's forward runs alone, then M-1
// sched.overlap pairs F(i+1) with B(i), then the last backward alone: no
// bubble. The pairs are layerwise (forward layer i beside backward layer
// n-1-i, `TransformerModelChunkSchedulePlan`), so the forward adds one
// layer's activations above the backward's microbatch, not a second
// microbatch (Action::layerwise).
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/Strategy.h"

using namespace sched;

Schedule sched::generateCombinedOneFOneB(const PipelineShape &shape) {
  Schedule schedule = emptySchedule(shape);
  std::vector<Action> &actions = schedule.ranks[0].actions;
  const int32_t m = shape.microbatches;
  actions.reserve(2 * m);
  actions.push_back(Action::compute(ActionKind::Forward, 0, 0));
  for (int32_t mb = 1; mb < m; ++mb) {
    Action forward = Action::compute(ActionKind::Forward, 0, mb);
    Action backward = Action::compute(ActionKind::Backward, 0, mb - 1);
    // Bundle ids only need to tell neighbouring overlaps apart.
    forward.bundle = backward.bundle = static_cast<uint32_t>(mb);
    forward.layerwise = backward.layerwise = true;
    actions.push_back(forward);
    actions.push_back(backward);
  }
  actions.push_back(Action::compute(ActionKind::Backward, 0, m - 1));
  return schedule;
}
