//===- Search.cpp - enumerate, bound and search layouts and schedules -----===//
//
// docs/planner.md, "The search": every layout and strategy the flags allow
// is a candidate; each gets a time and a memory bound from the cost model
// alone (no schedule); in order of the time bound, candidates are measured
// for memory and simulated (Evaluation.h) until the next bound exceeds what
// the report keeps (branch and bound); Recommendation.h picks among them.
//
//===----------------------------------------------------------------------===//

#include "lib/Planner/Planner.h"

#include "lib/Planner/Evaluation.h"
#include "lib/Planner/Recommendation.h"
#include "lib/Planner/Synthesized.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <deque>
#include <chrono>
#include <cmath>
#include <map>
#include <tuple>

using namespace sched;

//===----------------------------------------------------------------------===//
// Bounds
//===----------------------------------------------------------------------===//

/// Sets the candidate's time bound (over the pipeline ranks, the largest of
/// the rank's compute plus the fill before it, plus what runs after the
/// pipeline; overlap credited in full) and memory bound (static memory plus
/// one microbatch's activations) from `stages` as the strategy runs them:
/// true lower bounds, no schedule needed.
/// `ranks` is scratch space the caller keeps between calls.
static void boundAsRun(const CostModel &model, Candidate &candidate,
                       const std::vector<StageEstimate> &stages,
                       std::vector<RankFigures> &ranks) {
  rankFigures(model, candidate.layout, candidate.strategy, stages, ranks);
  double busy = 0, tail = 0, memory = 0, sharded = 0;
  for (const RankFigures &f : ranks) {
    busy = std::max(busy, f.fill + f.busy);
    tail = std::max(tail, f.afterPipeline());
    memory = std::max(memory, f.staticBytes + f.largestActivation);
    sharded = std::max(sharded, f.staticBytes - f.memory.weights -
                                    f.memory.gradients + f.largestActivation);
  }
  candidate.timeBound = busy + tail;
  candidate.memoryBound = memory;
  candidate.shardedMemoryBound = sharded;
}

/// The bounds from the cost model's `stages`: the overlap rule
/// (stagesAsRun) copies them only for the strategies it changes, as the
/// search bounds every candidate it makes (a copy each was a fifth of
/// DeepSeek-V3's search on 2,048 devices).
static void bound(const CostModel &model, Candidate &candidate,
                  const std::vector<StageEstimate> &stages,
                  std::vector<RankFigures> &ranks) {
  if (!overlapsCommunication(candidate.strategy))
    return boundAsRun(model, candidate, stages, ranks);
  boundAsRun(model, candidate, stagesAsRun(model, stages, candidate.strategy),
             ranks);
}

//===----------------------------------------------------------------------===//
// Enumeration
//===----------------------------------------------------------------------===//

static std::vector<int64_t> divisorsUpTo(int64_t n, int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= std::min(n, limit); ++d)
    if (n % d == 0)
      out.push_back(d);
  return out;
}

static bool isPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/// The stages per rank each strategy is tried with.
static std::vector<int64_t> vppChoices(Strategy strategy) {
  switch (strategy) {
  case Strategy::Interleaved1F1B:
  case Strategy::LoopedBFS:
  case Strategy::InterleavedZB:
  case Strategy::InterleavedCombined1F1B:
    return {2, 4};
  default:
    return {defaultVpp(strategy)};
  }
}

static const Strategy kPipelineStrategies[] = {
    Strategy::GPipe,         Strategy::OneFOneB,  Strategy::Interleaved1F1B,
    Strategy::LoopedBFS,     Strategy::ZBH1,      Strategy::ZBH2,
    Strategy::InterleavedZB, Strategy::ZBV,       Strategy::VHalf,
    Strategy::VMin,          Strategy::DualPipeV, Strategy::DualPipe,
    Strategy::InterleavedCombined1F1B,
};

/// A global-batch auxiliary loss needs every forward before any backward
/// through the stages that compute it (docs/aux-loss.md): only strategies
/// with that order keep it.
static bool keepsGlobalBatchOrder(Strategy strategy) {
  return strategy == Strategy::GPipe || strategy == Strategy::LoopedBFS ||
         strategy == Strategy::NoPipeline;
}

namespace {
/// A candidate as the enumeration leaves it (its layout, schedule and
/// bounds), waiting for the branch and bound: a large search keeps ~10^6,
/// and a whole Candidate (424 bytes, most of them filled only by
/// evaluation) held 210 MB of DeepSeek-V3's search on 2,048 devices.
struct BoundedCandidate {
  Layout layout;
  Strategy strategy;
  bool synthesized;
  Family family;
  int64_t familySize;
  double timeBound, memoryBound, shardedMemoryBound;

  explicit BoundedCandidate(const Candidate &c)
      : layout(c.layout), strategy(c.strategy), synthesized(c.synthesized),
        family(c.family), familySize(c.familySize), timeBound(c.timeBound),
        memoryBound(c.memoryBound), shardedMemoryBound(c.shardedMemoryBound) {
  }
  Candidate candidate() const {
    Candidate c;
    c.layout = layout;
    c.strategy = strategy;
    c.synthesized = synthesized;
    c.family = family;
    c.familySize = familySize;
    c.timeBound = timeBound;
    c.memoryBound = memoryBound;
    c.shardedMemoryBound = shardedMemoryBound;
    return c;
  }
};

struct StageKey {
  int64_t tp, pp, vpp, ep, etp, cp, b;
  int zero;
  Recompute recompute;
  bool sequenceParallel;
  bool megatronSplit;
  int64_t first, last, offload, shardGroup;
  bool operator==(const StageKey &o) const { return !(*this < o || o < *this); }
  bool operator<(const StageKey &o) const {
    return std::tie(tp, pp, vpp, ep, etp, cp, b, zero, recompute,
                    sequenceParallel, megatronSplit, first, last, offload,
                    shardGroup) <
           std::tie(o.tp, o.pp, o.vpp, o.ep, o.etp, o.cp, o.b, o.zero,
                    o.recompute,
                    o.sequenceParallel, o.megatronSplit, o.first, o.last,
                    o.offload, o.shardGroup);
  }
};
} // namespace

/// What the cost model's stages of `candidate` depend on (DualPipe's
/// layout has one stage per rank whatever its vpp).
static StageKey stageKey(const Candidate &candidate) {
  const Layout &layout = candidate.layout;
  return StageKey{layout.tp,
                  layout.pp,
                  candidate.strategy == Strategy::DualPipe ? 1 : layout.vpp,
                  layout.ep,
                  layout.etp,
                  layout.cp,
                  layout.microbatchSize,
                  layout.zero,
                  layout.recompute,
                  layout.sequenceParallel,
                  layout.megatronSplit,
                  layout.firstStageLayers,
                  layout.lastStageLayers,
                  layout.offloadLayers,
                  layout.shardGroup};
}

/// Member `k` of a family's layout.
static Layout familyMember(Layout layout, Family family, int64_t k) {
  if (family == Family::Block)
    layout.recompute = Recompute::block(k);
  return layout;
}

/// Strategies that run without pipeline parallelism (one stage per rank).
static bool withoutPipeline(Strategy strategy) {
  return strategy == Strategy::NoPipeline ||
         strategy == Strategy::Combined1F1B;
}

//===----------------------------------------------------------------------===//
// Search
//===----------------------------------------------------------------------===//

/// The layouts to try: every dp/tp/pp/vpp/ep/cp of the devices (or the one
/// --layout fixes) with every microbatch size, ZeRO stage and
/// recomputation the options leave open.
static llvm::Expected<std::vector<Layout>>
layoutsToTry(const CostModel &model, const PlanOptions &options) {
  const ModelSpec &spec = model.getModel();
  const ClusterSpec &cluster = model.getCluster();
  const TrainingSpec &training = model.getTraining();
  const int64_t devices = training.devices;
  std::vector<Layout> layouts;
  auto addVariants = [&](Layout base) {
    // Microbatch sizes: every divisor up to 32 of the sequences of one
    // data-parallel replica (15 sequences: 1, 3, 5 and 15), so a replica's
    // batch splits into whole microbatches whatever it factors into.
    std::vector<int64_t> sizes;
    if (options.microbatchSize) {
      sizes = {*options.microbatchSize};
    } else if (training.globalBatchSequences() % base.dp == 0) {
      const int64_t perReplica = training.globalBatchSequences() / base.dp;
      for (int64_t b = 1; b <= std::min<int64_t>(perReplica, 32); ++b)
        if (perReplica % b == 0)
          sizes.push_back(b);
    }
    std::vector<int> zeros;
    if (options.zero)
      zeros = {*options.zero};
    else if (base.pp > 1)
      zeros = {1}; // DeepSpeed and Megatron shard no more under PP.
    else
      zeros = {1, 2, 3};
    std::vector<Recompute> recomputes =
        options.recompute ? std::vector<Recompute>{*options.recompute}
                          : std::vector<Recompute>{Recompute::None,
                                                   training.selectiveRecompute,
                                                   Recompute::Full};
    if (!options.recompute &&
        !model.modelsRecompute(training.selectiveRecompute))
      recomputes.erase(recomputes.begin() + 1);
    // HSDP where FSDP (ZeRO-3) traffic runs every microbatch and the
    // data-parallel group outgrows the domain: shards inside the domain
    // (the largest divisor of dp x cp whose ranks fit in the devices a
    // domain holds ranks on), replicated across domains.
    std::vector<int64_t> shardGroups = {base.shardGroup};
    const int64_t dataParallel = base.dp * base.cp;
    const int64_t placed = cluster.placedPerDomain();
    if (!options.layout && dataParallel * base.tp > placed) {
      int64_t inside = 0;
      for (int64_t s = std::min(dataParallel - 1, placed / base.tp);
           s >= 2 && !inside; --s)
        if (dataParallel % s == 0 &&
            base.expertDataParallel() % (dataParallel / s) == 0)
          inside = s;
      if (inside)
        shardGroups.push_back(inside);
    }
    for (int64_t b : sizes)
      for (int zero : zeros)
        for (int64_t shardGroup : shardGroups)
          for (Recompute recompute : recomputes) {
            if (shardGroup != base.shardGroup && zero < 3)
              continue;
            Layout layout = base;
            layout.microbatchSize = b;
            layout.zero = zero;
            layout.shardGroup = shardGroup;
            layout.recompute = recompute;
            layouts.push_back(layout);
          }
  };
  if (options.layout) {
    Layout fixed = *options.layout;
    if (options.zero)
      fixed.zero = *options.zero;
    if (options.microbatchSize)
      fixed.microbatchSize = *options.microbatchSize;
    Layout probe = fixed;
    if (llvm::Error error = model.checkLayout(probe))
      return std::move(error);
    addVariants(fixed);
  } else {
    const int64_t maxTp = std::max<int64_t>(
        1, std::min<int64_t>(cluster.domainSize, 16));
    for (int64_t tp : divisorsUpTo(devices, maxTp)) {
      if (!isPowerOfTwo(tp) || spec.heads % tp != 0)
        continue;
      for (int64_t cp : {1, 2, 4, 8}) {
        if (devices % (tp * cp) != 0 ||
            (cp > 1 && training.seqLen % (2 * cp) != 0) ||
            (cp > 1 && training.seqLen / cp < 512))
          continue;
        for (int64_t pp :
             divisorsUpTo(devices / (tp * cp), std::min<int64_t>(spec.layers, 64))) {
          const int64_t dp = devices / (tp * cp * pp);
          std::vector<int64_t> eps = {1};
          if (spec.moe)
            for (int64_t ep = 2; ep <= spec.moe->experts; ep *= 2)
              if (spec.moe->experts % ep == 0 && (dp * cp * tp) % ep == 0)
                eps.push_back(ep);
          for (int64_t ep : eps) {
            // Expert tensor parallelism: the experts unsplit (etp 1) or
            // split as the dense layers are (etp = tp, Megatron's default
            // when --expert-tensor-parallel-size is not given), where the
            // expert grid etp x ep fits in the dp x cp x tp block. Only at
            // the largest ep the layout allows: below it a larger ep
            // splits the expert weights as far without splitting the
            // expert GEMMs or adding their tensor-parallel collectives
            // (docs/planner.md, "Expert tensor parallelism").
            std::vector<int64_t> etps = {1};
            if (spec.moe && tp > 1 && ep == eps.back() &&
                (dp * cp * tp) % (ep * tp) == 0)
              etps.push_back(tp);
            for (int64_t etp : etps)
              for (int64_t vpp : {1, 2, 4}) {
                if (pp == 1 && vpp > 1)
                  continue;
                Layout layout;
                layout.dp = dp;
                layout.tp = tp;
                layout.pp = pp;
                layout.vpp = vpp;
                layout.ep = ep;
                layout.etp = etp;
                layout.cp = cp;
                addVariants(layout);
              }
          }
        }
      }
    }
  }

  return layouts;
}

llvm::Expected<PlanResult> sched::plan(const CostModel &model,
                                       const PlanOptions &options) {
  const auto started = std::chrono::steady_clock::now();
  if (llvm::Error error = model.checkTraining())
    return std::move(error);
  const ModelSpec &spec = model.getModel();
  const TrainingSpec &training = model.getTraining();
  const int64_t devices = training.devices;

  if (options.onlySynthesized && spec.auxLoss == AuxLossScope::GlobalBatch)
    return llvm::createStringError(
        "synthesized schedules do not keep the model's global_batch "
        "auxiliary loss yet (every microbatch's forward before any "
        "backward): use gpipe, looped-bfs or no-pp, or an aux_free, "
        "sequence or microbatch scope");
  if (options.strategy && spec.auxLoss == AuxLossScope::GlobalBatch &&
      !keepsGlobalBatchOrder(*options.strategy))
    return llvm::createStringError(
        strategyName(*options.strategy) +
        " cannot honour the model's global_batch auxiliary loss (every "
        "microbatch's forward must come before any backward): use gpipe, "
        "looped-bfs or no-pp, or an aux_free, sequence or microbatch scope");

  llvm::Expected<std::vector<Layout>> layouts = layoutsToTry(model, options);
  if (!layouts)
    return layouts.takeError();

  PlanResult result;
  // A deque: no copies as it grows.
  std::deque<BoundedCandidate> candidates;
  // Candidates whose bound alone overflows memory are pruned as they are
  // made (most of a large search), but the nearest three are kept to
  // explain an empty table.
  const double limit = model.memoryLimit();
  const bool pruneByMemory = !options.layout && !options.exhaustive;
  // A max-heap on the memory bound: its front is the farthest kept.
  std::vector<Candidate> nearestOver;
  auto lessMemory = [](const Candidate &a, const Candidate &b) {
    return a.memoryBound < b.memoryBound;
  };
  size_t considered = 0;
  auto consider = [&](const Candidate &candidate) {
    ++considered;
    if (!pruneByMemory || candidate.memoryBound <= limit) {
      candidates.emplace_back(candidate);
      return;
    }
    ++result.prunedMemory;
    if (nearestOver.size() < 3) {
      nearestOver.push_back(candidate);
      std::push_heap(nearestOver.begin(), nearestOver.end(), lessMemory);
    } else if (candidate.memoryBound < nearestOver.front().memoryBound) {
      std::pop_heap(nearestOver.begin(), nearestOver.end(), lessMemory);
      nearestOver.back() = candidate;
      std::push_heap(nearestOver.begin(), nearestOver.end(), lessMemory);
    }
  };
  std::map<StageKey, std::vector<StageEstimate>> stageCache;
  // The cost model's stages of a candidate, computed once per StageKey
  // (std::map keeps references valid as it grows).
  // The ZeRO stage and shard group change a stage's static memory only:
  // other ZeRO stages reuse the ZeRO-1 stages' costs (CostModel::shard).
  auto stagesOf = [&](const Candidate &c) -> const std::vector<StageEstimate> & {
    const StageKey key = stageKey(c);
    auto it = stageCache.find(key);
    if (it != stageCache.end())
      return it->second;
    Candidate plain = c;
    plain.layout.zero = 1;
    plain.layout.shardGroup = 0;
    const StageKey plainKey = stageKey(plain);
    auto base = stageCache.find(plainKey);
    if (base == stageCache.end())
      base = stageCache.emplace(plainKey, model.stages(plain.layout)).first;
    if (plainKey == key)
      return base->second;
    std::vector<StageEstimate> sharded = base->second;
    model.shard(sharded, c.layout);
    return stageCache.emplace(key, std::move(sharded)).first->second;
  };
  // Layouts come grouped by their parallel dimensions, and a key (which
  // leaves dp out) recurs only inside a group: the cache is emptied
  // between layouts once it holds kStageCacheEntries, as every key kept
  // held 400 MB of DeepSeek-V3's search on 2,048 devices (93,765 keys,
  // each used by a layout's few strategies). Nothing references it there.
  constexpr size_t kStageCacheEntries = 4096;
  // The bounds' per-rank figures, one vector for every candidate.
  std::vector<RankFigures> rankScratch;
  std::string firstLayoutError;
  for (Layout layout : *layouts) {
    if (stageCache.size() > kStageCacheEntries)
      stageCache.clear();
    if (llvm::Error error = model.checkLayout(layout)) {
      if (firstLayoutError.empty())
        firstLayoutError = llvm::toString(std::move(error));
      else
        llvm::consumeError(std::move(error));
      continue;
    }
    // Each strategy, and whether its order is synthesized (then the
    // strategy gives the stage placement, Synthesized.h).
    std::vector<std::pair<Strategy, bool>> strategies;
    if (options.strategy)
      strategies = {{*options.strategy, false}};
    else if (layout.pp == 1 && !options.onlySynthesized)
      strategies = {{Strategy::NoPipeline, false},
                    {Strategy::Combined1F1B, false}};
    else if (!options.onlySynthesized)
      for (Strategy strategy : kPipelineStrategies)
        strategies.push_back({strategy, false});
    if (options.synthesize && layout.pp > 1 &&
        spec.auxLoss != AuxLossScope::GlobalBatch)
      for (Strategy placement : synthesizedPlacements(layout.vpp))
        strategies.push_back({placement, true});
    if (options.onlySynthesized && layout.pp == 1 && firstLayoutError.empty())
      firstLayoutError = llvm::formatv(
          "layout {0} with synthesized: a synthesized schedule needs "
          "pipeline parallelism (pp >= 2), got pp = 1",
          layout.str());
    for (auto [strategy, synthesized] : strategies) {
      if (withoutPipeline(strategy) != (layout.pp == 1)) {
        // Said only when a pinned schedule leaves no layout at all.
        if (firstLayoutError.empty())
          firstLayoutError = llvm::formatv(
              "layout {0} with {1}: {1} {2}, got pp = {3}", layout.str(),
              strategyName(strategy),
              withoutPipeline(strategy) ? "runs without pipeline parallelism "
                                          "(pp = 1)"
                                        : "needs pipeline parallelism "
                                          "(pp >= 2)",
              layout.pp);
        continue;
      }
      // Combined 1F1B exists to hide the expert all-to-all; without one
      // it only keeps two microbatches alive.
      if ((strategy == Strategy::Combined1F1B ||
           strategy == Strategy::InterleavedCombined1F1B) &&
          !options.strategy && (!spec.moe || layout.ep == 1))
        continue;
      if (spec.auxLoss == AuxLossScope::GlobalBatch &&
          !keepsGlobalBatchOrder(strategy))
        continue;
      // A synthesized schedule is asked for by name (--synthesize); the
      // stack's list is of the strategies it ships.
      if (!synthesized &&
          !model.getTraining().runsSchedule(strategyName(strategy)))
        continue;
      Candidate candidate;
      candidate.layout = layout;
      candidate.strategy = strategy;
      candidate.synthesized = synthesized;
      // DualPipe runs two replicas of a pp-stage pipeline: vpp 1 in the
      // layout, two stages per rank in the schedule.
      const std::vector<int64_t> vpps =
          options.layout ? std::vector<int64_t>{layout.vpp} : vppChoices(strategy);
      if (!llvm::is_contained(vpps, layout.vpp))
        continue;
      PipelineShape probe;
      probe.pp = static_cast<int32_t>(layout.pp);
      probe.vpp = static_cast<int32_t>(layout.vpp);
      probe.microbatches = static_cast<int32_t>(
          std::min<int64_t>(layout.microbatches, INT32_MAX));
      // A schedule is generated for every candidate the search reaches:
      // one of more than kMaxActions compute actions (about 100 MB to simulate) is left
      // out, and says so if nothing else is left.
      constexpr int64_t kMaxActions = int64_t(1) << 21;
      if (layout.microbatches > kMaxActions / 3 ||
          3 * layout.pp * layout.vpp * layout.microbatches > kMaxActions) {
        ++result.prunedSize;
        if (firstLayoutError.empty())
          firstLayoutError = llvm::formatv(
              "layout {0}: {1} microbatches through {2} stages is more than "
              "the planner generates (2^21 actions); raise the microbatch "
              "size or lower the global batch",
              layout.str(), layout.microbatches, layout.pp * layout.vpp);
        continue;
      }
      if (llvm::Error error = synthesized
                                  ? llvm::Error::success()
                                  : checkPipelineShape(strategy, probe)) {
        if (firstLayoutError.empty())
          firstLayoutError = "layout " + layout.str() + " with " +
                             strategyName(strategy).str() + ": " +
                             llvm::toString(std::move(error));
        else
          llvm::consumeError(std::move(error));
        continue;
      }
      const std::vector<StageEstimate> &stages = stagesOf(candidate);
      bound(model, candidate, stages, rankScratch);
      consider(candidate);
      // The least recomputation that fits, where the flags leave it open:
      // a block of k layers per stage recomputed in place of all of them.
      // Offload is not searched (docs/planner.md says why): only a layout
      // that names it gets it.
      int64_t largestStage = 0;
      for (const StageEstimate &stage : stages)
        largestStage = std::max(largestStage, stage.numLayers);
      Family family = Family::None;
      if (!options.recompute && layout.recompute == Recompute::Full)
        family = Family::Block;
      // No member needs less memory than full recomputation: a family
      // whose full member is pruned by memory is not made.
      if (family != Family::None && largestStage >= 2 &&
          !(pruneByMemory && candidate.memoryBound > limit)) {
        // Bounds every member keeps: the time of the first member (the
        // least recomputation), the memory of the layout that recomputes
        // every layer.
        Candidate member = candidate;
        member.family = family;
        member.familySize = largestStage - 1;
        member.layout = familyMember(layout, family, 1);
        bound(model, member, stagesOf(member), rankScratch);
        member.memoryBound = candidate.memoryBound;
        consider(member);
      }
      // ZeRO-2/3 with PP (gradients, then weights, sharded and gathered or
      // reduced every microbatch) only pay in memory and never in time:
      // tried for a --layout whose ZeRO-1 memory bound overflows and could
      // fit with its weights and gradients sharded (docs/planner.md says
      // why not in the free search).
      if (options.layout && layout.pp > 1 && !options.zero &&
          layout.zero == 1 && candidate.memoryBound > limit &&
          candidate.shardedMemoryBound <= limit)
        for (int zero : {2, 3}) {
          Candidate sharded = candidate;
          sharded.layout.zero = zero;
          bound(model, sharded, stagesOf(sharded), rankScratch);
          consider(sharded);
        }
    }
  }
  result.considered = considered;
  if (considered == 0)
    return llvm::createStringError(
        firstLayoutError.empty()
            ? llvm::formatv("no layout of the {0} devices suits this model "
                            "and batch: dp x tp x pp x cp must be {0}, with "
                            "dp dividing the {1} sequences and pp at most "
                            "the {2} layers",
                            devices, training.globalBatchSequences(),
                            spec.layers)
                  .str()
            : firstLayoutError);

  // The branch and bound reaches a few thousand candidates in the order of
  // their bounds: it fills the cache again with theirs.
  stageCache.clear();
  std::vector<const BoundedCandidate *> open;
  open.reserve(candidates.size());
  for (const BoundedCandidate &candidate : candidates)
    open.push_back(&candidate);
  // The nearest of the memory-pruned, nearest first.
  std::sort_heap(nearestOver.begin(), nearestOver.end(), lessMemory);
  for (Candidate &candidate : nearestOver) {
    candidate.fits = false;
    candidate.overflow = "at least " + formatGigabytes(candidate.memoryBound) +
                         " (static memory and one microbatch's "
                         "activations) over the " +
                         formatGigabytes(limit) + " usable";
    result.overflowing.push_back(std::move(candidate));
  }
  llvm::stable_sort(open, [](const BoundedCandidate *a,
                             const BoundedCandidate *b) {
    return a->timeBound < b->timeBound;
  });

  // Branch and bound, in order of the time bound.
  CandidateEvaluator evaluator(model, options.orderCacheBytes);
  std::vector<Candidate> fitting;
  std::vector<double> times; // sorted step times of fitting candidates
  double bestWithout = INFINITY, bestWith = INFINITY;
  const size_t top = static_cast<size_t>(std::max(options.top, 1));
  size_t done = 0;
  for (const BoundedCandidate *next : open) {
    const double kth = times.size() >= top ? times[top - 1] : INFINITY;
    const double best = times.empty() ? INFINITY : times.front();
    const double classBest = next->layout.pp > 1 ? bestWith : bestWithout;
    if (!options.exhaustive && next->timeBound > kth &&
        next->timeBound > classBest && next->timeBound > 1.03 * best) {
      ++result.prunedBound;
      continue;
    }
    Candidate candidate = next->candidate();
    if (options.maxEvaluations > 0 &&
        result.lowered >= static_cast<size_t>(options.maxEvaluations)) {
      result.truncated = true;
      ++result.leftByCap;
      continue;
    }
    if (options.progress && (++done % 64 == 0))
      options.progress(done, open.size());
    auto failed = [&](llvm::Error error) {
      return llvm::createStringError("planner: " + candidate.layout.str() +
                                     " " + candidate.scheduleName().str() +
                                     ": " + llvm::toString(std::move(error)));
    };
    if (candidate.family != Family::None) {
      // Memory falls and time grows with k: the smallest k that fits is
      // the family's best member (bisection over its members).
      const Layout first = candidate.layout;
      auto member = [&](int64_t k) {
        Candidate c = candidate;
        c.family = Family::None;
        c.layout = familyMember(first, candidate.family, k);
        return c;
      };
      Candidate largest = member(candidate.familySize);
      // Every member runs the same schedule: the most stage-microbatches
      // each rank holds at once (known once any layout with that schedule
      // was walked) bound a member's peak from above (with its largest
      // activation), one microbatch bounds it from below, and the schedule
      // is walked again only where the two disagree.
      const double limit = model.memoryLimit();
      auto fits = [&](Candidate &c) -> llvm::Expected<bool> {
        // A synthesized order fits whenever some order does.
        if (c.synthesized)
          return synthesisFits(model, c, stagesOf(c));
        if (const std::vector<double> *most = evaluator.mostInFlight(c)) {
          std::vector<RankFigures> ranks = rankFigures(
              model, c.layout, c.strategy,
              stagesAsRun(model, stagesOf(c), c.strategy));
          double upper = 0, lower = 0;
          for (size_t r = 0; r < ranks.size(); ++r) {
            const double held = r < most->size() ? (*most)[r] : 1;
            upper = std::max(upper, ranks[r].staticBytes +
                                        held * ranks[r].largestActivation);
            lower = std::max(lower, ranks[r].staticBytes +
                                        ranks[r].largestActivation);
          }
          if (upper <= limit)
            return true;
          if (lower > limit)
            return false;
        }
        if (llvm::Error error = evaluator.measureMemory(c, stagesOf(c)))
          return std::move(error);
        ++result.memoryChecked;
        return c.fits;
      };
      llvm::Expected<bool> any = fits(largest);
      if (!any)
        return failed(any.takeError());
      if (!*any) {
        if (!largest.evaluated && largest.memory.peak == 0)
          if (llvm::Error error =
                  evaluator.measureMemory(largest, stagesOf(largest)))
            return failed(std::move(error));
        result.overflowing.push_back(largest);
        continue;
      }
      int64_t lo = 1, hi = candidate.familySize;
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        Candidate c = member(mid);
        llvm::Expected<bool> ok = fits(c);
        if (!ok)
          return failed(ok.takeError());
        if (*ok)
          hi = mid;
        else
          lo = mid + 1;
      }
      Candidate chosen = member(lo);
      // The member's own bound is tighter than the family's: it may prune.
      bound(model, chosen, stagesOf(chosen), rankScratch);
      if (!options.exhaustive && chosen.timeBound > kth &&
          chosen.timeBound > classBest && chosen.timeBound > 1.03 * best) {
        ++result.prunedBound;
        continue;
      }
      candidate = std::move(chosen);
      if (llvm::Error error =
              evaluator.measureMemory(candidate, stagesOf(candidate)))
        return failed(std::move(error));
      ++result.memoryChecked;
    } else {
      // A synthesized order costs a solve: its problem's lower bound, with
      // what runs after the pipeline, may prune it first.
      if (candidate.synthesized) {
        const std::vector<StageEstimate> &stages = stagesOf(candidate);
        double tail = 0;
        for (const RankFigures &f : rankFigures(model, candidate.layout,
                                                candidate.strategy, stages))
          tail = std::max(tail, f.afterPipeline());
        candidate.timeBound = std::max(
            candidate.timeBound,
            synthesizedMakespanBound(model, candidate, stages) + tail);
        if (!options.exhaustive && candidate.timeBound > kth &&
            candidate.timeBound > classBest &&
            candidate.timeBound > 1.03 * best) {
          ++result.prunedBound;
          continue;
        }
      }
      if (llvm::Error error =
              evaluator.measureMemory(candidate, stagesOf(candidate)))
        return failed(std::move(error));
      ++result.memoryChecked;
    }
    const std::vector<StageEstimate> &stages = stagesOf(candidate);
    if (!candidate.fits) {
      result.overflowing.push_back(candidate);
      continue;
    }
    if (llvm::Error error =
            evaluator.simulateStep(candidate, stages, /*detailed=*/false))
      return failed(std::move(error));
    ++result.lowered;
    times.insert(llvm::upper_bound(times, candidate.stepTime),
                 candidate.stepTime);
    (candidate.hasPipeline() ? bestWith : bestWithout) =
        std::min(candidate.hasPipeline() ? bestWith : bestWithout,
                 candidate.stepTime);
    fitting.push_back(candidate);
  }
  if (options.progress)
    options.progress(open.size(), open.size());

  evaluator.releaseMemoryWalks();
  recommend(model, evaluator, options, std::move(fitting), result);
  result.ordersGenerated = evaluator.ordersGenerated();
  llvm::stable_sort(result.overflowing, [](const Candidate &a,
                                           const Candidate &b) {
    const double pa = a.evaluated || a.memory.peak > 0 ? a.memory.peak
                                                       : a.memoryBound;
    const double pb = b.evaluated || b.memory.peak > 0 ? b.memory.peak
                                                       : b.memoryBound;
    return pa < pb;
  });
  if (result.overflowing.size() > 3)
    result.overflowing.resize(3);

  result.reason = recommendationReason(model, options, result);
  result.seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - started)
                       .count();
  return result;
}
