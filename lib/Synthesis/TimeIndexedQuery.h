//===- TimeIndexedQuery.h - a makespan query over whole time slots -*- C++
//-*-===//
//
// Where every duration and dependence latency of a pipeline problem is a
// whole multiple of one time unit, the earliest start times of any order
// are whole multiples too (sums of them), so some optimal schedule starts
// every operation on a slot of that unit, and "is there a schedule no
// longer than T?" is a question about slots: one Boolean per operation and
// slot of its window ("started by then"), the dependences and the
// microbatch order as implications between them, one operation at a time
// on a rank as an at-most-one per slot, and the memory of a rank after
// every slot as one pseudo-Boolean sum over the started operations, which
// holds for a rank with any number of stages (the order-literal encoding
// of ExactSolver.h needs a sum of if-then-elses per forward there, and
// the simplex). Z3 decides it with its SAT core and cardinality
// reasoning. A refuted T proves more than T: no schedule ends before the
// next slot.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SYNTHESIS_TIMEINDEXEDQUERY_H
#define LIB_SYNTHESIS_TIMEINDEXEDQUERY_H

#include "lib/Synthesis/Deadline.h"
#include "lib/Synthesis/PipelineProblem.h"
#include "lib/Synthesis/WindowBound.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sched {

/// The largest time unit of which every duration and latency of `problem`
/// is a whole multiple (to a relative 1e-9), the unit being 1/q of a whole
/// number for some q <= 1000; none when an operation takes no time (two
/// operations of a rank could then share a slot) or no such unit exists.
std::optional<double> commonTimeUnit(const PipelineProblem &problem);

/// The whole slots of `unit` a makespan of `makespan` leaves (a makespan
/// that is a whole number of slots but for the doubles' rounding is that
/// number).
int64_t horizonSlots(double makespan, double unit);

/// The first and last slot `op` may start on within `windows` under
/// `horizon` slots (last < first: none).
std::pair<int64_t, int64_t> slotWindow(const PipelineProblem &problem,
                                       const TimeWindows &windows, double unit,
                                       int64_t horizon, uint32_t op);

/// A precedence of one rank's relaxation: `to` starts `slots` or more after
/// `from` starts, both on the rank.
struct RankLag {
  uint32_t from, to;
  int64_t slots;
};

/// The precedences of `rank`'s relaxation: between two of its operations,
/// the longest path of the canonical precedences (LowerBound.h) through
/// operations of other ranks, in slots of `unit`, from the first's start to
/// the second's (a path through a third operation of the rank follows from
/// the two it splits into). std::nullopt once `deadline` has passed.
std::optional<std::vector<RankLag>>
computeRankLags(const PipelineProblem &problem, double unit, int32_t rank,
                const Deadline &deadline);

/// computeRankLags of each rank, computed once: the lags depend on the
/// problem and the unit only, not on the makespan or the windows a query
/// asks, so the exact solver's queries share them.
class RankLagCache {
public:
  RankLagCache(const PipelineProblem &problem, double unit)
      : problem(problem), unit(unit), lags(problem.getNumRanks()) {}

  double getUnit() const { return unit; }

  /// `rank`'s lags; nullptr when `deadline` passed before they were
  /// computed (they are computed again on the next call).
  const std::vector<RankLag> *lagsOf(int32_t rank, const Deadline &deadline);

private:
  const PipelineProblem &problem;
  double unit;
  std::vector<std::optional<std::vector<RankLag>>> lags;
};

/// What a time-indexed query answered.
struct TimeIndexedAnswer {
  enum class Kind { Sat, Unsat, Unknown } kind = Kind::Unknown;
  /// On Sat: a schedule no longer than the query's makespan (the model's
  /// order, timed by PipelineProblem::timeOrder).
  ProblemSolution found;
  /// On Unsat: the least makespan any schedule can have, the slot after
  /// the refuted one.
  double provedBound = 0;
  /// On Unknown: why ("too large", "timeout", Z3's reason).
  std::string reason;
  /// The slot Booleans of the encoding.
  size_t variables = 0;
};

/// Whether `problem` has a canonical schedule (each kind of a stage in
/// microbatch order) of makespan <= `makespan` whose operations start
/// within `windows` (narrowWindows at that makespan), on slots of `unit`
/// (commonTimeUnit), asked within `seconds` (building the encoding
/// included); Unknown, "too large", beyond `maxVariables` slot Booleans.
///
/// With `onlyRank` >= 0, asks a relaxation instead: only that rank's
/// operations run one at a time and within its memory, the others (and
/// their ranks' limits) are dropped, and two of the rank's operations keep
/// the longest path of the canonical precedences between them. Every
/// canonical schedule of makespan <= `makespan` within `windows` satisfies
/// it, so Unsat refutes the makespan as above; Sat says only that the
/// relaxation does not refute it (`found` stays empty). `lagCache`, when
/// given (of the same problem and unit), keeps the relaxation's lags
/// between queries.
TimeIndexedAnswer askTimeIndexed(const PipelineProblem &problem,
                                 const TimeWindows &windows, double unit,
                                 double makespan, double seconds,
                                 size_t maxVariables, int32_t onlyRank = -1,
                                 RankLagCache *lagCache = nullptr);

} // namespace sched

#endif // LIB_SYNTHESIS_TIMEINDEXEDQUERY_H
