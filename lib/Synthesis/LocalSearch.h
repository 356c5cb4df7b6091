//===- LocalSearch.h - swaps on a schedule's critical chain -----*- C++ -*-===//
//
// The list scheduler's local search: swap two adjacent operations of a rank
// that lie on a critical chain, the second waiting for the first (the job
// shop's N1 neighbourhood), while that shortens the step within memory. A
// swap is timed incrementally: only the operations whose start changes are
// re-timed, the tails (the longest path to the end) and each rank's memory
// along its order are kept up to date, so a move costs what it changes
// plus two scans of the start times, not a re-timing of the whole step.
// The moves, and so the answer, are those of re-timing every swap from
// scratch (PipelineProblem::timeOrder); the pieces that defines them are
// here for the tests that compare the two.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SYNTHESIS_LOCALSEARCH_H
#define LIB_SYNTHESIS_LOCALSEARCH_H

#include "lib/Synthesis/PipelineProblem.h"

#include <chrono>
#include <utility>
#include <vector>

namespace sched {

/// When the local search stops (besides when no swap improves).
struct LocalSearchLimits {
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::time_point::max();
  /// Most improving moves, most swaps timed (-1: no cap).
  int32_t maxMoves = -1;
  int32_t maxTrials = -1;
  /// Most work (-1: no cap): operations re-timed, tails recomputed and
  /// critical-chain steps walked, what a move costs on a large problem
  /// (about the operations after the swap plus those before it).
  int64_t maxWork = -1;
  /// Stop once the makespan reaches this (a lower bound).
  double target = 0;
};

struct LocalSearchStats {
  /// Swaps timed, and those kept.
  int32_t trials = 0;
  int32_t improvingMoves = 0;
  /// The work done, as LocalSearchLimits::maxWork counts it.
  int64_t work = 0;
};

/// Improves `solution` (a timed order: its starts are timeOrder's of its
/// order, and it is within memory) in place; `makespan` is its makespan,
/// updated. Each pass takes the pairs criticalSwapPairs gives, skips those
/// whose swapBound is not below the makespan, times the others in turn and
/// keeps the first that shortens the step within memory.
LocalSearchStats improveByLocalSearch(const PipelineProblem &problem,
                                      ProblemSolution &solution,
                                      double &makespan,
                                      const LocalSearchLimits &limits);

/// The pairs (rank, position of the first) of a critical chain of
/// `solution` whose second operation waits for the first on its rank, from
/// the end of the chain back: swapping such a pair is the move that can
/// shorten the chain.
std::vector<std::pair<int32_t, size_t>>
criticalSwapPairs(const PipelineProblem &problem,
                  const ProblemSolution &solution);

/// The longest path from each operation's start to the end of `solution`
/// (its duration, then its dependences with their latency and the next
/// operation on its rank).
std::vector<double> pathsToEnd(const PipelineProblem &problem,
                               const ProblemSolution &solution);

/// A lower bound on the makespan once operations `i` and `i + 1` of rank
/// `r` swap (Taillard's estimate for the job shop): infinity when the
/// second depends on the first.
double swapBound(const PipelineProblem &problem,
                 const ProblemSolution &solution, llvm::ArrayRef<double> toEnd,
                 int32_t r, size_t i);

} // namespace sched

#endif // LIB_SYNTHESIS_LOCALSEARCH_H
