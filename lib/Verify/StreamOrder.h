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
#include "lib/Verify/Z3/Z3Prover.h"

#include <optional>
#include <string>

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
  /// Keeps, per rank, the dependencies it checks for rule().
  bool check(const WaitGraph &graph, ViolationSink &sink);

  /// The rule check() decided on `rank`, for the Z3 encoding: its actions
  /// up to the last one the rule reads, each with its stream, events,
  /// communicator and bundle, and the dependencies between them that
  /// check() holds to the streams' order. The full form up to `limit`
  /// constants, past it the sparse form (StreamRule::sparse) up to
  /// `sparseLimit`. None for a rank on one stream without events (its
  /// order is program order, which the encoding states), or, with
  /// `whyNot` set, for a rule past both.
  std::optional<StreamRule>
  rule(int32_t rank, std::string &whyNot, size_t limit = kMaxStreamCells,
       size_t sparseLimit = kMaxSparseStreamCells) const;

  /// Whether `rank` runs on several streams or uses events.
  bool hasRule(int32_t rank) const { return !ranks[rank].streams.empty(); }

  /// The most constants a stream rule states (actions times their clocks
  /// and chains) where Z3 solves it (a violation's refutation, the SMT-LIB
  /// file, --proof=search), past which it is not stated (docs/limits.md).
  static constexpr size_t kMaxStreamCells = 20000;
  /// The same for the sparse form, linear in the program, past
  /// kMaxStreamCells (docs/limits.md).
  static constexpr size_t kMaxSparseStreamCells = 100000;
  /// The same where Z3 evaluates it on the schedule's values (the witness
  /// check of a verified schedule, linear in the rule's links).
  static constexpr size_t kMaxGroundStreamCells = 1000000;

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
                         ViolationSink &sink, bool &clean);
  void checkCommunicators(ViolationSink &sink, bool &clean) const;

  const ScheduleIndex &index;
  /// Indexed by rank; empty `streams` for a rank on one stream.
  std::vector<RankClocks> ranks;
  /// Indexed by rank: the (earlier, later) action pairs of each dependency
  /// check() held to the streams' order.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> dependencies;
};

} // namespace sched

#endif // LIB_VERIFY_STREAMORDER_H
