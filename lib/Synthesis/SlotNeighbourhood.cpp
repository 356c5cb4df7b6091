//===- SlotNeighbourhood.cpp - time-indexed queries near a schedule -------===//

#include "lib/Synthesis/SlotNeighbourhood.h"
#include "lib/Synthesis/Deadline.h"
#include "lib/Synthesis/TimeIndexedQuery.h"

#include <algorithm>
#include <cmath>

using namespace sched;

/// The share of a neighbourhood query's time that narrowing its windows
/// may take.
static constexpr double kNarrowingShare = 0.25;

std::optional<TimeWindows>
sched::bandAround(const PipelineProblem &problem, const TimeWindows &windows,
                  const ProblemSolution &incumbent, double incumbentMakespan,
                  double makespan, double unit, int64_t bandSlots) {
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  TimeWindows band = windows;
  const double scale = makespan / incumbentMakespan;
  for (uint32_t op = 0; op < ops.size(); ++op) {
    const double centre = incumbent.start[op] * scale / unit;
    const double first = (std::floor(centre) - double(bandSlots)) * unit;
    const double last = (std::ceil(centre) + double(bandSlots)) * unit;
    band.head[op] = std::max(band.head[op], first);
    band.end[op] = std::min(band.end[op], last + ops[op].duration);
    if (band.head[op] + ops[op].duration >
        band.end[op] + 1e-9 * std::max(1.0, band.end[op]))
      return std::nullopt;
  }
  return band;
}

SlotNeighbourhoodResult sched::improveInSlotBands(
    const PipelineProblem &problem, const PathLengths &canonical, double unit,
    const ProblemSolution &incumbent, double lowerBound, double seconds,
    int64_t bandSlots, size_t maxVariables, double targetGap) {
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  const Deadline deadline(seconds);
  SlotNeighbourhoodResult result;
  result.solution = incumbent;
  result.makespan = incumbent.makespan(ops);
  // With a target, the largest makespan within it of the bound is asked
  // first, in one step, its band widened by the slots it skips, for a
  // third of the time; then (or where that fails) one slot at a time.
  bool jump = targetGap > 0;
  while (true) {
    if (targetGap > 0 &&
        relativeGap(result.makespan, lowerBound) <= targetGap) {
      result.stopReason = "gap reached";
      break;
    }
    // One slot below the best schedule (whose times are whole slots: the
    // earliest times of an order, sums of durations and latencies).
    const int64_t next = horizonSlots(result.makespan, unit) - 1;
    int64_t goalSlots = next, band = bandSlots;
    double mine = deadline.secondsLeft();
    if (jump) {
      jump = false;
      const int64_t target = horizonSlots(lowerBound / (1 - targetGap), unit);
      if (target < next && double(target) * unit >= lowerBound) {
        goalSlots = target;
        band = bandSlots + (next - target);
        mine /= 3;
      }
    }
    const bool jumping = goalSlots < next;
    const double goal = double(goalSlots) * unit;
    if (goal < lowerBound - 1e-9 * std::max(1.0, lowerBound)) {
      result.stopReason = "bound";
      break;
    }
    if (deadline.passed()) {
      result.stopReason = "time limit";
      break;
    }
    const Deadline query(mine);
    const std::optional<TimeWindows> windows = narrowWindows(
        problem, canonical, goal, kNarrowingShare * query.secondsLeft());
    // Narrowed windows that empty refute the goal for every schedule; the
    // exact solver proves that on its own, this only stops.
    if (!windows && jumping)
      continue;
    if (!windows) {
      result.stopReason = "no band schedule";
      break;
    }
    const std::optional<TimeWindows> bandWindows = bandAround(
        problem, *windows, result.solution, result.makespan, goal, unit, band);
    if (!bandWindows) {
      if (jumping)
        continue;
      result.stopReason = "no band schedule";
      break;
    }
    ++result.queries;
    TimeIndexedAnswer answer = askTimeIndexed(
        problem, *bandWindows, unit, goal, query.secondsLeft(), maxVariables);
    if (answer.kind != TimeIndexedAnswer::Kind::Sat && jumping)
      continue;
    if (answer.kind == TimeIndexedAnswer::Kind::Unsat) {
      result.stopReason = "no band schedule";
      break;
    }
    if (answer.kind == TimeIndexedAnswer::Kind::Unknown) {
      result.stopReason = answer.reason;
      break;
    }
    const double makespan = answer.found.makespan(ops);
    if (llvm::Error error = problem.verify(answer.found)) {
      result.stopReason = "a band schedule does not verify: " +
                          llvm::toString(std::move(error));
      break;
    }
    if (makespan >= result.makespan * (1 - 1e-9)) {
      result.stopReason = "a band schedule is no shorter when timed";
      break;
    }
    result.solution = std::move(answer.found);
    result.makespan = makespan;
    ++result.improvements;
  }
  return result;
}
