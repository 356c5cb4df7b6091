//===- LoopedBFS.cpp - breadth-first looped pipeline ----------------------===//
//
// Looped BFS (Lamy-Poirier 2023, "Breadth-First Pipeline Parallelism"):
// rank r holds chunks c = 0..v-1, chunk c being stage c*P + r, and runs
// every microbatch of a chunk before the next chunk: all forwards chunk by
// chunk, then all backwards from the last chunk down.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/Strategy.h"

using namespace sched;

Schedule sched::generateLoopedBFS(const PipelineShape &shape) {
  Schedule schedule = emptySchedule(shape);
  const int32_t m = shape.microbatches;
  for (int32_t r = 0; r < shape.pp; ++r) {
    std::vector<Action> &actions = schedule.ranks[r].actions;
    actions.reserve(2 * shape.vpp * m);
    for (int32_t chunk = 0; chunk < shape.vpp; ++chunk)
      for (int32_t mb = 0; mb < m; ++mb)
        actions.push_back(
            Action::compute(ActionKind::Forward, chunk * shape.pp + r, mb));
    for (int32_t chunk = shape.vpp - 1; chunk >= 0; --chunk)
      for (int32_t mb = 0; mb < m; ++mb)
        actions.push_back(
            Action::compute(ActionKind::Backward, chunk * shape.pp + r, mb));
  }
  return schedule;
}
