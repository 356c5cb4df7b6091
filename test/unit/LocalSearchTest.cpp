//===- LocalSearchTest.cpp - the list scheduler's local search ------------===//
//
// The incremental local search (lib/Synthesis/LocalSearch.h) makes the
// moves, and so gives the schedule, that re-timing every swap from scratch
// gives: the search as it was before it was incremental, kept here as the
// reference, on seeded random pipelines (loop and V, transfers, memory
// limits that reject swaps). Its work budget stops it early with a
// verified schedule.
//
//===----------------------------------------------------------------------===//

#include "lib/Synthesis/LocalSearch.h"
#include "lib/Synthesis/ListScheduler.h"
#include "lib/Synthesis/PipelineProblem.h"

#include "gtest/gtest.h"

#include <optional>
#include <random>

using namespace sched;

namespace {

/// The local search re-timing each swap with timeOrder and checking memory
/// with peakMemory (what solveWithListScheduling ran before).
LocalSearchStats searchFromScratch(const PipelineProblem &problem,
                                   ProblemSolution &solution, double &makespan,
                                   int32_t maxTrials) {
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  LocalSearchStats stats;
  const double slack = 1e-9 * std::max(1.0, makespan);
  auto withinMemory = [&](const ProblemSolution &candidate) {
    const std::vector<int64_t> peaks = problem.peakMemory(candidate);
    for (int32_t r = 0; r < problem.getNumRanks(); ++r) {
      std::optional<int64_t> limit = problem.getMemoryLimit(r);
      if (limit && peaks[r] > *limit)
        return false;
    }
    return true;
  };
  bool improved = true;
  while (improved && stats.trials < maxTrials) {
    improved = false;
    const std::vector<double> toEnd = pathsToEnd(problem, solution);
    for (auto [r, i] : criticalSwapPairs(problem, solution)) {
      if (stats.trials >= maxTrials)
        break;
      if (swapBound(problem, solution, toEnd, r, i) >= makespan - slack)
        continue;
      std::vector<std::vector<uint32_t>> order = solution.order;
      std::swap(order[r][i], order[r][i + 1]);
      ++stats.trials;
      llvm::Expected<ProblemSolution> timed =
          problem.timeOrder(std::move(order));
      if (!timed) {
        llvm::consumeError(timed.takeError());
        continue;
      }
      const double candidate = timed->makespan(ops);
      if (candidate < makespan - slack && withinMemory(*timed)) {
        solution = std::move(*timed);
        makespan = candidate;
        ++stats.improvingMoves;
        improved = true;
        break;
      }
    }
  }
  return stats;
}

/// A seeded random pipeline: 2 to 6 ranks, a loop or a V, uneven stages,
/// W from 0.2 to 1 of I, transfers up to one forward, and a limit from the
/// smallest feasible one to none.
PipelineProblem randomProblem(std::mt19937 &random, int trial) {
  std::uniform_real_distribution<double> unit(0, 1);
  SynthesisSpec spec;
  spec.pp = 2 + trial % 5;
  spec.vpp = trial % 3 == 0 ? 2 : 1;
  spec.placement =
      spec.vpp == 2 && trial % 2 ? StagePlacement::V : StagePlacement::Loop;
  spec.microbatches = spec.pp * (1 + trial % 3);
  spec.splitBackward = trial % 7 != 0;
  for (int32_t s = 0; s < spec.numStages(); ++s) {
    StageCost cost;
    cost.forward = 0.6 + std::round(10 * unit(random)) / 10;
    cost.backwardInput = cost.forward * (1 + std::round(5 * unit(random)) / 10);
    cost.backwardWeight =
        cost.backwardInput * (0.2 + std::round(8 * unit(random)) / 10);
    spec.stages.push_back(cost);
  }
  spec.comm = std::round(10 * unit(random)) / 10;
  llvm::Expected<PipelineProblem> unlimited = PipelineProblem::build(spec);
  EXPECT_TRUE(static_cast<bool>(unlimited));
  int64_t least = 0;
  for (int32_t r = 0; r < spec.pp; ++r)
    least = std::max(least, unlimited->getSmallestFeasibleLimit(r));
  if (trial % 4 != 3)
    spec.memoryLimit = {least + (trial % 4) * kActivationUnit};
  llvm::Expected<PipelineProblem> problem = PipelineProblem::build(spec);
  EXPECT_TRUE(static_cast<bool>(problem));
  return std::move(*problem);
}

/// A seeded random problem and a list schedule of it that leaves the local
/// search room (no reservation or weight gradients eagerly on odd trials).
std::optional<std::pair<PipelineProblem, ProblemSolution>>
problemAndStart(std::mt19937 &random, int trial) {
  PipelineProblem problem = randomProblem(random, trial);
  ListPolicy policy;
  policy.reserve = trial % 2 == 0;
  policy.weightGrad =
      trial % 2 ? WeightGradPolicy::Eager : WeightGradPolicy::Fill;
  llvm::Expected<ProblemSolution> start = runListPolicy(problem, policy);
  if (!start) {
    // Without reservation a policy may get stuck (documented).
    llvm::consumeError(start.takeError());
    return std::nullopt;
  }
  return std::make_pair(std::move(problem), std::move(*start));
}

TEST(LocalSearch, MovesEqualRetimingFromScratch) {
  std::mt19937 random(2828);
  int32_t moves = 0, rejected = 0;
  for (int trial = 0; trial < 60; ++trial) {
    auto instance = problemAndStart(random, trial);
    if (!instance)
      continue;
    const PipelineProblem &problem = instance->first;
    const ProblemSolution *start = &instance->second;
    // The list schedule's times are its order's earliest ones.
    llvm::Expected<ProblemSolution> retimed = problem.timeOrder(start->order);
    ASSERT_TRUE(static_cast<bool>(retimed));
    ASSERT_EQ(retimed->start, start->start) << "trial " << trial;

    ProblemSolution reference = *start, incremental = *start;
    double referenceMakespan = start->makespan(problem.getOperations());
    double incrementalMakespan = referenceMakespan;
    const LocalSearchStats expected =
        searchFromScratch(problem, reference, referenceMakespan, 400);
    LocalSearchLimits limits;
    limits.maxTrials = 400;
    const LocalSearchStats got =
        improveByLocalSearch(problem, incremental, incrementalMakespan, limits);
    EXPECT_EQ(got.trials, expected.trials) << "trial " << trial;
    EXPECT_EQ(got.improvingMoves, expected.improvingMoves) << "trial " << trial;
    EXPECT_EQ(incremental.order, reference.order) << "trial " << trial;
    EXPECT_EQ(incremental.start, reference.start) << "trial " << trial;
    EXPECT_EQ(incrementalMakespan, referenceMakespan) << "trial " << trial;
    EXPECT_FALSE(static_cast<bool>(problem.verify(incremental)))
        << "trial " << trial;
    moves += got.improvingMoves;
    rejected += got.trials - got.improvingMoves;
  }
  // The comparison covers kept swaps and swaps undone.
  EXPECT_GT(moves, 100);
  EXPECT_GT(rejected, 20);
}

TEST(LocalSearch, WorkBudgetStopsEarlyWithAVerifiedSchedule) {
  std::mt19937 random(2828);
  int checked = 0;
  for (int trial = 0; trial < 60; ++trial) {
    auto instance = problemAndStart(random, trial);
    if (!instance)
      continue;
    const PipelineProblem &problem = instance->first;
    const ProblemSolution &start = instance->second;
    const double initial = start.makespan(problem.getOperations());
    ProblemSolution unbounded = start;
    double unboundedMakespan = initial;
    const LocalSearchStats all =
        improveByLocalSearch(problem, unbounded, unboundedMakespan, {});
    if (all.improvingMoves < 4)
      continue;
    ++checked;
    ProblemSolution bounded = start;
    double boundedMakespan = initial;
    LocalSearchLimits limits;
    limits.maxWork = all.work / 4;
    const LocalSearchStats some =
        improveByLocalSearch(problem, bounded, boundedMakespan, limits);
    EXPECT_LT(some.trials, all.trials) << "trial " << trial;
    EXPECT_GE(some.work, limits.maxWork) << "trial " << trial;
    EXPECT_LT(some.work, all.work) << "trial " << trial;
    EXPECT_LT(boundedMakespan, initial) << "trial " << trial;
    EXPECT_GE(boundedMakespan, unboundedMakespan) << "trial " << trial;
    EXPECT_EQ(boundedMakespan, bounded.makespan(problem.getOperations()));
    EXPECT_FALSE(static_cast<bool>(problem.verify(bounded)))
        << "trial " << trial;

    // Through the list scheduler: a budget of no work runs no swap.
    ListSchedulerOptions options;
    options.maxWork = 0;
    llvm::Expected<ListSchedulerResult> none =
        solveWithListScheduling(problem, options);
    ASSERT_TRUE(static_cast<bool>(none));
    EXPECT_EQ(none->trials, 0);
    EXPECT_EQ(none->searchWork, 0);
  }
  EXPECT_GE(checked, 5);
}

} // namespace
