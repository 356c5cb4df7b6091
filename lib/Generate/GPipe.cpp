//===- GPipe.cpp - all forwards, then all backwards -----------------------===//

#include "lib/Generate/Strategy.h"

using namespace sched;

Schedule sched::generateGPipe(const PipelineShape &shape) {
  Schedule schedule = emptySchedule(shape);
  const int32_t m = shape.microbatches;
  for (int32_t r = 0; r < shape.pp; ++r) {
    std::vector<Action> &actions = schedule.ranks[r].actions;
    actions.reserve(2 * m);
    for (int32_t mb = 0; mb < m; ++mb)
      actions.push_back(Action::compute(ActionKind::Forward, r, mb));
    for (int32_t mb = 0; mb < m; ++mb)
      actions.push_back(Action::compute(ActionKind::Backward, r, mb));
  }
  return schedule;
}

