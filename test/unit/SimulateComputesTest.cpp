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
          for (double comm : {0.0, 0.37})
            for (bool blocking : {false, true}) {
              SimulationOptions options;
              options.stageCosts = &costs;
              options.comm = comm;
              options.blockingSends = blocking;
              expectSameTimes(*order, options,
                              strategyName(strategy).str() +
                                  " pp=" + std::to_string(pp) +
                                  " vpp=" + std::to_string(vpp) +
                                  " m=" + std::to_string(microbatches) +
                                  " comm=" + std::to_string(comm) +
                                  (blocking ? " blocking" : ""));
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

} // namespace
