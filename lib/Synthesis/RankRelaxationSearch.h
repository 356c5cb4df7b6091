//===- RankRelaxationSearch.h - one rank's relaxation by search -*- C++ -*-===//
//
// One rank's relaxation of a time-indexed query (TimeIndexedQuery.h, with
// onlyRank) is a one-machine problem: the rank's operations, each with its
// window of slots, one at a time, within the rank's memory, with the
// longest paths through the other ranks as delays between them. Z3 takes
// minutes on it where the rank has a hundred operations; this decides it
// by a depth-first search instead. Each kind of a stage is a chain in
// microbatch order (the canonical model), so the next operation is the
// head of one of the rank's few chains, and a sequence timed earliest is
// feasible whenever any timing of it is: the search enumerates sequences.
// A node is cut when an operation's earliest start passes its window
// (raised, under a memory limit, by the gated release dates: the k-th
// allocating operation from here waits for k - 1 others and the frees
// that make room, docs/synthesis.md), when Jackson's preemptive schedule
// (most urgent deadline first, from the earliest starts) misses a
// deadline, or when a state already failed: the
// operations done, the machine's free slot and what the done operations
// still delay is all the rest depends on.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SYNTHESIS_RANKRELAXATIONSEARCH_H
#define LIB_SYNTHESIS_RANKRELAXATIONSEARCH_H

#include "lib/Synthesis/TimeIndexedQuery.h"

namespace sched {

/// Whether `rank`'s relaxation of "a canonical schedule of makespan <=
/// `makespan` within `windows`, on slots of `unit`" has a solution, within
/// `seconds`: Unsat refutes the makespan for every schedule (and proves
/// the next slot, `provedBound`), as askTimeIndexed with onlyRank does;
/// Sat proves nothing (`found` stays empty); Unknown, "timeout", when the
/// search ran out of time. `guide`, the rank's operations in some order
/// (a schedule's), is the order the search tries first: a relaxation that
/// a schedule nearly satisfies is then satisfied at once. `lagCache`, when
/// given (of the same problem and unit), keeps the relaxation's lags
/// between calls.
TimeIndexedAnswer searchRankRelaxation(const PipelineProblem &problem,
                                       const TimeWindows &windows, double unit,
                                       double makespan, double seconds,
                                       int32_t rank,
                                       llvm::ArrayRef<uint32_t> guide = {},
                                       RankLagCache *lagCache = nullptr);

} // namespace sched

#endif // LIB_SYNTHESIS_RANKRELAXATIONSEARCH_H
