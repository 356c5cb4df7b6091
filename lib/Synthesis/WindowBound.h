//===- WindowBound.h - time windows narrowed by propagation -----*- C++ -*-===//
//
// A destructive lower bound: assume every operation ends by a makespan T,
// give each its window [head, T - tail] of the canonical model, and narrow
// the windows by rules every canonical schedule of makespan <= T obeys
// (the precedences, the pairs of a rank that fit one way only, Carlier and
// Pinson's edge finding on each rank, the memory clauses of a rank that
// holds one stage), the ranks coupled through the precedences, until
// nothing changes. A window that empties proves that no schedule is that
// short; a bisection on T then gives the bound. The exact solver starts
// each query from the narrowed windows (fewer open pairs for Z3).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SYNTHESIS_WINDOWBOUND_H
#define LIB_SYNTHESIS_WINDOWBOUND_H

#include "lib/Synthesis/LowerBound.h"
#include "lib/Synthesis/PipelineProblem.h"

#include <optional>
#include <vector>

namespace sched {

/// "Forward `forward` runs after `input` or after `weight`", one of the
/// clauses that state exactly the memory limit of a rank that holds one
/// stage (each kind in microbatch order: docs/synthesis.md); without a
/// `weight`, after `input`.
struct MemoryClause {
  uint32_t forward = 0;
  uint32_t input = 0;
  std::optional<uint32_t> weight;
};

/// The memory clauses of rank `rank`: none when it has no limit or its
/// limit holds every activation at once; std::nullopt when its limit needs
/// sums instead (it holds several stages, or a backward allocates).
std::optional<std::vector<MemoryClause>>
oneStageMemoryClauses(const PipelineProblem &problem, int32_t rank);

/// Each operation's window under a makespan: it starts no earlier than
/// `head` and ends no later than `end`.
struct TimeWindows {
  std::vector<double> head;
  std::vector<double> end;
};

/// Narrows the canonical windows of `problem` under makespan `makespan`
/// (`canonical` are computePathLengths(problem, PathModel::Canonical)),
/// then shaves them for up to `shavingSeconds`: a half of a window whose
/// every start the rules refute is cut off. The rules stop after `seconds`
/// in all (narrowing less; 1e9 or more: no limit). std::nullopt when a
/// window empties, a proof that every schedule is longer than `makespan`.
std::optional<TimeWindows> narrowWindows(const PipelineProblem &problem,
                                         const PathLengths &canonical,
                                         double makespan, double seconds = 1e9,
                                         double shavingSeconds = 0);

/// The largest makespan in [lower, upper] that narrowWindows refutes, by
/// bisection to a relative 2e-10 within `seconds` (without shaving) (`lower`
/// when it refutes none): a lower bound on every schedule's makespan when
/// `lower` is one. `upper` is the makespan of a schedule.
double windowBound(const PipelineProblem &problem, double lower, double upper,
                   double seconds);

} // namespace sched

#endif // LIB_SYNTHESIS_WINDOWBOUND_H
