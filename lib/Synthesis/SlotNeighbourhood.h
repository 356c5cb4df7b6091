//===- SlotNeighbourhood.h - slot queries near a schedule -------*- C++ -*-===//
//
// A large-neighbourhood search over whole time slots: "is there a schedule
// one slot shorter than the incumbent whose every operation starts within
// a band of slots around where the incumbent starts it (its start scaled
// to the shorter makespan)?" is the time-indexed query (TimeIndexedQuery.h)
// with each narrowed window cut to that band. The band leaves a few slots
// per operation where the whole query leaves tens, so Z3 answers where it
// does not on the whole query, and a schedule one slot shorter usually
// differs from the incumbent by a few slots everywhere (the ramp up and the
// ramp down move, the steady state shifts). A Sat answer is a schedule
// (timed by its order and verified); an Unsat one proves nothing, since
// the band cut schedules off, so no bound is taken from it.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SYNTHESIS_SLOTNEIGHBOURHOOD_H
#define LIB_SYNTHESIS_SLOTNEIGHBOURHOOD_H

#include "lib/Synthesis/LowerBound.h"
#include "lib/Synthesis/PipelineProblem.h"
#include "lib/Synthesis/WindowBound.h"

#include <optional>
#include <string>

namespace sched {

struct SlotNeighbourhoodResult {
  /// The best schedule: the incumbent or a shorter one found.
  ProblemSolution solution;
  double makespan = 0;
  int32_t queries = 0;
  int32_t improvements = 0;
  /// Why it stopped: "time limit", "bound" (the next makespan would be
  /// below `lowerBound`), "gap reached", "no band schedule" (Unsat within
  /// the band) or the query's reason.
  std::string stopReason;
};

/// `windows` at `makespan` cut to `bandSlots` slots of `unit` either side
/// of `incumbent`'s start times (of makespan `incumbentMakespan`) scaled to
/// `makespan`; std::nullopt when a window and its band do not meet.
std::optional<TimeWindows> bandAround(const PipelineProblem &problem,
                                      const TimeWindows &windows,
                                      const ProblemSolution &incumbent,
                                      double incumbentMakespan, double makespan,
                                      double unit, int64_t bandSlots);

/// Asks, one slot at a time below `incumbent`'s makespan and no lower than
/// `lowerBound`, for a schedule within the band of the best one so far,
/// within `seconds` in all, and stops once the best one is within
/// `targetGap` of `lowerBound` ("gap reached"); every schedule kept passes
/// PipelineProblem::verify. `canonical` are the canonical model's paths
/// (computePathLengths), `unit` the problem's (commonTimeUnit).
SlotNeighbourhoodResult
improveInSlotBands(const PipelineProblem &problem, const PathLengths &canonical,
                   double unit, const ProblemSolution &incumbent,
                   double lowerBound, double seconds, int64_t bandSlots,
                   size_t maxVariables, double targetGap = 0);

} // namespace sched

#endif // LIB_SYNTHESIS_SLOTNEIGHBOURHOOD_H
