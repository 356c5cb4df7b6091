//===- GenerateTest.cpp - generators against the closed forms -------------===//
//
// GPipe and 1F1B simulated with T_F = 1, T_B = 2 (I = W = 1) must give the
// closed forms of Huang et al. and Narayanan et al.: makespan (M+P-1)*3,
// GPipe peak M, 1F1B peak min(P-r, M) on rank r.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/Strategy.h"
#include "lib/Simulate/Simulate.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

using namespace sched;

namespace {

Timeline simulateStrategy(Strategy strategy, int32_t pp, int32_t m) {
  PipelineShape shape;
  shape.pp = pp;
  shape.microbatches = m;
  llvm::Expected<Schedule> schedule = generateSchedule(strategy, shape);
  EXPECT_TRUE(static_cast<bool>(schedule));
  llvm::Expected<Timeline> timeline = simulate(*schedule, {});
  EXPECT_TRUE(static_cast<bool>(timeline));
  return *timeline;
}

TEST(Generate, GPipeClosedForms) {
  for (int32_t pp : {1, 2, 3, 4, 8, 16})
    for (int32_t m = 1; m <= 4 * pp; ++m) {
      Timeline timeline = simulateStrategy(Strategy::GPipe, pp, m);
      EXPECT_DOUBLE_EQ(timeline.makespan, (m + pp - 1) * 3.0)
          << "pp=" << pp << " m=" << m;
      for (int32_t r = 0; r < pp; ++r)
        EXPECT_DOUBLE_EQ(timeline.peakActivations[r], m);
    }
}

TEST(Generate, OneFOneBClosedForms) {
  for (int32_t pp : {1, 2, 3, 4, 8, 16})
    for (int32_t m = 1; m <= 4 * pp; ++m) {
      Timeline timeline = simulateStrategy(Strategy::OneFOneB, pp, m);
      EXPECT_DOUBLE_EQ(timeline.makespan, (m + pp - 1) * 3.0)
          << "pp=" << pp << " m=" << m;
      for (int32_t r = 0; r < pp; ++r)
        EXPECT_DOUBLE_EQ(timeline.peakActivations[r], std::min(pp - r, m))
            << "pp=" << pp << " m=" << m << " rank=" << r;
    }
}

TEST(Generate, OneFOneBBubbleMatchesPaper) {
  // Bubble per rank is (P-1)(T_F+T_B) = 3(P-1) out of (M+P-1)*3.
  Timeline timeline = simulateStrategy(Strategy::OneFOneB, 4, 8);
  for (double ratio : timeline.bubbleRatio)
    EXPECT_DOUBLE_EQ(ratio, 3.0 / 11.0);
}

TEST(Generate, RejectsVirtualStagesForSingleStageStrategies) {
  PipelineShape shape;
  shape.pp = 4;
  shape.vpp = 2;
  shape.microbatches = 8;
  llvm::Expected<Schedule> schedule =
      generateSchedule(Strategy::OneFOneB, shape);
  ASSERT_FALSE(static_cast<bool>(schedule));
  EXPECT_NE(llvm::toString(schedule.takeError()).find("needs vpp = 1"),
            std::string::npos);
}

// 1F1B on 2 ranks, 2 microbatches, T_F = 1, T_B = 2, transfers of c:
// eager sends give 9 + 2c (rank 0: F0, F1; rank 1: F0 at 1+c, B0 to 4+c,
// F1, B1 to 7+c; rank 0's B1 from 7+2c). Blocking sends (Megatron's
// non-interleaved 1F1B) hold rank 0 after each forward and rank 1 after
// each backward for c: rank 1's B1 ends at 7+2c, its gradient arrives at
// 7+3c, and rank 0 ends at 9+3c.
TEST(Simulate, BlockingSendsHoldTheSender) {
  PipelineShape shape;
  shape.pp = 2;
  shape.microbatches = 2;
  llvm::Expected<Schedule> schedule =
      generateSchedule(Strategy::OneFOneB, shape);
  ASSERT_TRUE(static_cast<bool>(schedule));
  SimulationOptions eager;
  eager.comm = 0.5;
  llvm::Expected<Timeline> overlapped = simulate(*schedule, eager);
  ASSERT_TRUE(static_cast<bool>(overlapped));
  EXPECT_DOUBLE_EQ(overlapped->makespan, 9 + 2 * 0.5);
  SimulationOptions blocking = eager;
  blocking.blockingSends = true;
  llvm::Expected<Timeline> held = simulate(*schedule, blocking);
  ASSERT_TRUE(static_cast<bool>(held));
  EXPECT_DOUBLE_EQ(held->makespan, 9 + 3 * 0.5);
  // The hold is waiting, not compute.
  EXPECT_DOUBLE_EQ(held->busy[0], overlapped->busy[0]);
}

TEST(Simulate, ReportsAScheduleThatCannotFinish) {
  // Rank 1 runs B before the forward it needs ever happens on rank 0.
  Schedule schedule;
  schedule.numStages = 2;
  schedule.numMicrobatches = 1;
  schedule.ranks = {
      {0,
       {Action::compute(ActionKind::Backward, 0, 0),
        Action::compute(ActionKind::Forward, 0, 0)}},
      {1,
       {Action::compute(ActionKind::Forward, 1, 0),
        Action::compute(ActionKind::Backward, 1, 0)}}};
  llvm::Expected<Timeline> timeline = simulate(schedule, {});
  ASSERT_FALSE(static_cast<bool>(timeline));
  std::string message = llvm::toString(timeline.takeError());
  EXPECT_NE(message.find("rank 0 is stuck at action 0 (0B0)"),
            std::string::npos)
      << message;
}

TEST(Simulate, RefusesNaNCosts) {
  // One stage on one rank whose backward costs NaN (inf * 0 in a cost
  // model): max() drops a NaN, so the makespan came out as the forward's
  // 1 and the schedule as fine.
  Schedule schedule;
  schedule.numStages = 1;
  schedule.numMicrobatches = 1;
  schedule.ranks = {{0,
                     {Action::compute(ActionKind::Forward, 0, 0),
                      Action::compute(ActionKind::Backward, 0, 0)}}};
  StageCost cost;
  cost.backwardInput = std::numeric_limits<double>::quiet_NaN();
  schedule.stageCosts = {cost};
  llvm::Expected<Timeline> timeline = simulate(schedule, {});
  ASSERT_FALSE(static_cast<bool>(timeline));
  std::string message = llvm::toString(timeline.takeError());
  EXPECT_NE(message.find("not numbers (NaN)"), std::string::npos) << message;
}

/// Every action's start and end, rank by rank.
std::vector<std::vector<std::pair<double, double>>>
timesOf(const Timeline &timeline) {
  std::vector<std::vector<std::pair<double, double>>> times;
  for (const std::vector<ActionTime> &rank : timeline.times) {
    times.emplace_back();
    for (const ActionTime &t : rank)
      times.back().push_back({t.start, t.end});
  }
  return times;
}

// Events of a stage and microbatch sit in a table when stages x
// microbatches is about the schedule's size, in a map otherwise (a
// schedule that declares 2^26 microbatches and runs four): the two give the
// same timeline, with transfers and costs that differ by stage.
TEST(Simulate, EventTableAndMapAgree) {
  PipelineShape shape;
  shape.pp = 3;
  shape.microbatches = 4;
  for (int32_t s = 0; s < 3; ++s) {
    StageCost cost;
    cost.forward = 1 + s;
    cost.backwardInput = 2 + s;
    cost.backwardWeight = 1;
    shape.stageCosts.push_back(cost);
  }
  llvm::Expected<Schedule> schedule =
      generateSchedule(Strategy::OneFOneB, shape);
  ASSERT_TRUE(static_cast<bool>(schedule));
  SimulationOptions options;
  options.comm = 0.25;
  llvm::Expected<Timeline> table = simulate(*schedule, options);
  ASSERT_TRUE(static_cast<bool>(table));
  Schedule sparse = *schedule;
  sparse.numMicrobatches = 1 << 26;
  llvm::Expected<Timeline> map = simulate(sparse, options);
  ASSERT_TRUE(static_cast<bool>(map));
  EXPECT_EQ(timesOf(*table), timesOf(*map));
  EXPECT_DOUBLE_EQ(table->makespan, map->makespan);
}

// SimulationOptions::stageCosts runs a schedule under other costs without
// copying it: the same timeline as the copy that carries them.
TEST(Simulate, StageCostsOfTheOptionsReplaceTheSchedules) {
  PipelineShape shape;
  shape.pp = 2;
  shape.microbatches = 3;
  llvm::Expected<Schedule> schedule =
      generateSchedule(Strategy::OneFOneB, shape);
  ASSERT_TRUE(static_cast<bool>(schedule));
  std::vector<StageCost> costs(2);
  costs[0].forward = 3;
  costs[1].backwardInput = 5;
  Schedule copy = *schedule;
  copy.stageCosts = costs;
  llvm::Expected<Timeline> copied = simulate(copy, {});
  ASSERT_TRUE(static_cast<bool>(copied));
  SimulationOptions options;
  options.stageCosts = &costs;
  llvm::Expected<Timeline> given = simulate(*schedule, options);
  ASSERT_TRUE(static_cast<bool>(given));
  EXPECT_EQ(timesOf(*copied), timesOf(*given));
  llvm::Expected<Timeline> own = simulate(*schedule, {});
  ASSERT_TRUE(static_cast<bool>(own));
  EXPECT_NE(own->makespan, given->makespan);
}

} // namespace
