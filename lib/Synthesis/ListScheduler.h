//===- ListScheduler.h - the fast solver of a pipeline problem --*- C++ -*-===//
//
// List scheduling with priorities: ranks take the operation that can start
// first, input gradients before forwards before weight gradients, under
// several policies (when weight gradients run, how many microbatches may be
// in flight, whether a microbatch reserves its memory on every rank when it
// enters the pipeline), and the best schedule found is then improved by a
// local search that moves one operation at a time in a rank's order. With
// reservation a microbatch enters only when all its activations fit on
// every rank, so the search always finds a schedule when the limits are at
// least PipelineProblem::getSmallestFeasibleLimit.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SYNTHESIS_LISTSCHEDULER_H
#define LIB_SYNTHESIS_LISTSCHEDULER_H

#include "lib/Synthesis/PipelineProblem.h"

#include <string>
#include <utility>
#include <vector>

namespace sched {

/// When a list schedule runs weight gradients.
enum class WeightGradPolicy : uint8_t {
  /// Only when nothing else can start (they fill bubbles).
  Fill,
  /// Right after their input gradient (as a full backward would).
  Eager,
  /// To fill bubbles, and first when memory holds back a forward.
  MemoryFirst,
};

/// One list-scheduling policy.
struct ListPolicy {
  /// A microbatch enters (its first forward runs) only when its
  /// activations fit on every rank beside those of the microbatches in
  /// flight; otherwise a forward runs when it fits on its own rank.
  bool reserve = true;
  WeightGradPolicy weightGrad = WeightGradPolicy::Fill;
  /// At most this many microbatches between the first stage's forwards and
  /// its backwards (0: no cap); with a global-batch aux head, the stage
  /// above it (every microbatch is in flight below it at once).
  int32_t inFlightCap = 0;
  /// Among forwards ready together, the one with the longest path ahead
  /// (else the oldest microbatch).
  bool forwardByTail = true;
  /// A rank may wait for a more urgent operation that becomes ready
  /// before the first one it could start would end (Giffler and
  /// Thompson's active schedules); otherwise it never idles while an
  /// operation can start (a non-delay schedule).
  bool waitForUrgent = false;
  /// Nonzero: the seed of a random scaling (fixed per operation, within
  /// kUrgencyJitter) of the paths ahead that rank operations of one kind,
  /// for the restarts of solveWithListScheduling.
  uint32_t seed = 0;
};

/// Runs one policy; fails when it gets stuck (possible only without
/// reservation: every rank's memory full of microbatches that wait for
/// each other).
llvm::Expected<ProblemSolution> runListPolicy(const PipelineProblem &problem,
                                              const ListPolicy &policy);

struct ListSchedulerOptions {
  /// Wall-clock budget of the local search, in seconds.
  double searchSeconds = 1;
  /// Most improving moves of the local search (-1: no cap). A cap below
  /// what the time allows makes the answer independent of the machine's
  /// load, as the planner needs (it synthesizes a candidate again to
  /// prove and write it).
  int32_t maxMoves = -1;
  /// Most swaps the local search times, improving or not (-1: no cap);
  /// like maxMoves, a budget that does not depend on the load.
  int32_t maxTrials = -1;
  /// Most work of the local search (-1: no cap), in operations re-timed,
  /// tails recomputed and critical-chain steps walked
  /// (LocalSearchLimits::maxWork); like maxTrials, independent of the load,
  /// and what bounds the search's time on a large problem.
  int64_t maxWork = -1;
  /// Stop as soon as the makespan reaches this (a lower bound).
  double target = 0;
  /// List schedules run again with randomly scaled priorities (seeds 1 to
  /// this, each policy in turn; at most 2,500,000 operations scheduled in
  /// all, and within half of `searchSeconds`), before the local search. A seeded run ranks forwards and input gradients by
  /// their scaled paths ahead alone, not input gradients first.
  int32_t restarts = 0;
};

struct ListSchedulerResult {
  ProblemSolution solution;
  double makespan = 0;
  /// Where the schedule the local search improved came from: "list" (a
  /// policy) or the strategy whose order seeded it ("zb-h1").
  std::string origin;
  /// Policies run (restarts included), and moves of the local search that
  /// improved.
  int32_t policies = 0;
  int32_t improvingMoves = 0;
  /// Swaps the local search timed, and its work (maxWork's units).
  int32_t trials = 0;
  int64_t searchWork = 0;
};

/// The orders of the zoo strategies that apply to `problem`'s shape and
/// placement and fit its memory, timed by the problem, by strategy name. A
/// full backward becomes I then W when the problem splits it; strategies
/// that overlap a forward with a backward (DualPipe, combined 1F1B) or
/// split a backward the problem does not are left out.
std::vector<std::pair<std::string, ProblemSolution>>
strategySeeds(const PipelineProblem &problem);

/// The best schedule of every policy and of the strategies that fit
/// (strategySeeds), improved by local search: never slower than a zoo
/// strategy that fits the same memory. Fails only
/// when no schedule exists (checkMemory fails).
llvm::Expected<ListSchedulerResult>
solveWithListScheduling(const PipelineProblem &problem,
                        const ListSchedulerOptions &options);

} // namespace sched

#endif // LIB_SYNTHESIS_LISTSCHEDULER_H
