//===- ScheduleIndex.h - where each action of a schedule sits ---*- C++ -*-===//
//
// Internal to lib/Verify. Indexes compute actions and transfers by
// (stage, microbatch), maps stages to ranks, and runs the structural
// checks (completeness, duplicates, placement, transfer matching,
// collective order) that need no search.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_VERIFY_SCHEDULEINDEX_H
#define LIB_VERIFY_SCHEDULEINDEX_H

#include "lib/Verify/Verifier.h"

#include "llvm/ADT/Twine.h"

namespace sched {

/// Collects violations, keeping the first kMaxViolations.
class ViolationSink {
public:
  static constexpr size_t kMaxViolations = 64;

  /// Adds a violation and returns it for notes, or null once full.
  Violation *add(ViolationKind kind, ActionRef at, const llvm::Twine &message);
  /// The same for a structural violation: what the schedule has against
  /// what the rule requires (see Violation::observed).
  Violation *add(ViolationKind kind, ActionRef at, const llvm::Twine &message,
                 int64_t observed, int64_t required);
  bool empty() const { return violations.empty() && suppressed == 0; }
  std::vector<Violation> take();

private:
  std::vector<Violation> violations;
  size_t suppressed = 0;
};

/// Whether the stage of collective `a` is a key the members must agree on:
/// NCCL and gloo match a collective by operation, count and order only,
/// but the stage decides the data of a gradient reduction (an
/// `after_backward` declaration could explain it) and of a bias update,
/// and names what a collective no declaration explains does.
bool collectiveStageIsKey(const Schedule &schedule, const Action &a);

/// A transfer's direction as the structural rules state it: 0 for an
/// activation, 1 for a gradient, plus 2 for a shape exchange.
int32_t transferDirection(const Action &a);

/// Where every compute action and transfer of a schedule sits.
class ScheduleIndex {
public:
  explicit ScheduleIndex(const Schedule &schedule);

  /// Runs the structural checks; returns false when the schedule is too
  /// broken to build a wait graph from (missing or misplaced work).
  bool check(ViolationSink &sink);

  const Schedule &schedule;
  const int32_t numStages;
  const int32_t numMicrobatches;
  /// True when the schedule holds transfers: cross-rank inputs must then
  /// travel by matching send/recv pairs.
  bool lowered = false;
  /// True when the schedule holds shape exchanges.
  bool shapes = false;
  /// The rank index holding each stage, or -1.
  std::vector<int32_t> stageRank;

  /// The compute action of `kind` for (stage, mb), or {-1, -1}.
  ActionRef compute(ActionKind kind, int32_t stage, int32_t mb) const;
  /// The send (or receive) of `gradient` direction at `stage` for `mb`:
  /// of its data, or with `shape` of its shape exchange.
  ActionRef transfer(ActionKind kind, bool gradient, int32_t stage, int32_t mb,
                     bool shape = false) const;
  /// The action `ref` points to.
  const Action &action(ActionRef ref) const {
    return schedule.ranks[ref.rank].actions[ref.index];
  }
  /// The input gradient of (stage, mb): its B, else its I.
  ActionRef inputGradient(int32_t stage, int32_t mb) const;
  /// The bytes a send or receive moves: its own `bytes`, else the `output`
  /// of the lower stage of the pair (what sched-insert-p2p puts there);
  /// -1 when neither is known. A shape exchange that states none moves
  /// kShapeExchangeBytes.
  int64_t transferBytes(const Action &transfer) const;

private:
  size_t slot(int32_t stage, int32_t mb) const {
    return static_cast<size_t>(stage) * numMicrobatches + mb;
  }
  std::vector<ActionRef> &table(ActionKind kind, bool gradient, bool shape);
  const std::vector<ActionRef> &table(ActionKind kind, bool gradient,
                                      bool shape) const;

  bool indexActions(ViolationSink &sink);
  void checkCompleteness(ViolationSink &sink);
  void checkTransfers(ViolationSink &sink);
  /// Pairs the sends of each rank to each peer with the peer's receives
  /// from it, in issue order, and checks that each pair agrees.
  void checkMessageOrder(ViolationSink &sink);
  /// Checks that the `k`-th send and receive of a channel agree.
  void checkPair(ActionRef send, ActionRef recv, size_t k, ViolationSink &sink);
  /// Checks that no data receive shares its p2p group with the shape
  /// exchange its buffer is allocated from.
  void checkShapeExchanges(ViolationSink &sink);
  void checkCollectives(ViolationSink &sink);

  /// F, B, I, W, then send/recv forward/backward of data, then of shapes.
  std::vector<ActionRef> tables[12];
};

} // namespace sched

#endif // LIB_VERIFY_SCHEDULEINDEX_H
