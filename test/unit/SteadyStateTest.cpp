//===- SteadyStateTest.cpp - the shortcut against whole orders ------------===//
//
// steadyStateMicrobatches (lib/Generate/SteadyState.h) lets the planner
// measure memory on a shorter order. Its claim, checked here against the
// whole order for every strategy over grids of shapes: each rank passes
// through the same activation states, first reached in the same order,
// with the same stages and layerwise pairs, so every peak is the same.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/SteadyState.h"
#include "lib/Generate/VShape.h"

#include "StrategyTestSupport.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <map>
#include <random>
#include <utility>
#include <vector>

using namespace sched;
using namespace sched::test;

namespace {

/// What a rank's memory depends on, computed plainly: its stages in order
/// of first compute, its layerwise (forward, backward) pairs, and its
/// distinct states (per stage: forwarded and not yet backward, then
/// waiting for W) in order of first occurrence. A layerwise pair's
/// backward frees before its forward allocates, as the planner walks it.
struct RankStates {
  std::vector<int32_t> stages;
  std::vector<std::pair<int32_t, int32_t>> layerwisePairs;
  std::vector<std::vector<int32_t>> states;

  bool operator==(const RankStates &other) const {
    return stages == other.stages && layerwisePairs == other.layerwisePairs &&
           states == other.states;
  }
};

std::vector<RankStates> rankStates(const Schedule &schedule) {
  std::vector<RankStates> ranks;
  for (const RankProgram &program : schedule.ranks) {
    RankStates &rank = ranks.emplace_back();
    std::vector<const Action *> walk;
    const std::vector<Action> &actions = program.actions;
    size_t skip = actions.size();
    for (size_t i = 0; i < actions.size(); ++i) {
      if (!isCompute(actions[i].kind) || i == skip)
        continue;
      const size_t partner = layerwisePartner(actions, i);
      if (partner > i) {
        walk.push_back(&actions[partner]);
        skip = partner;
        std::pair<int32_t, int32_t> pair{actions[i].stage,
                                         actions[partner].stage};
        if (std::find(rank.layerwisePairs.begin(), rank.layerwisePairs.end(),
                      pair) == rank.layerwisePairs.end())
          rank.layerwisePairs.push_back(pair);
      }
      walk.push_back(&actions[i]);
      if (std::find(rank.stages.begin(), rank.stages.end(), actions[i].stage) ==
          rank.stages.end())
        rank.stages.push_back(actions[i].stage);
    }
    for (const Action *a : walk)
      if (std::find(rank.stages.begin(), rank.stages.end(), a->stage) ==
          rank.stages.end())
        rank.stages.push_back(a->stage);
    const size_t n = rank.stages.size();
    std::map<int32_t, size_t> local;
    for (size_t j = 0; j < n; ++j)
      local[rank.stages[j]] = j;
    std::vector<int32_t> state(2 * n, 0);
    std::map<std::vector<int32_t>, bool> seen;
    for (const Action *a : walk) {
      const size_t j = local[a->stage];
      switch (a->kind) {
      case ActionKind::Forward:
        ++state[j];
        break;
      case ActionKind::Backward:
        --state[j];
        break;
      case ActionKind::BackwardInput:
        --state[j];
        ++state[n + j];
        break;
      default:
        --state[n + j];
        break;
      }
      if (seen.emplace(state, true).second)
        rank.states.push_back(state);
    }
  }
  return ranks;
}

size_t pairedActions(const Schedule &schedule) {
  size_t paired = 0;
  for (const RankProgram &rank : schedule.ranks)
    for (const Action &a : rank.actions)
      paired += isCompute(a.kind) && a.bundle != 0;
  return paired;
}

/// Checks every shape of `strategy` with pp in `pps`, vpp in `vpps` and
/// M up to `most` that steadyStateMicrobatches shortens; returns how many
/// it shortened.
int checkGrid(Strategy strategy, std::vector<int32_t> pps,
              std::vector<int32_t> vpps, int32_t most) {
  int shortened = 0;
  SteadyStateMicrobatches steadyStateMicrobatches;
  for (int32_t pp : pps)
    for (int32_t vpp : vpps)
      for (int32_t m = 1; m <= most; ++m) {
        PipelineShape shape = makeShape(pp, vpp, m);
        if (!errorOf(strategy, shape).empty())
          continue;
        // The shortest, and one at least twice as long (which the planner
        // asks for where the shortest has too few actions).
        int32_t steady = steadyStateMicrobatches(strategy, shape);
        EXPECT_LE(steady, m) << describe(strategy, shape);
        if (steady >= m)
          continue;
        if (m % 2)
          steady = steadyStateMicrobatches(strategy, shape, 2 * steady);
        EXPECT_LE(steady, m) << describe(strategy, shape);
        if (steady >= m)
          continue;
        ++shortened;
        PipelineShape shorter = shape;
        shorter.microbatches = steady;
        EXPECT_TRUE(errorOf(strategy, shorter).empty())
            << describe(strategy, shorter);
        llvm::Expected<Schedule> whole = generateSchedule(strategy, shape);
        llvm::Expected<Schedule> part = generateSchedule(strategy, shorter);
        if (!whole || !part) {
          ADD_FAILURE() << describe(strategy, shape) << ": "
                        << llvm::toString(whole.takeError())
                        << llvm::toString(part.takeError());
          continue;
        }
        const std::vector<RankStates> a = rankStates(*whole),
                                      b = rankStates(*part);
        EXPECT_EQ(a.size(), b.size());
        for (size_t r = 0; r < std::min(a.size(), b.size()); ++r)
          EXPECT_TRUE(a[r] == b[r])
              << describe(strategy, shape) << " rank " << r
              << " against M = " << steady << ": " << a[r].states.size()
              << " and " << b[r].states.size() << " states";
        // The planner takes the paired share of the whole order from the
        // counts.
        EXPECT_EQ(pairedActions(*whole),
                  size_t(2 * computeOverlapCount(strategy, shape)))
            << describe(strategy, shape);
        EXPECT_EQ(whole->numActions(),
                  size_t(computeActionCount(strategy, shape)))
            << describe(strategy, shape);
        // Where the planner scales a rank's actions by the microbatches.
        if (!SteadyStateMicrobatches::actionsPerMicrobatchFixed(strategy))
          continue;
        for (size_t r = 0; r < whole->ranks.size(); ++r)
          EXPECT_EQ(whole->ranks[r].actions.size() * steady,
                    part->ranks[r].actions.size() * m)
              << describe(strategy, shape) << " rank " << r;
      }
  return shortened;
}

TEST(SteadyState, OneStageStrategies) {
  EXPECT_GT(checkGrid(Strategy::NoPipeline, {1}, {1}, 40), 30);
  EXPECT_GT(checkGrid(Strategy::Combined1F1B, {1}, {1}, 40), 30);
}

TEST(SteadyState, OneFOneBAndZeroBubble) {
  for (Strategy s : {Strategy::OneFOneB, Strategy::ZBH1, Strategy::ZBH2})
    EXPECT_GT(checkGrid(s, {1, 2, 3, 4, 5, 7, 8}, {1}, 70), 100)
        << strategyName(s).str();
}

TEST(SteadyState, Interleaved) {
  // Groups of P and P + 1 are each cut down to vpp + 4; pp 10 and 11 have
  // more larger groups than that (M mod pp above vpp + 4).
  for (Strategy s : {Strategy::Interleaved1F1B, Strategy::InterleavedZB,
                     Strategy::InterleavedCombined1F1B})
    EXPECT_GT(checkGrid(s, {1, 2, 3, 4, 10, 11}, {1, 2, 3}, 230), 300)
        << strategyName(s).str();
}

TEST(SteadyState, VShapes) {
  EXPECT_GT(checkGrid(Strategy::VMin, {1, 2, 3, 4, 6, 8}, {2}, 80), 200);
  for (Strategy s : {Strategy::ZBV, Strategy::VHalf, Strategy::DualPipeV})
    EXPECT_GT(checkGrid(s, {1, 2, 3, 4, 5, 8}, {2}, 260), 200)
        << strategyName(s).str();
}

TEST(SteadyState, DualPipe) {
  EXPECT_GT(checkGrid(Strategy::DualPipe, {2, 4, 6, 8, 10}, {1}, 90), 80);
}

TEST(SteadyState, ComputeRunsAreTheOrder) {
  for (Strategy s : {Strategy::GPipe, Strategy::LoopedBFS})
    for (int32_t pp : {1, 2, 3, 5, 8})
      for (int32_t vpp : {1, 2, 3})
        for (int32_t m : {1, 2, 3, 7, 16, 33}) {
          PipelineShape shape = makeShape(pp, vpp, m);
          if (!errorOf(s, shape).empty())
            continue;
          llvm::Expected<Schedule> order = generateSchedule(s, shape);
          ASSERT_TRUE(bool(order)) << describe(s, shape);
          std::optional<std::vector<std::vector<ComputeRun>>> runs =
              computeRuns(s, shape);
          ASSERT_TRUE(runs.has_value()) << describe(s, shape);
          ASSERT_EQ(runs->size(), order->ranks.size());
          const std::vector<RankStates> states = rankStates(*order);
          for (size_t r = 0; r < runs->size(); ++r) {
            std::vector<std::pair<ActionKind, int32_t>> expanded, actual;
            for (const ComputeRun &run : (*runs)[r])
              expanded.insert(expanded.end(), run.count, {run.kind, run.stage});
            for (const Action &a : order->ranks[r].actions)
              if (isCompute(a.kind))
                actual.push_back({a.kind, a.stage});
            EXPECT_EQ(expanded, actual) << describe(s, shape) << " rank " << r;
            // More state entries than actions: walked action by action.
            EXPECT_GT(states[r].states.size() * 2 * states[r].stages.size(),
                      actual.size())
                << describe(s, shape) << " rank " << r;
          }
        }
  EXPECT_FALSE(computeRuns(Strategy::OneFOneB, makeShape(2, 1, 4)));
}

TEST(SteadyState, NotShortenedWithoutAnArgument) {
  for (Strategy s : {Strategy::GPipe, Strategy::LoopedBFS})
    EXPECT_EQ(checkGrid(s, {2, 4}, {1, 2}, 40), 0) << strategyName(s).str();
}

} // namespace
