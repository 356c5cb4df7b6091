//===- Strategy.cpp - pipeline strategies and their generators ------------===//

#include "lib/Generate/Strategy.h"
#include "lib/Limits/PipelineLimits.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <iterator>

using namespace sched;

namespace {
struct StrategyInfo {
  Strategy strategy;
  llvm::StringLiteral name;
  /// Compute actions per stage and microbatch: F and B, or F, I and W
  /// (DualPipe's mix of both counts as the larger; computeActionCount
  /// counts it exactly).
  int32_t actionsPerSlot;
  /// Stages per rank the strategy accepts: at least minVpp, at most maxVpp
  /// (0: no upper bound).
  int32_t minVpp;
  int32_t maxVpp;
  /// Whether stage s must sit on rank s mod pp (loop placement).
  bool needsLoopPlacement;
  /// Whether the strategy puts stages r and 2pp-1-r on rank r (V placement)
  /// whatever the pipeline's placement says.
  bool impliesVPlacement = false;
  /// Most pipeline ranks the strategy takes (0: no upper bound).
  int32_t maxPp = 0;
  /// Pipeline replicas the schedule runs (DualPipe: two, one fed from
  /// each end).
  int32_t replicas = 1;
};
} // namespace

static constexpr StrategyInfo kStrategies[] = {
    {Strategy::GPipe, "gpipe", 2, 1, 1, false},
    {Strategy::OneFOneB, "1f1b", 2, 1, 1, false},
    {Strategy::Interleaved1F1B, "interleaved-1f1b", 2, 2, 0, true},
    {Strategy::LoopedBFS, "looped-bfs", 2, 2, 0, true},
    {Strategy::ZBH1, "zb-h1", 3, 1, 1, false},
    {Strategy::ZBH2, "zb-h2", 3, 1, 1, false},
    {Strategy::InterleavedZB, "interleaved-zb", 3, 1, 0, true},
    {Strategy::ZBV, "zb-v", 3, 2, 2, false, true},
    {Strategy::VHalf, "v-half", 3, 2, 2, false, true},
    {Strategy::VMin, "v-min", 3, 2, 2, false, true},
    {Strategy::DualPipeV, "dualpipe-v", 3, 2, 2, false, true},
    {Strategy::DualPipe, "dualpipe", 3, 1, 1, false, false, 0, 2},
    {Strategy::NoPipeline, "no-pp", 2, 1, 1, false, false, 1},
    {Strategy::Combined1F1B, "combined-1f1b", 2, 1, 1, false, false, 1},
    {Strategy::InterleavedCombined1F1B, "interleaved-combined-1f1b", 2, 2, 0,
     true},
};

static const StrategyInfo &infoOf(Strategy strategy) {
  for (const StrategyInfo &info : kStrategies)
    if (info.strategy == strategy)
      return info;
  llvm_unreachable("every strategy has an entry in kStrategies");
}

llvm::ArrayRef<Strategy> sched::allStrategies() {
  static constexpr Strategy all[] = {Strategy::GPipe,
                                     Strategy::OneFOneB,
                                     Strategy::Interleaved1F1B,
                                     Strategy::LoopedBFS,
                                     Strategy::ZBH1,
                                     Strategy::ZBH2,
                                     Strategy::InterleavedZB,
                                     Strategy::ZBV,
                                     Strategy::VHalf,
                                     Strategy::VMin,
                                     Strategy::DualPipeV,
                                     Strategy::DualPipe,
                                     Strategy::NoPipeline,
                                     Strategy::Combined1F1B,
                                     Strategy::InterleavedCombined1F1B};
  static_assert(std::size(all) == std::size(kStrategies),
                "every strategy is in allStrategies()");
  return all;
}

llvm::StringRef sched::strategyName(Strategy strategy) {
  return infoOf(strategy).name;
}

std::optional<Strategy> sched::parseStrategy(llvm::StringRef name) {
  for (const StrategyInfo &info : kStrategies)
    if (info.name == name)
      return info.strategy;
  return std::nullopt;
}

std::string sched::strategyNames() {
  std::string names;
  for (const StrategyInfo &info : kStrategies) {
    if (!names.empty())
      names += ", ";
    names += info.name;
  }
  return names;
}

/// Why `info` does not take `shape`'s stages per rank or placement,
/// or success.
static llvm::Error checkStageRules(const StrategyInfo &info,
                                   const PipelineShape &shape) {
  if (info.maxPp && shape.pp > info.maxPp)
    return llvm::createStringError(
        llvm::formatv("strategy {0} needs pp = 1 (a single pipeline stage), "
                      "got pp = {1}",
                      info.name, shape.pp)
            .str());
  if (info.impliesVPlacement && shape.vpp != 2)
    return llvm::createStringError(
        llvm::formatv("strategy {0} needs vpp = 2 (two stages per rank in a "
                      "V), got vpp = {1}",
                      info.name, shape.vpp)
            .str());
  if (info.minVpp == 1 && info.maxVpp == 1 && shape.vpp != 1)
    return llvm::createStringError(
        llvm::formatv("strategy {0} needs vpp = 1 (one stage per rank), "
                      "got vpp = {1}",
                      info.name, shape.vpp)
            .str());
  if (shape.vpp < info.minVpp)
    return llvm::createStringError(
        llvm::formatv("strategy {0} needs vpp >= {1}, got vpp = {2}", info.name,
                      info.minVpp, shape.vpp)
            .str());
  if (info.maxVpp && shape.vpp > info.maxVpp)
    return llvm::createStringError(
        llvm::formatv("strategy {0} needs vpp <= {1}, got vpp = {2}", info.name,
                      info.maxVpp, shape.vpp)
            .str());
  if (info.replicas == 2) {
    // DualPipe's phase counts (lib/Generate/DualPipe.cpp) need these.
    if (shape.pp % 2 != 0)
      return llvm::createStringError(
          llvm::formatv("strategy {0} needs an even pp (half the ranks feed "
                        "each replica), got pp = {1}",
                        info.name, shape.pp)
              .str());
    if (shape.microbatches % 2 != 0 || shape.microbatches < 2 * shape.pp)
      return llvm::createStringError(
          llvm::formatv("strategy {0} needs an even number of microbatches, "
                        "at least 2 pp = {1} (half go down each replica), "
                        "got {2}",
                        info.name, 2 * shape.pp, shape.microbatches)
              .str());
  }
  if (info.needsLoopPlacement && shape.placement != StagePlacement::Loop)
    return llvm::createStringError(
        llvm::formatv("strategy {0} needs loop placement (stage s on rank "
                      "s mod pp), got placement v",
                      info.name)
            .str());
  return llvm::Error::success();
}

llvm::Error sched::checkPipelineShape(Strategy strategy,
                                      const PipelineShape &shape) {
  if (shape.pp < 1 || shape.vpp < 1 || shape.microbatches < 1)
    return llvm::createStringError(
        "pipeline needs pp >= 1, vpp >= 1 and microbatches >= 1");
  // The sched dialect's limits (PipelineOp's verifier), for every way in.
  if (int64_t(shape.pp) * shape.vpp > kMaxPipelineStages)
    return llvm::createStringError(
        llvm::formatv("pipeline has {0} x {1} stages; at most {2} are "
                      "supported",
                      shape.pp, shape.vpp, kMaxPipelineStages)
            .str());
  if (shape.microbatches > kMaxPipelineMicrobatches)
    return llvm::createStringError(
        llvm::formatv("pipeline has {0} microbatches; at most {1} are "
                      "supported",
                      shape.microbatches, kMaxPipelineMicrobatches)
            .str());
  if (llvm::Error err = checkStageRules(infoOf(strategy), shape))
    return err;
  if (!shape.stageCosts.empty() &&
      static_cast<int32_t>(shape.stageCosts.size()) != shape.numStages())
    return llvm::createStringError(
        llvm::formatv("{0} stage costs given for {1} stages",
                      shape.stageCosts.size(), shape.numStages())
            .str());
  return llvm::Error::success();
}

/// The rounds of DualPipeV's steady phase on rank r
/// (lib/Generate/DualPipeV.cpp): each overlaps a forward with a backward.
static int64_t dualPipeVSteadyRounds(const PipelineShape &shape, int32_t r) {
  return std::max<int64_t>(
      0, int64_t(shape.microbatches) - 2 * int64_t(shape.pp) + r + 1);
}

/// The full backwards (B, not split into I and W) of DualPipeV: only its
/// steady phase has them, two per round on rank r but for the last, which
/// takes an I; the list-scheduled cool-down splits every backward.
static int64_t dualPipeVFullBackwards(const PipelineShape &shape) {
  int64_t full = 0;
  for (int32_t r = 0; r < shape.pp; ++r)
    if (const int64_t steady = dualPipeVSteadyRounds(shape, r))
      full += 2 * steady - 1;
  return full;
}

/// The weight gradients (W) DualPipe leaves split on its ranks
/// (lib/Generate/DualPipe.cpp): on rank r, with h = min(r, pp-1-r), the
/// pp/2-h-1 of phase 3, as many of phase 7, and h+1 of phase 6.
static int64_t dualPipeSplitBackwards(const PipelineShape &shape) {
  int64_t split = 0;
  for (int32_t r = 0; r < shape.pp; ++r) {
    const int64_t h = std::min(r, shape.pp - 1 - r);
    split += 2 * (shape.pp / 2 - h - 1) + h + 1;
  }
  return split;
}

int64_t sched::computeActionCount(Strategy strategy,
                                  const PipelineShape &shape) {
  // A pipeline replica visits its own stages with its own microbatches, so
  // DualPipe's 2 pp stages see M / 2 microbatches each: pp x M slots too.
  const int64_t slots = int64_t(shape.pp) * shape.vpp * shape.microbatches;
  // DualPipe and DualPipeV mix full backwards (F and B per slot) with split
  // ones (F, I and W).
  if (strategy == Strategy::DualPipeV)
    return 3 * slots - dualPipeVFullBackwards(shape);
  if (strategy == Strategy::DualPipe)
    return 2 * slots + dualPipeSplitBackwards(shape);
  return int64_t(infoOf(strategy).actionsPerSlot) * slots;
}

int64_t sched::computeOverlapCount(Strategy strategy,
                                   const PipelineShape &shape) {
  int64_t overlaps = 0;
  const int32_t pp = shape.pp;
  if (strategy == Strategy::DualPipeV) {
    // Every step of the steady phase on rank r is an overlap.
    for (int32_t r = 0; r < pp; ++r)
      overlaps += 2 * dualPipeVSteadyRounds(shape, r);
  } else if (strategy == Strategy::DualPipe) {
    // Phase 4's two per round (but the middle ranks' first F and B, run
    // apart) and phase 5's one per round.
    for (int32_t r = 0; r < pp; ++r) {
      const int64_t h = std::min(r, pp - 1 - r);
      const int64_t steady = shape.microbatches / 2 - pp + h + 1;
      overlaps += 2 * steady - (h == pp / 2 - 1) + (pp / 2 - h - 1);
    }
  } else if (strategy == Strategy::Combined1F1B) {
    // F(i+1) beside B(i).
    overlaps = shape.microbatches - 1;
  } else if (strategy == Strategy::InterleavedCombined1F1B) {
    // Every step after the warm-up (lib/Generate/InterleavedOneFOneB.cpp).
    const int64_t m = shape.microbatches;
    const int64_t groups = std::max<int64_t>(1, m / pp);
    const int64_t largestGroup = m / groups + (m % groups != 0);
    const int64_t total = int64_t(shape.vpp) * m;
    for (int32_t r = 0; r < pp; ++r)
      overlaps +=
          total - std::min(total, 2 * int64_t(pp - 1 - r) +
                                      (shape.vpp - 1) * largestGroup + 1);
  }
  return overlaps;
}

RequestSize sched::computeRequestSize(Strategy strategy,
                                      const PipelineShape &shape) {
  RequestSize size;
  size.actions = computeActionCount(strategy, shape);
  size.overlaps = computeOverlapCount(strategy, shape);
  size.microbatches = shape.microbatches;
  return size;
}

int32_t sched::defaultVpp(Strategy strategy) {
  return infoOf(strategy).impliesVPlacement ? 2 : 1;
}

llvm::Expected<Schedule> sched::generateSchedule(Strategy strategy,
                                                 const PipelineShape &shape) {
  const StrategyInfo &info = infoOf(strategy);
  if (llvm::Error err = checkPipelineShape(strategy, shape))
    return std::move(err);
  if (info.impliesVPlacement && shape.placement != StagePlacement::V) {
    // The pipeline's placement defaults to loop and the printed IR omits
    // the default, so a loop placement cannot be told from none: the V
    // strategies read it as not chosen and place stages in a V.
    PipelineShape vShape = shape;
    vShape.placement = StagePlacement::V;
    return generateSchedule(strategy, vShape);
  }
  switch (strategy) {
  case Strategy::GPipe:
    return generateGPipe(shape);
  case Strategy::OneFOneB:
    return generateOneFOneB(shape);
  case Strategy::Interleaved1F1B:
    return generateInterleavedOneFOneB(shape);
  case Strategy::LoopedBFS:
    return generateLoopedBFS(shape);
  case Strategy::ZBH1:
    return generateZBH1(shape);
  case Strategy::ZBH2:
    return generateZBH2(shape);
  case Strategy::InterleavedZB:
    return generateInterleavedZeroBubble(shape);
  case Strategy::ZBV:
    return generateZBV(shape);
  case Strategy::VHalf:
    return generateVHalf(shape);
  case Strategy::VMin:
    return generateVMin(shape);
  case Strategy::DualPipeV:
    return generateDualPipeV(shape);
  case Strategy::DualPipe:
    return generateDualPipe(shape);
  case Strategy::NoPipeline:
    return generateNoPipeline(shape);
  case Strategy::Combined1F1B:
    return generateCombinedOneFOneB(shape);
  case Strategy::InterleavedCombined1F1B:
    return generateInterleavedCombinedOneFOneB(shape);
  }
  llvm_unreachable("unknown strategy");
}

Schedule sched::emptySchedule(const PipelineShape &shape) {
  Schedule schedule;
  schedule.numStages = shape.numStages();
  schedule.numMicrobatches = shape.microbatches;
  schedule.stageCosts = shape.stageCosts;
  schedule.ranks.resize(shape.pp);
  for (int32_t r = 0; r < shape.pp; ++r)
    schedule.ranks[r].id = r;
  return schedule;
}
