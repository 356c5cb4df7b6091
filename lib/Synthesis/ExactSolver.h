//===- ExactSolver.h - the exact solver of a pipeline problem ---*- C++ -*-===//
//
// Certifies a pipeline schedule's gap with Z3: the problem as linear real
// arithmetic (a start time per operation, dependences and the rank's
// one-at-a-time order as difference constraints, an order literal per pair
// of operations of one rank whose order the dependences leave open, the
// memory after each forward as a sum over those literals) and a search on
// the makespan from the fast solver's answer down: "is there a schedule
// no longer than T?", T = (1 - target gap) x the best makespan. A model is
// a better schedule; unsat raises the lower bound to T. Where the costs
// have a common unit, a query is asked over whole time slots instead
// (TimeIndexedQuery.h), and unsat raises the bound to T's next slot.
// Built with exceptions (Z3's C++ API throws); every z3::exception is
// caught here and ends the search with what it has.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SYNTHESIS_EXACTSOLVER_H
#define LIB_SYNTHESIS_EXACTSOLVER_H

#include "lib/Synthesis/PipelineProblem.h"

#include <string>

namespace sched {

struct ExactSolverOptions {
  /// Wall-clock budget of the whole search, in seconds.
  double timeLimitSeconds = 10;
  /// Stop once (makespan - bound) / makespan is at most this; 0 searches
  /// for a proof of optimality (up to a relative 1e-9: the schedules are
  /// timed in doubles).
  double targetGap = 0;
  /// Skip instances with more order literals than this (the encoding
  /// would not be solved in time); the answer keeps the incumbent.
  size_t maxOrderLiterals = 200000;
  /// Start each query from windows narrowed and shaved by propagation
  /// (WindowBound.h), which refutes many at once; otherwise from the
  /// canonical heads and tails (Z3 alone, as the tests compare).
  bool narrowWindows = true;
  /// Where every duration and latency is a whole multiple of one unit,
  /// ask each query over whole time slots (TimeIndexedQuery.h), when its
  /// windows leave at most `maxSlotVariables` slot Booleans; otherwise, or
  /// when false, by order literals.
  bool timeIndexed = true;
  size_t maxSlotVariables = 400000;
  /// Before a time-indexed query, ask its one-rank relaxations (each rank
  /// alone as one machine with its memory, the others as the longest paths
  /// between its operations; TimeIndexedQuery.h), which can only refute.
  bool rankRelaxations = true;
  /// Where the problem has a unit: once a bisecting query runs out of its
  /// time (the bound side is stuck), look for shorter schedules near the
  /// incumbent, each operation within this many slots of where it starts
  /// (SlotNeighbourhood.h), for up to 90% of the time left (what it does
  /// not use goes back to the bisection); 0: not.
  int64_t neighbourhoodSlots = 4;
};

struct ExactSolverResult {
  /// The best schedule: the incumbent or one Z3 found.
  ProblemSolution solution;
  double makespan = 0;
  /// The best proved lower bound (the given one, or a T Z3 refuted).
  double lowerBound = 0;
  /// Z3 proved that no schedule is shorter than `makespan`.
  bool optimal = false;
  int32_t queries = 0;
  /// Better schedules found (near the incumbent too, neighbourhoodSlots).
  int32_t improvements = 0;
  /// The order literals of the last encoding.
  size_t orderLiterals = 0;
  /// Why the search stopped: "optimal", "gap reached", "time limit",
  /// "too large" (more order literals than allowed) or a Z3 error.
  std::string stopReason;
  double seconds = 0;
};

/// Searches for a schedule shorter than `incumbent` (a verified solution of
/// `problem`) and for a proof that none is, starting from the bound
/// `lowerBound`.
ExactSolverResult solveExactly(const PipelineProblem &problem,
                               const ProblemSolution &incumbent,
                               double lowerBound,
                               const ExactSolverOptions &options);

} // namespace sched

#endif // LIB_SYNTHESIS_EXACTSOLVER_H
