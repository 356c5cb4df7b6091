//===- Synthesized.cpp - a candidate's schedule solved for, not chosen ----===//

#include "lib/Planner/Synthesized.h"

#include "lib/Planner/Evaluation.h"
#include "lib/Synthesis/ListScheduler.h"
#include "lib/Synthesis/LowerBound.h"
#include "lib/Synthesis/TransferBuffers.h"

#include <algorithm>
#include <cmath>
#include <optional>

using namespace sched;

/// The local search's budget for a planner candidate, independent of the
/// load: at most this many swaps timed, and at most this much work
/// (operations re-timed, tails recomputed, critical-chain steps walked:
/// ListSchedulerOptions::maxWork). On a deep pipeline whose list schedule
/// is far from its bound a move re-times most of the step (49,152
/// operations, about 64,000 units a move), so the work caps it at some
/// 90 moves where the swaps alone allowed 1,000.
static constexpr int32_t kLocalSearchTrials = 1000;
static constexpr int64_t kLocalSearchWork = 6000000;
/// Solves after the first when the transfers' buffers overshoot the limit.
static constexpr int kRepairs = 3;

llvm::SmallVector<Strategy, 2> sched::synthesizedPlacements(int64_t vpp) {
  if (vpp == 1)
    return {Strategy::ZBH1};
  if (vpp == 2)
    return {Strategy::InterleavedZB, Strategy::ZBV};
  return {Strategy::InterleavedZB};
}

/// The problem spec of `candidate` under per-rank `limits` (bytes).
static SynthesisSpec specOf(const CostModel &model, const Candidate &candidate,
                            const std::vector<StageEstimate> &stages,
                            std::vector<int64_t> limits) {
  SynthesisSpec spec;
  spec.pp = static_cast<int32_t>(candidate.layout.pp);
  spec.vpp = static_cast<int32_t>(candidate.layout.vpp);
  spec.microbatches = static_cast<int32_t>(candidate.layout.microbatches);
  spec.placement = candidate.strategy == Strategy::ZBV ? StagePlacement::V
                                                       : StagePlacement::Loop;
  for (const StageEstimate &stage : stages)
    spec.stages.push_back(toStageCost(stage));
  spec.splitBackward = true;
  spec.comm = model.p2pTime(candidate.layout, stages.front().outputBytes);
  spec.memoryLimit = std::move(limits);
  return spec;
}

/// The device's usable memory in whole bytes.
static int64_t deviceLimit(const CostModel &model) {
  return static_cast<int64_t>(
      std::floor(std::min(model.memoryLimit(), 4.0e18)));
}

bool sched::synthesisFits(const CostModel &model, const Candidate &candidate,
                          const std::vector<StageEstimate> &stages) {
  llvm::Expected<PipelineProblem> problem = PipelineProblem::build(
      specOf(model, candidate, stages, {deviceLimit(model)}));
  if (!problem) {
    llvm::consumeError(problem.takeError());
    return false;
  }
  if (llvm::Error error = problem->checkMemory()) {
    llvm::consumeError(std::move(error));
    return false;
  }
  return true;
}

double sched::synthesizedMakespanBound(
    const CostModel &model, const Candidate &candidate,
    const std::vector<StageEstimate> &stages) {
  llvm::Expected<PipelineProblem> problem = PipelineProblem::build(
      specOf(model, candidate, stages, {deviceLimit(model)}));
  if (!problem) {
    llvm::consumeError(problem.takeError());
    return 0;
  }
  if (llvm::Error error = problem->checkMemory()) {
    llvm::consumeError(std::move(error));
    return 0;
  }
  return computeLowerBound(*problem).value;
}

llvm::Expected<SynthesizedOrder>
sched::synthesizeOrder(const CostModel &model, const Candidate &candidate,
                       const std::vector<StageEstimate> &stages) {
  const int64_t limit = deviceLimit(model);
  llvm::Expected<PipelineProblem> device =
      PipelineProblem::build(specOf(model, candidate, stages, {limit}));
  if (!device)
    return device.takeError();
  SynthesizedOrder result;
  for (int32_t r = 0; r < device->getNumRanks(); ++r)
    result.leastPeak =
        std::max(result.leastPeak,
                 static_cast<double>(device->getSmallestFeasibleLimit(r)));
  if (llvm::Error error = device->checkMemory()) {
    result.infeasible = llvm::toString(std::move(error));
    return result;
  }
  result.lowerBound = computeLowerBound(*device).value;

  ListSchedulerOptions options;
  options.searchSeconds = 60;
  options.maxTrials = kLocalSearchTrials;
  options.maxWork = kLocalSearchWork;
  options.target = result.lowerBound;
  std::optional<PipelineProblem> solvedIn;
  llvm::Expected<BufferedSolution> solved = solveWithTransferBuffers(
      specOf(model, candidate, stages, {limit}), kRepairs,
      [&](const PipelineProblem &problem)
          -> llvm::Expected<ProblemSolution> {
        llvm::Expected<ListSchedulerResult> list =
            solveWithListScheduling(problem, options);
        if (!list)
          return list.takeError();
        solvedIn.emplace(problem);
        return std::move(list->solution);
      });
  if (!solved)
    return solved.takeError();
  // Below the least limit nothing can be solved for: an order that still
  // overflows is kept, and the verifier says which buffer overflows.
  result.schedule = solvedIn->toSchedule(solved->solution);
  result.makespan = solved->solution.makespan(solvedIn->getOperations());
  result.lowerBound = std::min(result.lowerBound, result.makespan);
  result.gap = relativeGap(result.makespan, result.lowerBound);
  return result;
}
