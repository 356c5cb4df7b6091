//===- NoPipeline.cpp - one stage, gradient accumulation ------------------===//
//
// No pipeline parallelism: the whole model is one stage on one rank and the
// step accumulates gradients over the microbatches, each forward followed
// by its backward. Where data-parallel bandwidth is plentiful this is the
// schedule to beat: no bubble, one activation alive.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/Strategy.h"

using namespace sched;

Schedule sched::generateNoPipeline(const PipelineShape &shape) {
  Schedule schedule = emptySchedule(shape);
  std::vector<Action> &actions = schedule.ranks[0].actions;
  actions.reserve(2 * shape.microbatches);
  for (int32_t mb = 0; mb < shape.microbatches; ++mb) {
    actions.push_back(Action::compute(ActionKind::Forward, 0, mb));
    actions.push_back(Action::compute(ActionKind::Backward, 0, mb));
  }
  return schedule;
}
