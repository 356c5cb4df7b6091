//===- StreamOrder.h - the order streams and events give a rank -*- C++ -*-===//
//
// Internal to lib/Verify. A rank runs its actions on streams: one stream's
// actions run in order, different streams concurrently unless an event
// orders them (an action's stream waits for the latest record of an event
// issued before it). This is the order the GPU keeps; the verifier checks
// that every dependency of the rank and every pair of operations on one
// communicator respect it (docs/verifier.md, "Streams and events").
//
//===----------------------------------------------------------------------===//

#ifndef LIB_VERIFY_STREAMORDER_H
#define LIB_VERIFY_STREAMORDER_H

#include "lib/Verify/WaitGraph.h"

namespace sched {

/// Happens-before of each rank's actions under its streams and events.
class StreamOrder {
public:
  explicit StreamOrder(const ScheduleIndex &index);

  /// Whether action `before` of `rank` is sure to complete before action
  /// `after` starts: one stream's order, chained through events.
  bool ordered(int32_t rank, int32_t before, int32_t after) const;

  /// Reports every dependency in `edges` (the wait graph's, and the ones
  /// program order implies) between two actions of one rank
  /// that the rank's streams and events do not order (`dependency`), and
  /// every two operations of one communicator on one rank that they do not
  /// order (`collective` or `transfer`). Returns false if it reported any.
  bool check(const WaitGraph &graph, ViolationSink &sink) const;

private:
  /// Per rank with more than one stream: the streams it uses (Action::stream
  /// values) and, per action, for each of them the last position of that
  /// stream that happens before the action (-1 for none), in one flat
  /// array of actions x streams.
  struct RankClocks {
    std::vector<uint16_t> streams;
    std::vector<int32_t> clocks;
  };

  void checkDependencies(const std::vector<WaitEdge> &edges,
                         ViolationSink &sink, bool &clean) const;
  void checkCommunicators(ViolationSink &sink, bool &clean) const;

  const ScheduleIndex &index;
  /// Indexed by rank; empty `streams` for a rank on one stream.
  std::vector<RankClocks> ranks;
};

} // namespace sched

#endif // LIB_VERIFY_STREAMORDER_H
