//===- PlanMemory.cpp - working memory of a strategy's runtime plan -------===//
//
// How the figures below were measured: `schedc generate --strategy S --pp 8
// --emit json` (vpp 2 where the strategy takes it; pp 1 for no-pp and
// combined-1f1b) under /usr/bin/time -v, at the microbatch counts that give
// about 200,000 and 800,000 plan instructions; the peak resident size less
// that of a two-microbatch plan (the process floor, 27 MB), over the plan's
// instructions counted in its JSON. The two sizes agree within 15% for
// every strategy. Each figure is the larger of the two plus about 10%,
// rounded up to a multiple of 8 (the measured larger in the comments);
// `make bench` measures it again ("--emit json: estimate against the
// measured peak") and flags a strategy whose estimate is not within 1.5
// times its peak.
//
// Where the memory goes, for 1F1B at 18,164 microbatches (800,000
// instructions; sched-opt runs of each step): the IR of the compute ops
// and the transfers, their slots and the plan take about 300 bytes per
// instruction whatever the strategy; the rest is the proof. Z3 checks the
// graph path's candidate execution with one constraint per distinct pair
// of candidate times (lib/Verify/Z3), and how many distinct pairs there
// are depends on the shape of the schedule, not only on its size: 25 MB
// for ZB-H1, 82 MB for ZB-H2 and 125 MB for 1F1B of about the same count.
// Overlapped pairs (DualPipe) and the V placement change nothing beyond
// their instructions; the old single figure of 2,144 bytes per compute
// action overestimated the V strategies about 2.5 times because it counted
// three compute actions per stage and microbatch and no transfers.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/PlanMemory.h"
#include "lib/Limits/ResourceLimits.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <vector>

using namespace sched;

PlanInstructionCount sched::countPlanInstructions(const Schedule &schedule) {
  PlanInstructionCount count;
  // The rank of each stage: where its computes run.
  std::vector<int32_t> rankOf(std::max(schedule.numStages, 0), -1);
  for (size_t r = 0; r < schedule.ranks.size(); ++r)
    for (const Action &action : schedule.ranks[r].actions)
      if (isCompute(action.kind) && action.stage >= 0 &&
          action.stage < schedule.numStages)
        rankOf[action.stage] = static_cast<int32_t>(r);
  // Per rank: its computes, the sends and receives it takes part in, and
  // its optimizer step.
  std::vector<int64_t> perRank(schedule.ranks.size(), 1);
  // A send on the rank of `from` and a receive on that of `to` when the
  // two stages sit on different ranks.
  auto transfer = [&](int32_t from, int32_t to) {
    if (to < 0 || to >= schedule.numStages || rankOf[to] < 0 ||
        rankOf[from] == rankOf[to])
      return;
    count.transfers += 2;
    ++perRank[rankOf[from]];
    ++perRank[rankOf[to]];
  };
  for (size_t r = 0; r < schedule.ranks.size(); ++r)
    for (const Action &action : schedule.ranks[r].actions) {
      if (!isCompute(action.kind))
        continue;
      ++count.compute;
      ++perRank[r];
      count.overlapMembers += action.bundle != 0;
      if (action.stage < 0 || action.stage >= schedule.numStages)
        continue;
      // An activation goes to the next stage of the chain, an input
      // gradient (B or I) to the previous one.
      if (action.kind == ActionKind::Forward &&
          !schedule.isLastStage(action.stage))
        transfer(action.stage, action.stage + 1);
      if ((action.kind == ActionKind::Backward ||
           action.kind == ActionKind::BackwardInput) &&
          !schedule.isFirstStage(action.stage))
        transfer(action.stage, action.stage - 1);
    }
  count.collectives = static_cast<int64_t>(schedule.ranks.size());
  if (schedule.replicas > 1)
    count.collectives += schedule.numStages;
  for (int64_t n : perRank)
    count.longestRank = std::max(count.longestRank, n);
  return count;
}

PlanMemoryCost sched::planMemoryCost(Strategy strategy) {
  // {per instruction, per instruction of the longest rank}; the fit's
  // figures before the 5% are in the comments.
  switch (strategy) {
  case Strategy::GPipe:
    return {208, 2408}; // 192, 2288
  case Strategy::OneFOneB:
    return {336, 2152}; // 316, 2048
  case Strategy::Interleaved1F1B:
    return {312, 2408}; // 296, 2288
  case Strategy::LoopedBFS:
    return {800, 56}; // 760, 48
  case Strategy::ZBH1:
    return {168, 1280}; // 160, 1216
  case Strategy::ZBH2:
    return {200, 2392}; // 188, 2272
  case Strategy::InterleavedZB:
    return {176, 1312}; // 164, 1248
  case Strategy::ZBV:
    return {248, 2304}; // 236, 2192
  case Strategy::VHalf:
    return {360, 1280}; // 336, 1216
  case Strategy::VMin:
    return {248, 2392}; // 232, 2272
  case Strategy::DualPipeV:
    return {280, 1496}; // 264, 1424
  case Strategy::DualPipe:
    return {296, 1464}; // 280, 1392
  // One rank: the longest rank is the plan, and one figure says it all.
  case Strategy::NoPipeline:
    return {344, 0}; // 322
  case Strategy::Combined1F1B:
    return {432, 0}; // 410
  case Strategy::InterleavedCombined1F1B:
    return {400, 0}; // 380
  }
  llvm_unreachable("unknown strategy");
}

uint64_t sched::estimatePlanMemory(Strategy strategy,
                                   const PlanInstructionCount &count) {
  const PlanMemoryCost cost = planMemoryCost(strategy);
  const uint64_t total =
      static_cast<uint64_t>(std::max<int64_t>(count.total(), 0));
  const uint64_t longest =
      std::min(static_cast<uint64_t>(std::max<int64_t>(count.longestRank, 0)),
               total / 4);
  return llvm::SaturatingAdd(
      llvm::SaturatingMultiply(total, uint64_t(cost.perInstruction)),
      llvm::SaturatingMultiply(longest,
                               uint64_t(cost.perLongestRankInstruction)));
}

llvm::Error sched::checkPlanMemory(Strategy strategy, const Schedule &schedule,
                                   int64_t budget, llvm::StringRef what,
                                   llvm::StringRef raise) {
  const PlanInstructionCount count = countPlanInstructions(schedule);
  const uint64_t need = estimatePlanMemory(strategy, count);
  if (need <= static_cast<uint64_t>(budget))
    return llvm::Error::success();
  const PlanMemoryCost cost = planMemoryCost(strategy);
  const std::string needText = need > uint64_t(INT64_MAX)
                                   ? "more than 8 EiB"
                                   : "about " + formatMemorySize(int64_t(need));
  return llvm::createStringError(
      llvm::formatv("{0} needs {1} of working memory ({2} plan instructions "
                    "at {3} bytes each, {4} on the longest rank at {5} bytes "
                    "each for the proof), more than the budget of {6}; raise "
                    "it with {7} (docs/limits.md)",
                    what, needText, count.total(), cost.perInstruction,
                    count.longestRank, cost.perLongestRankInstruction,
                    formatMemorySize(budget), raise)
          .str());
}
