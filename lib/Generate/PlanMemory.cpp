//===- PlanMemory.cpp - working memory of a strategy's runtime plan -------===//
//
// Where the memory goes (sched-opt runs of each step, and heaptrack): the
// IR of the compute ops and the transfers, their buffer slots, the graph
// path and the plan take 160 to 360 bytes per plan instruction; the rest
// is the proof. Z3 checks the graph path's candidate execution with one
// ground constraint per distinct pair of candidate times (lib/Verify/Z3),
// and its tables grow with those: with the length of the candidate, that
// is of the longest rank's program, more than with the plan's size. At the
// same 400,000 instructions 1F1B's proof adds about 200 MB at pp 4 and 20
// MB at pp 32; ZB-H1's a third of 1F1B's. Overlapped pairs (DualPipe) and
// the V placement cost nothing beyond their instructions. The old single
// figure, 2,144 bytes per compute action, overestimated the V strategies
// about 2.5 times: it counted three compute actions per stage and
// microbatch, and no transfers.
//
// How the figures were measured: `schedc generate --strategy S --pp P
// --emit json` under /usr/bin/time, P = 4, 8, 16 and 32 (vpp 2 for the
// interleaved and V strategies; pp 1 for the one-rank ones), at the
// microbatch count that gives about 400,000 plan instructions; the peak
// resident size less that of a two-microbatch plan (the process floor, 27
// MB). Per strategy, the two figures are the fit of peak = A x
// instructions + B x longest rank that keeps every measured peak at or
// under the estimate with the smallest largest overestimate (at most 1.31,
// for zb-h2 and v-half), then 5% more, rounded up to a multiple of 8. The
// longest rank counts at most a quarter of the plan. Two ranks have one
// figure per strategy (perInstructionOnTwoRanks). `make bench` ("Memory
// estimates against the measured peak") checks every strategy at pp 2, 4,
// 8 and 32 at another size and flags an estimate not within 1.5 times its
// peak.
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
  count.ranks = static_cast<int64_t>(schedule.ranks.size());
  count.stages = schedule.numStages;
  count.collectives = count.ranks;
  if (schedule.replicas > 1)
    count.collectives += schedule.numStages;
  for (int64_t n : perRank)
    count.longestRank = std::max(count.longestRank, n);
  return count;
}

/// Per instruction on two ranks, the proof included: there the longest rank
/// holds half of the plan, and how much of its candidate the graph path
/// contracts before Z3 sees it depends on the strategy's order (most of
/// gpipe's and zb-h1/h2's, little of 1f1b's), so that no rule on the two
/// figures fits every strategy (they put 1f1b at 0.74 of its peak and
/// zb-h2 at 4.1 times it). Measured at 60,000 to 2 million plan
/// instructions (docs/limits.md); the largest per instruction, plus 5%,
/// rounded up to a multiple of 8. The peak grows in steps as Z3's and the
/// IR's tables double, so the estimate is 1 to about 1.5 times it.
static int64_t perInstructionOnTwoRanks(Strategy strategy) {
  switch (strategy) {
  case Strategy::GPipe:
    return 328; // 310
  case Strategy::OneFOneB:
    return 1232; // 1173
  case Strategy::Interleaved1F1B:
    return 1024; // 971
  case Strategy::LoopedBFS:
    return 1080; // 1026
  case Strategy::ZBH1:
    return 280; // 267
  case Strategy::ZBH2:
    return 288; // 272
  case Strategy::InterleavedZB:
    return 392; // 374
  case Strategy::ZBV:
    return 640; // 605
  case Strategy::VHalf:
    return 640; // 604
  case Strategy::VMin:
    return 640; // 605
  case Strategy::DualPipeV:
    return 824; // 779
  case Strategy::DualPipe:
    return 832; // 792
  case Strategy::InterleavedCombined1F1B:
    return 1112; // 1056
  case Strategy::NoPipeline:
  case Strategy::Combined1F1B:
    // One rank only.
    return planMemoryCost(strategy, 1).perInstruction;
  }
  llvm_unreachable("unknown strategy");
}

PlanMemoryCost sched::planMemoryCost(Strategy strategy, int64_t ranks) {
  if (ranks == 2)
    return {perInstructionOnTwoRanks(strategy), 0};
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
    // It takes any pp: on more ranks than one its proof counts as the
    // others' (per instruction, 631 to 727 bytes at pp 4, 616 to 707 at
    // pp 8, 476 to 545 at pp 16 and 460 to 541 at pp 32, 0.2 to 4.6
    // million instructions; at one rank's 400 the estimate was 0.55 to
    // 0.65 of the peak). The fit is 1.05 to 1.45 times each.
    if (ranks > 1)
      return {568, 1400}; // 541, 1328
    return {400, 0};      // 380
  }
  llvm_unreachable("unknown strategy");
}

/// The strategy whose figures cost the plan of `count`: interleaved ZB on
/// one stage per rank writes ZB-H1's program
/// (lib/Generate/InterleavedZeroBubble.cpp), and its figures, fitted at vpp
/// 2, put that plan at 1.65 to 1.73 times its peak on two ranks.
static Strategy costedAs(Strategy strategy, const PlanInstructionCount &count) {
  if (strategy == Strategy::InterleavedZB && count.stages == count.ranks)
    return Strategy::ZBH1;
  return strategy;
}

uint64_t sched::estimatePlanMemory(Strategy strategy,
                                   const PlanInstructionCount &count) {
  const PlanMemoryCost cost =
      planMemoryCost(costedAs(strategy, count), count.ranks);
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
  const PlanMemoryCost cost =
      planMemoryCost(costedAs(strategy, count), count.ranks);
  const std::string each =
      cost.perLongestRankInstruction == 0
          ? llvm::formatv("{0} plan instructions at {1} bytes each, the "
                          "proof included",
                          count.total(), cost.perInstruction)
                .str()
          : llvm::formatv("{0} plan instructions at {1} bytes each, {2} on "
                          "the longest rank at {3} bytes each for the proof",
                          count.total(), cost.perInstruction, count.longestRank,
                          cost.perLongestRankInstruction)
                .str();
  return llvm::createStringError(
      llvm::formatv("{0} needs {1} of working memory ({2}), more than the "
                    "budget of {3}; raise it with {4} (docs/limits.md)",
                    what, formatMemoryNeed(need), each,
                    formatMemorySize(budget), raise)
          .str());
}
