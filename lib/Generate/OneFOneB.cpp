//===- OneFOneB.cpp - 1F1B (PipeDream-Flush) ------------------------------===//

#include "lib/Generate/Strategy.h"

#include <algorithm>

using namespace sched;

Schedule sched::generateOneFOneB(const PipelineShape &shape) {
  Schedule schedule = emptySchedule(shape);
  const int32_t m = shape.microbatches;
  for (int32_t r = 0; r < shape.pp; ++r) {
    std::vector<Action> &actions = schedule.ranks[r].actions;
    actions.reserve(2 * m);
    // Rank r runs P-1-r forwards ahead of its first backward (fewer when
    // there are fewer microbatches), then alternates.
    const int32_t warmup = std::min(shape.pp - 1 - r, m);
    for (int32_t mb = 0; mb < warmup; ++mb)
      actions.push_back(Action::compute(ActionKind::Forward, r, mb));
    for (int32_t mb = warmup; mb < m; ++mb) {
      actions.push_back(Action::compute(ActionKind::Forward, r, mb));
      actions.push_back(
          Action::compute(ActionKind::Backward, r, mb - warmup));
    }
    for (int32_t mb = m - warmup; mb < m; ++mb)
      actions.push_back(Action::compute(ActionKind::Backward, r, mb));
  }
  return schedule;
}
