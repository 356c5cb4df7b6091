//===- SimulateComputesTest.cpp - the simulator's computes-only path ------===//
//
// A schedule of computes only (the planner's orders) runs through the
// simulator's direct path (ListSimulator::advanceComputes); the same
// schedule with an optimizer step appended to each rank (no time, no input)
// runs through the general one. Both must give the same times bit for bit,
// for every strategy, under uneven costs, transfer times and blocking
// sends, and the same error for a schedule that cannot run to the end;
// SimulationOptions::summaryOnly must give the same makespan and busy time.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/Strategy.h"
#include "lib/Simulate/Simulate.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <random>

using namespace sched;

namespace {

/// The schedule with an optimizer step at the end of each rank: not
/// computes only, so it takes the general path.
Schedule withOptimizerSteps(Schedule schedule) {
  for (RankProgram &rank : schedule.ranks) {
    Action step;
    step.kind = ActionKind::OptimizerStep;
    rank.actions.push_back(step);
  }
  return schedule;
}

/// Uneven costs whose sums round (tenths and thirds, not binary fractions).
std::vector<StageCost> unevenCosts(int32_t stages, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> spread(0.1, 3.0);
  std::vector<StageCost> costs(static_cast<size_t>(stages));
  for (StageCost &cost : costs) {
    cost.forward = spread(random) / 3;
    cost.backwardInput = spread(random) / 7;
    cost.backwardWeight = spread(random) / 10;
  }
  return costs;
}

void expectSameTimes(const Schedule &schedule, const SimulationOptions &options,
                     const std::string &what) {
  llvm::Expected<Timeline> direct = simulate(schedule, options);
  llvm::Expected<Timeline> general =
      simulate(withOptimizerSteps(schedule), options);
  ASSERT_TRUE(static_cast<bool>(direct))
      << what << ": " << llvm::toString(direct.takeError());
  ASSERT_TRUE(static_cast<bool>(general))
      << what << ": " << llvm::toString(general.takeError());
  EXPECT_EQ(direct->makespan, general->makespan) << what;
  EXPECT_EQ(direct->busy, general->busy) << what;
  EXPECT_EQ(direct->peakActivations, general->peakActivations) << what;
  ASSERT_EQ(direct->times.size(), general->times.size()) << what;
  for (size_t r = 0; r < direct->times.size(); ++r)
    for (size_t i = 0; i < direct->times[r].size(); ++i) {
      ASSERT_EQ(direct->times[r][i].start, general->times[r][i].start)
          << what << ": rank " << r << " action " << i;
      ASSERT_EQ(direct->times[r][i].end, general->times[r][i].end)
          << what << ": rank " << r << " action " << i;
    }
  SimulationOptions summary = options;
  summary.summaryOnly = true;
  llvm::Expected<Timeline> brief = simulate(schedule, summary);
  ASSERT_TRUE(static_cast<bool>(brief))
      << what << ": " << llvm::toString(brief.takeError());
  EXPECT_EQ(brief->makespan, direct->makespan) << what;
  EXPECT_EQ(brief->busy, direct->busy) << what;
  EXPECT_EQ(brief->bubbleRatio, direct->bubbleRatio) << what;
  EXPECT_TRUE(brief->times.empty()) << what;
}

TEST(SimulateComputes, EveryStrategyRunsAsOnTheGeneralPath) {
  size_t compared = 0;
  for (Strategy strategy : allStrategies())
    for (int32_t pp : {1, 2, 4})
      for (int32_t vpp : {1, 2})
        for (int32_t microbatches : {8, 12}) {
          PipelineShape shape;
          shape.pp = pp;
          shape.vpp = vpp;
          shape.microbatches = microbatches;
          if (llvm::Error error = checkPipelineShape(strategy, shape)) {
            llvm::consumeError(std::move(error));
            continue;
          }
          llvm::Expected<Schedule> order = generateSchedule(strategy, shape);
          ASSERT_TRUE(static_cast<bool>(order))
              << llvm::toString(order.takeError());
          const std::vector<StageCost> costs =
              unevenCosts(order->numStages, static_cast<uint32_t>(compared));
          // Per-boundary transfer times (a pipeline spanning domains):
          // the last boundary, back to rank 0, the slowest.
          std::vector<double> boundaries;
          for (int32_t r = 0; r < pp; ++r)
            boundaries.push_back(0.11 * (r + 1));
          for (double comm : {0.0, 0.37})
            for (bool blocking : {false, true})
              for (bool perBoundary : {false, true}) {
                SimulationOptions options;
                options.stageCosts = &costs;
                options.comm = comm;
                options.blockingSends = blocking;
                if (perBoundary)
                  options.boundaryComm = &boundaries;
                expectSameTimes(*order, options,
                                strategyName(strategy).str() +
                                    " pp=" + std::to_string(pp) +
                                    " vpp=" + std::to_string(vpp) +
                                    " m=" + std::to_string(microbatches) +
                                    " comm=" + std::to_string(comm) +
                                    (blocking ? " blocking" : "") +
                                    (perBoundary ? " per-boundary" : ""));
              }
          ++compared;
        }
  // Each strategy at some shape.
  EXPECT_GE(compared, allStrategies().size());
}

TEST(SimulateComputes, AStuckScheduleIsReportedAsOnTheGeneralPath) {
  PipelineShape shape;
  shape.pp = 2;
  shape.microbatches = 4;
  llvm::Expected<Schedule> order = generateSchedule(Strategy::OneFOneB, shape);
  ASSERT_TRUE(static_cast<bool>(order)) << llvm::toString(order.takeError());
  // The last rank's backward of microbatch 0 moved before its forward.
  std::vector<Action> &last = order->ranks.back().actions;
  auto backward = std::find_if(last.begin(), last.end(), [](const Action &a) {
    return a.kind == ActionKind::Backward;
  });
  ASSERT_NE(backward, last.end());
  std::rotate(last.begin(), backward, backward + 1);
  llvm::Expected<Timeline> direct = simulate(*order, SimulationOptions());
  llvm::Expected<Timeline> general =
      simulate(withOptimizerSteps(*order), SimulationOptions());
  ASSERT_FALSE(static_cast<bool>(direct));
  ASSERT_FALSE(static_cast<bool>(general));
  const std::string directError = llvm::toString(direct.takeError());
  EXPECT_EQ(directError, llvm::toString(general.takeError()));
  EXPECT_NE(directError.find("rank 1 is stuck at action 0"), std::string::npos)
      << directError;
}

/// One microbatch through four stages (GPipe): its forward crosses
/// boundaries 0, 1 and 2, its backward the same three back, each at its
/// own time; the wrap-around boundary 3 (last rank back to rank 0) is never
/// used. So the makespan is the computes plus twice (1 + 5 + 2), where one
/// transfer time for every boundary would add six of it.
TEST(SimulateComputes, EachBoundaryTakesItsOwnTransferTime) {
  PipelineShape shape;
  shape.pp = 4;
  shape.microbatches = 1;
  llvm::Expected<Schedule> order = generateSchedule(Strategy::GPipe, shape);
  ASSERT_TRUE(static_cast<bool>(order)) << llvm::toString(order.takeError());
  std::vector<StageCost> costs(4);
  for (StageCost &cost : costs) {
    cost.forward = 1;
    cost.backwardInput = 2;
    cost.backwardWeight = 0;
  }
  SimulationOptions none;
  none.stageCosts = &costs;
  llvm::Expected<Timeline> computes = simulate(*order, none);
  ASSERT_TRUE(static_cast<bool>(computes))
      << llvm::toString(computes.takeError());
  const std::vector<double> boundaries = {1, 5, 2, 9};
  SimulationOptions perBoundary = none;
  perBoundary.comm = 0.5;
  perBoundary.boundaryComm = &boundaries;
  llvm::Expected<Timeline> crossing = simulate(*order, perBoundary);
  ASSERT_TRUE(static_cast<bool>(crossing))
      << llvm::toString(crossing.takeError());
  EXPECT_DOUBLE_EQ(crossing->makespan, computes->makespan + 2 * (1 + 5 + 2));
  // A vector of the wrong length is not used: `comm` on every boundary.
  const std::vector<double> wrong = {1, 5};
  perBoundary.boundaryComm = &wrong;
  llvm::Expected<Timeline> uniform = simulate(*order, perBoundary);
  ASSERT_TRUE(static_cast<bool>(uniform))
      << llvm::toString(uniform.takeError());
  EXPECT_DOUBLE_EQ(uniform->makespan, computes->makespan + 6 * 0.5);
}

} // namespace
