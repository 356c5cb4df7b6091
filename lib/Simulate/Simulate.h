//===- Simulate.h - list simulation of a schedule ---------------*- C++ -*-===//
//
// Runs a schedule against a cost model: each rank executes its actions in
// order, an action starts when its rank is free and its inputs have
// arrived. Gives start/end times, makespan, bubble and peak activations.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SIMULATE_SIMULATE_H
#define LIB_SIMULATE_SIMULATE_H

#include "lib/Schedule/Schedule.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace sched {

/// How long things take.
struct SimulationOptions {
  /// Every F, B, I and W takes exactly one time step, whatever the stage
  /// costs say (the classic pipeline picture).
  bool unitSteps = false;
  /// Time of one point-to-point transfer between ranks.
  double comm = 0;
  /// Per rank r, the time of a transfer between rank r and rank r + 1
  /// (the last rank's: to rank 0), either way, in place of `comm` on that
  /// boundary: a pipeline group that spans NVLink domains crosses the
  /// slower link only at the boundaries between them
  /// (CostModel::p2pBoundaryTimes). Used when it has one entry per rank
  /// and the schedule's declared transfer time is not taken.
  const std::vector<double> *boundaryComm = nullptr;
  /// Take the schedule's declared transfer time (Schedule::transferTime),
  /// where it declares one, instead of `comm`: a written plan carries the
  /// time its planner simulated transfers with.
  bool declaredTransfers = true;
  /// A transfer holds its sender until it completes (`comm` after the
  /// send), as Megatron-Core's non-interleaved 1F1B waits on its combined
  /// send/receive requests before the next computation; otherwise sends
  /// are eager and only the receiver waits.
  bool blockingSends = false;
  /// Part of a stage-microbatch activation that survives I until W when
  /// stages declare no sizes.
  double weightGradFraction = 0.5;
  /// Fill Timeline::liveActivations (8 bytes per action).
  bool recordMemory = false;
  /// Only the makespan, busy time and bubble ratio: Timeline::times and the
  /// peak activations are left empty (the planner, which measures memory
  /// on its own walk, simulates orders of up to 2^21 actions 150 times a
  /// search and reads only these; the times took 16 bytes per action
  /// written, the peaks a second pass).
  bool summaryOnly = false;
  /// Stage costs to run with instead of the schedule's own
  /// (Schedule::stageCosts), one per stage: the planner simulates one cached
  /// order under each candidate's costs without copying it.
  const std::vector<StageCost> *stageCosts = nullptr;
};

/// When one action ran.
struct ActionTime {
  double start = 0;
  double end = 0;
};

/// The outcome of a simulation.
struct Timeline {
  /// Per rank, per action (in program order); empty with
  /// SimulationOptions::summaryOnly.
  std::vector<std::vector<ActionTime>> times;
  double makespan = 0;
  /// Per rank: time spent computing, and (makespan - busy) / makespan.
  std::vector<double> busy;
  std::vector<double> bubbleRatio;
  /// Per rank: the most stage-microbatch activations alive at once (empty
  /// with SimulationOptions::summaryOnly).
  std::vector<double> peakActivations;
  /// Per rank: the same in bytes, when stages declare sizes.
  std::vector<int64_t> peakActivationBytes;
  /// Per rank, per action: the stage-microbatch activations alive after
  /// it (memory over time, for pictures); only with
  /// SimulationOptions::recordMemory.
  std::vector<std::vector<double>> liveActivations;
};

/// Why a schedule that runs to the end has no report: its numbers leave the
/// range they are reported in (a time beyond the largest finite double, a
/// peak beyond 2^63 - 1 bytes). The costs or sizes are out of range, not
/// the order of the actions.
class SimulationRangeError : public llvm::ErrorInfo<SimulationRangeError> {
public:
  static char ID;

  explicit SimulationRangeError(std::string message)
      : message(std::move(message)) {}

  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

  std::string message;
};

/// A time, ratio or count as the simulation reports print it, without
/// trailing zeros: 33, 0.272727.
std::string formatNumber(double value);

/// Simulates `schedule`. Fails, naming the stuck ranks and what they wait
/// for, when the schedule cannot run to the end, and with a
/// SimulationRangeError when its times or byte counts do not fit.
llvm::Expected<Timeline> simulate(const Schedule &schedule,
                                  const SimulationOptions &options);

} // namespace sched

#endif // LIB_SIMULATE_SIMULATE_H
