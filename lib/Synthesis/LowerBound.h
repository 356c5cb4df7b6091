//===- LowerBound.h - lower bounds on a pipeline problem's makespan -*- C++ -*-===//
//
// Bounds every schedule of a PipelineProblem from below, so that a solver's
// answer carries its gap, (makespan - bound) / makespan: the critical path
// of one microbatch, each rank's work as a one-machine problem with heads
// and tails (Jackson's preemptive schedule), and the waits memory forces:
// a rank that cannot hold enough forwards to cover its first backward, and
// the round trips a microbatch makes before its memory is free again.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SYNTHESIS_LOWERBOUND_H
#define LIB_SYNTHESIS_LOWERBOUND_H

#include "lib/Synthesis/PipelineProblem.h"

#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace sched {

/// Earliest start (head) and the longest path after the end (tail) of each
/// operation, ignoring that a rank runs one operation at a time.
struct PathLengths {
  std::vector<double> head;
  std::vector<double> tail;
};

/// Which precedences path lengths follow.
enum class PathModel : uint8_t {
  /// The problem's dependences.
  Dependences,
  /// Those, plus what every schedule in canonical form obeys: each kind of
  /// a stage runs its microbatches in order (no schedule is lost,
  /// docs/synthesis.md), and memory forces round trips: a rank whose room
  /// holds K activations of stage s cannot run F(s, j + K) before I(s, j)
  /// (or B) has freed one, nor before W(s, j) when one activation and K
  /// weight-gradient residues do not fit. Where a rank holding one stage
  /// must also run the gradients that free that memory, a forward's head
  /// is at least when one machine can finish them (serial memory heads,
  /// docs/synthesis.md). Bounds computed on these hold for the optimum,
  /// since some optimal schedule is canonical.
  Canonical,
};

/// A precedence of a path model: `to` starts `latency` after `from` ends.
struct PathEdge {
  uint32_t to;
  double latency;
};

/// The precedences `model` states, by the operation they leave (acyclic:
/// every edge stays within a microbatch or goes to a later one).
std::vector<llvm::SmallVector<PathEdge, 4>>
computePrecedences(const PipelineProblem &problem, PathModel model);

/// The operations in an order that every edge of `out` follows (Kahn's;
/// `out` has no cycle). The rank relaxation's search orders its delays by
/// it too.
std::vector<uint32_t>
topologicalOrder(llvm::ArrayRef<llvm::SmallVector<PathEdge, 4>> out);

/// The heads and tails of `problem`'s operations under `model` (acyclic:
/// every edge stays within a microbatch or goes to a later one).
PathLengths computePathLengths(const PipelineProblem &problem,
                               PathModel model = PathModel::Dependences);

/// A lower bound on the makespan and where it comes from.
struct LowerBound {
  /// The largest of the bounds below.
  double value = 0;
  /// The longest dependence path (one microbatch through every stage and
  /// back).
  double criticalPath = 0;
  /// The longest path of the canonical model (PathModel::Canonical): the
  /// microbatches in order and the round trips memory forces.
  double memoryPath = 0;
  /// The largest one-machine bound of a rank: its operations with their
  /// canonical heads and tails, run preemptively, most urgent tail first.
  double rankWork = 0;
  /// The largest memory-forced wait: a rank runs only forwards before its
  /// first backward can start, no more of them than its memory holds, and
  /// all its other work after.
  double memoryWait = 0;
  /// The largest makespan that narrowed time windows refute
  /// (WindowBound.h), when the synthesizer computed it (0 otherwise); not
  /// part of `value`, which needs no schedule.
  double windows = 0;
  /// The rank of the rank bound that gives `value` (-1: the critical path).
  int32_t bindingRank = -1;
};

/// Bounds the makespan of every schedule of `problem`.
LowerBound computeLowerBound(const PipelineProblem &problem);

/// (makespan - bound) / makespan; 0 when the makespan is 0 and below 1e-9
/// (the rounding of times summed in doubles).
double relativeGap(double makespan, double bound);

} // namespace sched

#endif // LIB_SYNTHESIS_LOWERBOUND_H
