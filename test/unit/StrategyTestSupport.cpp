//===- StrategyTestSupport.cpp - shared checks of generated schedules -----===//

#include "test/unit/StrategyTestSupport.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

using namespace sched;
using namespace sched::test;

PipelineShape sched::test::makeShape(int32_t pp, int32_t vpp, int32_t m) {
  PipelineShape shape;
  shape.pp = pp;
  shape.vpp = vpp;
  shape.microbatches = m;
  return shape;
}

std::string sched::test::describe(const PipelineShape &shape) {
  return llvm::formatv("pp={0} vpp={1} m={2}", shape.pp, shape.vpp,
                       shape.microbatches);
}

std::string sched::test::describe(Strategy strategy,
                                  const PipelineShape &shape) {
  return strategyName(strategy).str() + " " + describe(shape);
}

std::string sched::test::errorOf(Strategy strategy,
                                 const PipelineShape &shape) {
  llvm::Expected<Schedule> schedule = generateSchedule(strategy, shape);
  if (schedule)
    return "";
  return llvm::toString(schedule.takeError());
}

/// Checks the overlap that starts at `actions[i]`.
static void expectOverlap(const std::vector<Action> &actions, size_t i) {
  const Action &action = actions[i];
  ASSERT_LT(i + 1, actions.size());
  const Action &other = actions[i + 1];
  ASSERT_EQ(other.bundle, action.bundle);
  ASSERT_EQ(action.kind, ActionKind::Forward);
  ASSERT_TRUE(other.kind == ActionKind::Backward ||
              other.kind == ActionKind::BackwardInput);
  // An F and a B of different microbatches: a microbatch's backward waits
  // for its forward, so the two could not run together.
  EXPECT_NE(action.microbatch, other.microbatch);
  if (i + 2 < actions.size()) {
    EXPECT_NE(actions[i + 2].bundle, action.bundle);
  }
}

std::vector<size_t>
sched::test::overlapStarts(const std::vector<Action> &actions) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < actions.size(); ++i)
    if (actions[i].bundle != 0 &&
        (i == 0 || actions[i - 1].bundle != actions[i].bundle))
      starts.push_back(i);
  return starts;
}

void sched::test::expectComplete(const Schedule &schedule,
                                 const PipelineShape &shape,
                                 StagePlacement placement,
                                 BackwardForm form) {
  ASSERT_EQ(schedule.numStages, shape.numStages());
  ASSERT_EQ(schedule.numMicrobatches, shape.microbatches);
  ASSERT_EQ(static_cast<int32_t>(schedule.ranks.size()), shape.pp);
  llvm::DenseMap<uint64_t, int32_t> runs;
  auto key = [](ActionKind kind, int32_t stage, int32_t mb) {
    return (static_cast<uint64_t>(kind) << 48) |
           (static_cast<uint64_t>(stage) << 24) | static_cast<uint64_t>(mb);
  };
  for (const RankProgram &rank : schedule.ranks) {
    const std::vector<Action> &actions = rank.actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &action = actions[i];
      ASSERT_TRUE(isCompute(action.kind));
      ASSERT_EQ(rankOfStage(action.stage, shape.pp, placement), rank.id)
          << actionLabel(action, /*withStage=*/true);
      ++runs[key(action.kind, action.stage, action.microbatch)];
    }
    for (size_t start : overlapStarts(actions))
      expectOverlap(actions, start);
  }
  for (int32_t stage = 0; stage < shape.numStages(); ++stage)
    for (int32_t mb = 0; mb < shape.microbatches; ++mb) {
      SCOPED_TRACE(llvm::formatv("stage {0} mb {1}", stage, mb).str());
      EXPECT_EQ(runs.lookup(key(ActionKind::Forward, stage, mb)), 1);
      const int32_t full = runs.lookup(key(ActionKind::Backward, stage, mb));
      const int32_t input =
          runs.lookup(key(ActionKind::BackwardInput, stage, mb));
      const int32_t weight =
          runs.lookup(key(ActionKind::BackwardWeight, stage, mb));
      const bool isFull = full == 1 && input == 0 && weight == 0;
      const bool isSplit = full == 0 && input == 1 && weight == 1;
      switch (form) {
      case BackwardForm::Full:
        EXPECT_TRUE(isFull);
        break;
      case BackwardForm::Split:
        EXPECT_TRUE(isSplit);
        break;
      case BackwardForm::Either:
        EXPECT_TRUE(isFull || isSplit);
        break;
      }
    }
}

Timeline sched::test::generateAndSimulate(Strategy strategy,
                                          const PipelineShape &shape,
                                          StagePlacement placement,
                                          BackwardForm form, Schedule *out) {
  llvm::Expected<Schedule> schedule = generateSchedule(strategy, shape);
  if (!schedule) {
    ADD_FAILURE() << describe(strategy, shape) << ": "
                  << llvm::toString(schedule.takeError());
    return {};
  }
  expectComplete(*schedule, shape, placement, form);

  Schedule uneven = *schedule;
  for (int32_t s = 0; s < shape.numStages(); ++s)
    uneven.stageCosts.push_back({/*forward=*/1.0 + s % 3,
                                 /*backwardInput=*/2.0,
                                 /*backwardWeight=*/0.5});
  llvm::Expected<Timeline> skewed = simulate(uneven, {});
  EXPECT_TRUE(static_cast<bool>(skewed)) << describe(strategy, shape) << ": "
                                         << llvm::toString(skewed.takeError());

  llvm::Expected<Timeline> timeline = simulate(*schedule, {});
  if (!timeline) {
    ADD_FAILURE() << describe(strategy, shape) << ": "
                  << llvm::toString(timeline.takeError());
    return {};
  }
  if (out)
    *out = std::move(*schedule);
  return std::move(*timeline);
}
