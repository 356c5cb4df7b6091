//===- Planner.cpp - search layouts and schedules for a training run ------===//

#include "lib/Planner/Planner.h"

#include "lib/Lower/InsertTransfers.h"
#include "lib/Simulate/Simulate.h"
#include "lib/Verify/Verifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <tuple>

using namespace sched;

int Candidate::dimensions() const {
  return (layout.tp > 1) + (layout.pp > 1) + (layout.ep > 1) + (layout.cp > 1);
}

/// Strategies whose steady phase runs a forward and a backward of two
/// chunks together (sched.overlap): one chunk's expert all-to-all hides
/// under the other's compute (DeepSeek-V3 report, section 3.2.1).
static bool overlapsCommunication(Strategy strategy) {
  return strategy == Strategy::DualPipe || strategy == Strategy::DualPipeV ||
         strategy == Strategy::Combined1F1B ||
         strategy == Strategy::InterleavedCombined1F1B;
}

/// Strategies that run without pipeline parallelism (one stage per rank).
static bool withoutPipeline(Strategy strategy) {
  return strategy == Strategy::NoPipeline ||
         strategy == Strategy::Combined1F1B;
}

/// The share of a schedule's forwards and backwards that run in an overlap
/// pair: only those have a partner to hide their all-to-all under (the
/// warm-up and cool-down run alone).
static double pairedShare(const Schedule &schedule) {
  size_t compute = 0, paired = 0;
  for (const RankProgram &rank : schedule.ranks)
    for (const Action &action : rank.actions)
      if (isCompute(action.kind)) {
        ++compute;
        paired += action.bundle != 0;
      }
  return compute ? static_cast<double>(paired) / compute : 0;
}

/// Stage times as `strategy` runs them, by one rule for every schedule
/// with overlap pairs (DualPipe, DualPipe-V, combined 1F1B and its
/// interleaved variant): the expert all-to-all of an action in a pair hides
/// under as much compute of its partner, taken to be as long as its own;
/// `paired` is the share of actions in pairs (1 for a bound, the
/// schedule's own share once it is generated). While it hides, the
/// all-to-all kernels hold SMs the partner's compute lacks
/// (Efficiency::computeShareBeside).
static std::vector<StageEstimate> forStrategy(const CostModel &model,
                                              std::vector<StageEstimate> stages,
                                              Strategy strategy,
                                              double paired = 1) {
  if (!overlapsCommunication(strategy))
    return stages;
  const Efficiency &eff = model.getCluster().efficiency;
  const double share = eff.computeShareBeside(eff.allToAllMultiprocessors);
  for (StageEstimate &stage : stages) {
    auto hide = [share, paired](double &time, StageTerms &terms) {
      const double comm = terms.expertParallel;
      const double hidden = paired * std::min(comm, time - comm);
      const double slower = hidden * (1 / share - 1);
      terms.expertParallel -= hidden;
      terms.matmul += slower;
      time += slower - hidden;
    };
    hide(stage.forward, stage.forwardTerms);
    hide(stage.backwardInput, stage.backwardTerms);
  }
  return stages;
}

namespace {
/// A stage a rank runs, and how many microbatches pass through it there.
struct Holding {
  int32_t stage;
  double microbatches;
};
} // namespace

/// Which stages (indices into the cost model's stages) each rank holds.
static std::vector<std::vector<Holding>>
holdings(const Layout &layout, Strategy strategy) {
  const int32_t pp = static_cast<int32_t>(layout.pp);
  const double m = static_cast<double>(layout.microbatches);
  std::vector<std::vector<Holding>> ranks(pp);
  if (strategy == Strategy::DualPipe) {
    // Two replicas, one fed from each end: rank r runs stage r of the
    // first and stage pp-1-r of the second, half the microbatches each.
    for (int32_t r = 0; r < pp; ++r) {
      ranks[r].push_back({r, m / 2});
      ranks[r].push_back({pp - 1 - r, m / 2});
    }
    return ranks;
  }
  const int32_t numStages = static_cast<int32_t>(layout.pp * layout.vpp);
  const StagePlacement placement =
      defaultVpp(strategy) == 2 ? StagePlacement::V : StagePlacement::Loop;
  for (int32_t s = 0; s < numStages; ++s)
    ranks[rankOfStage(s, pp, placement)].push_back({s, m});
  return ranks;
}

namespace {
/// Per-rank figures the bound and the evaluation share.
struct RankFigures {
  double busy = 0;
  /// The forward of the stages before this rank's first one: no schedule
  /// can start the rank before a microbatch has passed them (the fill every
  /// pipeline pays).
  double fill = 0;
  double forwardPerMicrobatch = 0;
  double backwardPerMicrobatch = 0;
  double staticBytes = 0;
  double largestActivation = 0;
  DataParallelCost dataParallel;
  StepBreakdown time;
  MemoryBreakdown memory;
};
} // namespace

static std::vector<RankFigures>
rankFigures(const CostModel &model, const Layout &layout, Strategy strategy,
            const std::vector<StageEstimate> &stages) {
  std::vector<std::vector<Holding>> held = holdings(layout, strategy);
  std::vector<double> before(stages.size() + 1, 0);
  for (size_t s = 0; s < stages.size(); ++s)
    before[s + 1] = before[s] + stages[s].forward;
  std::vector<RankFigures> ranks(held.size());
  for (size_t r = 0; r < held.size(); ++r) {
    RankFigures &f = ranks[r];
    f.fill = INFINITY;
    for (const Holding &h : held[r])
      f.fill = std::min(f.fill, before[h.stage]);
    if (held[r].empty())
      f.fill = 0;
    std::vector<const StageEstimate *> pointers;
    for (const Holding &h : held[r]) {
      const StageEstimate &s = stages[h.stage];
      pointers.push_back(&s);
      f.busy += h.microbatches * (s.forward + s.backwardInput + s.backwardWeight);
      f.forwardPerMicrobatch += s.forward;
      f.backwardPerMicrobatch += s.backwardInput + s.backwardWeight;
      f.staticBytes += s.staticBytes();
      f.largestActivation = std::max(f.largestActivation, s.activationBytes);
      f.memory.weights += s.weightBytes;
      f.memory.gradients += s.gradientBytes;
      f.memory.optimizer += s.optimizerBytes;
      const StageTerms &a = s.forwardTerms, &b = s.backwardTerms;
      f.time.compute +=
          h.microbatches * (a.matmul + a.attention + a.memoryBound +
                            b.matmul + b.attention + b.memoryBound +
                            b.recompute + s.backwardWeight);
      f.time.tensorParallel +=
          h.microbatches * (a.tensorParallel + b.tensorParallel);
      f.time.contextParallel +=
          h.microbatches * (a.contextParallel + b.contextParallel);
      f.time.expertParallel +=
          h.microbatches * (a.expertParallel + b.expertParallel);
    }
    f.dataParallel = model.dataParallel(layout, pointers, f.forwardPerMicrobatch,
                                        f.backwardPerMicrobatch);
    f.time.dataParallel = f.dataParallel.exposed;
    f.time.optimizer = f.dataParallel.optimizer;
  }
  return ranks;
}

static double afterPipeline(const RankFigures &f) {
  return f.dataParallel.exposed + f.dataParallel.optimizer;
}

static void bound(const CostModel &model, Candidate &candidate,
                  const std::vector<StageEstimate> &stages) {
  std::vector<RankFigures> ranks =
      rankFigures(model, candidate.layout, candidate.strategy, stages);
  double busy = 0, tail = 0, memory = 0;
  for (const RankFigures &f : ranks) {
    busy = std::max(busy, f.fill + f.busy);
    tail = std::max(tail, afterPipeline(f));
    memory = std::max(memory, f.staticBytes + f.largestActivation);
  }
  candidate.timeBound = busy + tail;
  candidate.memoryBound = memory;
}

static StageCost toStageCost(const StageEstimate &s) {
  StageCost cost;
  cost.forward = s.forward;
  cost.backwardInput = s.backwardInput;
  cost.backwardWeight = s.backwardWeight;
  cost.activation = std::max<int64_t>(1, std::llround(s.activationBytes));
  cost.weightGrad = std::llround(s.weightGradBytes);
  cost.parameters = std::llround(s.staticBytes());
  cost.output = std::max<int64_t>(1, std::llround(s.outputBytes));
  return cost;
}

static PipelineShape shapeOf(const Candidate &candidate,
                             const std::vector<StageEstimate> &stages) {
  PipelineShape shape;
  shape.pp = static_cast<int32_t>(candidate.layout.pp);
  shape.vpp = static_cast<int32_t>(candidate.layout.vpp);
  shape.microbatches = static_cast<int32_t>(candidate.layout.microbatches);
  for (const StageEstimate &s : stages)
    shape.stageCosts.push_back(toStageCost(s));
  return shape;
}

static std::string gigabytes(double bytes) {
  return llvm::formatv("{0:f1} GB", bytes / 1e9).str();
}

std::vector<StageEstimate> sched::candidateStages(const CostModel &model,
                                                  const Candidate &candidate) {
  Layout layout = candidate.layout;
  if (candidate.strategy == Strategy::DualPipe)
    layout.vpp = 1;
  return model.stages(layout);
}

/// The cost of schedule stage `stage`: DualPipe's second replica repeats
/// the first's stages.
static const StageCost &costOf(const std::vector<StageCost> &costs,
                               int32_t stage) {
  return costs[static_cast<size_t>(stage) % costs.size()];
}

namespace {
/// The generators order actions without looking at stage costs, so one
/// order per (strategy, pp, vpp, microbatches) serves every layout that
/// shares it: memory is measured on it exactly, before any simulation.
class Evaluator {
public:
  explicit Evaluator(const CostModel &model) : model(model) {}

  /// Sets the candidate's memory figures, `fits` and `overflow`, from the
  /// peak of static bytes plus live activations on each rank.
  llvm::Error measureMemory(Candidate &candidate,
                            const std::vector<StageEstimate> &stages);
  /// Simulates the candidate's step (after measureMemory). With
  /// `detailed`, also splits the idle time into bubble and transfers.
  llvm::Error simulateStep(Candidate &candidate,
                           const std::vector<StageEstimate> &stages,
                           bool detailed);

private:
  llvm::Expected<const Schedule *> order(const Candidate &candidate);

  const CostModel &model;
  std::map<std::tuple<Strategy, int64_t, int64_t, int64_t>, Schedule> orders;
  size_t cachedActions = 0;
};
} // namespace

llvm::Expected<const Schedule *> Evaluator::order(const Candidate &candidate) {
  const int64_t vpp =
      candidate.strategy == Strategy::DualPipe ? 1 : candidate.layout.vpp;
  auto key = std::make_tuple(candidate.strategy, candidate.layout.pp, vpp,
                             candidate.layout.microbatches);
  auto it = orders.find(key);
  if (it != orders.end())
    return &it->second;
  PipelineShape shape;
  shape.pp = static_cast<int32_t>(candidate.layout.pp);
  shape.vpp = static_cast<int32_t>(vpp);
  shape.microbatches = static_cast<int32_t>(candidate.layout.microbatches);
  llvm::Expected<Schedule> generated =
      generateSchedule(candidate.strategy, shape);
  if (!generated)
    return generated.takeError();
  // Orders are kept while they take fewer than 2^22 actions in all (about
  // 200 MB); past that the cache starts over.
  const size_t actions = generated->numActions();
  if (cachedActions + actions > (size_t(1) << 22)) {
    orders.clear();
    cachedActions = 0;
  }
  cachedActions += actions;
  return &orders.emplace(key, std::move(*generated)).first->second;
}

llvm::Error Evaluator::measureMemory(Candidate &candidate,
                                     const std::vector<StageEstimate> &stages) {
  llvm::Expected<const Schedule *> schedule = order(candidate);
  if (!schedule)
    return schedule.takeError();
  const std::vector<StageEstimate> run =
      forStrategy(model, stages, candidate.strategy, pairedShare(**schedule));
  std::vector<StageCost> costs;
  for (const StageEstimate &s : run)
    costs.push_back(toStageCost(s));
  std::vector<RankFigures> ranks =
      rankFigures(model, candidate.layout, candidate.strategy, run);
  const double limit = model.memoryLimit();
  double peak = -1, peakActivation = 0, peakCount = 0;
  size_t fullest = 0;
  for (size_t r = 0; r < (*schedule)->ranks.size(); ++r) {
    // The simulator's accounting: F keeps the activation, I frees all but
    // the part W needs, W frees that, B frees everything.
    double live = 0, count = 0, high = 0, highCount = 0;
    for (const Action &a : (*schedule)->ranks[r].actions) {
      if (!isCompute(a.kind))
        continue;
      const StageCost &c = costOf(costs, a.stage);
      const double act = static_cast<double>(c.activation);
      const double keep = static_cast<double>(c.weightGrad);
      switch (a.kind) {
      case ActionKind::Forward:
        live += act;
        count += 1;
        break;
      case ActionKind::Backward:
        live -= act;
        count -= 1;
        break;
      case ActionKind::BackwardInput:
        live -= act - keep;
        count -= act > 0 ? 1 - keep / act : 1;
        break;
      default:
        live -= keep;
        count -= act > 0 ? keep / act : 0;
        break;
      }
      if (live > high) {
        high = live;
        highCount = count;
      }
    }
    const double bytes = ranks[r].staticBytes + high;
    if (bytes > peak) {
      peak = bytes;
      fullest = r;
      peakActivation = high;
      peakCount = highCount;
    }
  }
  candidate.memory = ranks[fullest].memory;
  candidate.memory.activations = peakActivation;
  candidate.memory.peak = peak;
  candidate.memory.limit = limit;
  candidate.fits = peak <= limit;
  candidate.overflow.clear();
  if (!candidate.fits) {
    const double fixed = ranks[fullest].staticBytes;
    if (fixed > limit)
      candidate.overflow = llvm::formatv(
          "weights, gradients and optimizer state alone take {0} on pipeline "
          "rank {1} ({2} weights, {3} gradients, {4} optimizer), over the "
          "{5} usable",
          gigabytes(fixed), fullest, gigabytes(candidate.memory.weights),
          gigabytes(candidate.memory.gradients),
          gigabytes(candidate.memory.optimizer), gigabytes(limit));
    else
      candidate.overflow = llvm::formatv(
          "activations in flight ({0}, {1} stage-microbatches at the peak) on "
          "top of {2} of weights, gradients and optimizer state exceed the "
          "{3} usable on pipeline rank {4}",
          gigabytes(peakActivation), formatNumber(peakCount), gigabytes(fixed),
          gigabytes(limit), fullest);
  }
  return llvm::Error::success();
}

llvm::Error Evaluator::simulateStep(Candidate &candidate,
                                    const std::vector<StageEstimate> &stages,
                                    bool detailed) {
  llvm::Expected<const Schedule *> cached = order(candidate);
  if (!cached)
    return cached.takeError();
  const std::vector<StageEstimate> run =
      forStrategy(model, stages, candidate.strategy, pairedShare(**cached));
  Schedule schedule = **cached;
  schedule.stageCosts.clear();
  for (int32_t s = 0; s < schedule.numStages; ++s)
    schedule.stageCosts.push_back(toStageCost(run[s % run.size()]));
  const double p2p = model.p2pTime(candidate.layout, stages.front().outputBytes);
  SimulationOptions withComm;
  withComm.comm = p2p;
  llvm::Expected<Timeline> timeline = simulate(schedule, withComm);
  if (!timeline)
    return timeline.takeError();
  std::optional<Timeline> computeOnly;
  if (detailed) {
    llvm::Expected<Timeline> t = simulate(schedule, SimulationOptions());
    if (!t)
      return t.takeError();
    computeOnly = std::move(*t);
  }

  std::vector<RankFigures> ranks =
      rankFigures(model, candidate.layout, candidate.strategy, run);
  // The simulator numbers ranks as the schedule does: pipeline rank r.
  double tail = 0;
  size_t critical = 0;
  double worst = -1;
  for (size_t r = 0; r < ranks.size(); ++r) {
    tail = std::max(tail, afterPipeline(ranks[r]));
    const double total = timeline->busy[r] + afterPipeline(ranks[r]);
    if (total > worst) {
      worst = total;
      critical = r;
    }
  }
  candidate.evaluated = true;
  candidate.detailed = detailed;
  candidate.makespan = timeline->makespan;
  candidate.stepTime = timeline->makespan + tail;
  candidate.time = ranks[critical].time;
  const Timeline &idle = computeOnly ? *computeOnly : *timeline;
  candidate.time.bubble = std::max(0.0, idle.makespan - idle.busy[critical]);
  candidate.time.pipelineParallel =
      computeOnly ? std::max(0.0, timeline->makespan - computeOnly->makespan)
                  : 0;
  candidate.bubbleRatio =
      timeline->makespan > 0
          ? (timeline->makespan - timeline->busy[critical]) / timeline->makespan
          : 0;

  const TrainingSpec &training = model.getTraining();
  const double devices = static_cast<double>(training.devices);
  const double flops = model.modelFlopsPerStep();
  const double peakFlops = model.getCluster().peak(training.precision);
  candidate.mfu = flops / (candidate.stepTime * devices * peakFlops);
  candidate.tflopsPerDevice = flops / candidate.stepTime / devices / 1e12;
  candidate.tokensPerSecondPerDevice =
      static_cast<double>(training.globalBatchTokens) / candidate.stepTime /
      devices;
  return llvm::Error::success();
}

llvm::Expected<Schedule> sched::buildSchedule(const CostModel &model,
                                              const Candidate &candidate) {
  std::vector<StageEstimate> stages = candidateStages(model, candidate);
  llvm::Expected<Schedule> order =
      generateSchedule(candidate.strategy, shapeOf(candidate, stages));
  if (!order)
    return order.takeError();
  llvm::Expected<Schedule> compute = generateSchedule(
      candidate.strategy,
      shapeOf(candidate, forStrategy(model, stages, candidate.strategy,
                                     pairedShare(*order))));
  if (!compute)
    return compute.takeError();
  return insertTransfers(*compute);
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
struct StageKey {
  int64_t tp, pp, vpp, ep, cp, b;
  int zero;
  Recompute recompute;
  bool sequenceParallel;
  bool operator<(const StageKey &o) const {
    return std::tie(tp, pp, vpp, ep, cp, b, zero, recompute,
                    sequenceParallel) <
           std::tie(o.tp, o.pp, o.vpp, o.ep, o.cp, o.b, o.zero, o.recompute,
                    o.sequenceParallel);
  }
};
} // namespace

llvm::Expected<PlanResult> sched::plan(const CostModel &model,
                                       const PlanOptions &options) {
  const auto started = std::chrono::steady_clock::now();
  if (llvm::Error error = model.checkTraining())
    return std::move(error);
  const ModelSpec &spec = model.getModel();
  const ClusterSpec &cluster = model.getCluster();
  const TrainingSpec &training = model.getTraining();
  const int64_t devices = training.devices;

  if (options.strategy && spec.auxLoss == AuxLossScope::GlobalBatch &&
      !keepsGlobalBatchOrder(*options.strategy))
    return llvm::createStringError(
        strategyName(*options.strategy) +
        " cannot honour the model's global_batch auxiliary loss (every "
        "microbatch's forward must come before any backward): use gpipe, "
        "looped-bfs or no-pp, or an aux_free, sequence or microbatch scope");

  // The layouts to try.
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
        options.recompute
            ? std::vector<Recompute>{*options.recompute}
            : std::vector<Recompute>{Recompute::None, Recompute::Selective,
                                     Recompute::Full};
    for (int64_t b : sizes)
      for (int zero : zeros)
        for (Recompute recompute : recomputes) {
          Layout layout = base;
          layout.microbatchSize = b;
          layout.zero = zero;
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
          for (int64_t ep : eps)
            for (int64_t vpp : {1, 2, 4}) {
              if (pp == 1 && vpp > 1)
                continue;
              Layout layout;
              layout.dp = dp;
              layout.tp = tp;
              layout.pp = pp;
              layout.vpp = vpp;
              layout.ep = ep;
              layout.cp = cp;
              addVariants(layout);
            }
        }
      }
    }
  }

  PlanResult result;
  std::vector<Candidate> candidates;
  std::map<StageKey, std::vector<StageEstimate>> stageCache;
  std::string firstLayoutError;
  for (Layout layout : layouts) {
    if (llvm::Error error = model.checkLayout(layout)) {
      if (firstLayoutError.empty())
        firstLayoutError = llvm::toString(std::move(error));
      else
        llvm::consumeError(std::move(error));
      continue;
    }
    std::vector<Strategy> strategies;
    if (options.strategy)
      strategies = {*options.strategy};
    else if (layout.pp == 1)
      strategies = {Strategy::NoPipeline, Strategy::Combined1F1B};
    else
      strategies.assign(std::begin(kPipelineStrategies),
                        std::end(kPipelineStrategies));
    for (Strategy strategy : strategies) {
      if (withoutPipeline(strategy) != (layout.pp == 1))
        continue;
      // Combined 1F1B exists to hide the expert all-to-all; without one
      // it only keeps two microbatches alive.
      if ((strategy == Strategy::Combined1F1B ||
           strategy == Strategy::InterleavedCombined1F1B) &&
          !options.strategy && (!spec.moe || layout.ep == 1))
        continue;
      if (spec.auxLoss == AuxLossScope::GlobalBatch &&
          !keepsGlobalBatchOrder(strategy))
        continue;
      Candidate candidate;
      candidate.layout = layout;
      candidate.strategy = strategy;
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
      if (llvm::Error error = checkPipelineShape(strategy, probe)) {
        if (firstLayoutError.empty())
          firstLayoutError = "layout " + layout.str() + " with " +
                             strategyName(strategy).str() + ": " +
                             llvm::toString(std::move(error));
        else
          llvm::consumeError(std::move(error));
        continue;
      }
      StageKey key{layout.tp,
                   layout.pp,
                   strategy == Strategy::DualPipe ? 1 : layout.vpp,
                   layout.ep,
                   layout.cp,
                   layout.microbatchSize,
                   layout.zero,
                   layout.recompute,
                   layout.sequenceParallel};
      auto it = stageCache.find(key);
      if (it == stageCache.end())
        it = stageCache.emplace(key, model.stages(layout)).first;
      bound(model, candidate, forStrategy(model, it->second, strategy));
      candidates.push_back(candidate);
    }
  }
  result.considered = candidates.size();
  if (candidates.empty())
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

  // Candidates whose bound alone overflows memory are pruned, but the
  // nearest are kept to explain an empty table.
  const double limit = model.memoryLimit();
  std::vector<Candidate *> open;
  std::vector<const Candidate *> over;
  for (Candidate &candidate : candidates) {
    if (candidate.memoryBound > limit && !options.layout &&
        !options.exhaustive) {
      ++result.prunedMemory;
      over.push_back(&candidate);
      continue;
    }
    open.push_back(&candidate);
  }
  // Only the nearest three are kept (to explain an empty table).
  const size_t nearest = std::min<size_t>(over.size(), 3);
  std::partial_sort(over.begin(), over.begin() + nearest, over.end(),
                    [](const Candidate *a, const Candidate *b) {
                      return a->memoryBound < b->memoryBound;
                    });
  for (size_t i = 0; i < nearest; ++i) {
    Candidate candidate = *over[i];
    candidate.fits = false;
    candidate.overflow = "at least " + gigabytes(candidate.memoryBound) +
                         " (static memory and one microbatch's "
                         "activations) over the " +
                         gigabytes(limit) + " usable";
    result.overflowing.push_back(std::move(candidate));
  }
  llvm::stable_sort(open, [](const Candidate *a, const Candidate *b) {
    return a->timeBound < b->timeBound;
  });

  // Branch and bound, in order of the time bound.
  Evaluator evaluator(model);
  std::vector<Candidate> fitting;
  std::vector<double> times; // sorted step times of fitting candidates
  double bestWithout = INFINITY, bestWith = INFINITY;
  const size_t top = static_cast<size_t>(std::max(options.top, 1));
  size_t done = 0;
  for (Candidate *next : open) {
    Candidate &candidate = *next;
    const double kth = times.size() >= top ? times[top - 1] : INFINITY;
    const double best = times.empty() ? INFINITY : times.front();
    const double classBest =
        candidate.hasPipeline() ? bestWith : bestWithout;
    if (!options.exhaustive && candidate.timeBound > kth &&
        candidate.timeBound > classBest &&
        candidate.timeBound > 1.03 * best) {
      ++result.prunedBound;
      continue;
    }
    if (options.maxEvaluations > 0 &&
        result.lowered >= static_cast<size_t>(options.maxEvaluations)) {
      result.truncated = true;
      ++result.leftByCap;
      continue;
    }
    if (options.progress && (++done % 64 == 0))
      options.progress(done, open.size());
    Layout layout = candidate.layout;
    StageKey key{layout.tp,
                 layout.pp,
                 candidate.strategy == Strategy::DualPipe ? 1 : layout.vpp,
                 layout.ep,
                 layout.cp,
                 layout.microbatchSize,
                 layout.zero,
                 layout.recompute,
                 layout.sequenceParallel};
    auto failed = [&](llvm::Error error) {
      return llvm::createStringError("planner: " + candidate.layout.str() +
                                     " " + candidate.scheduleName().str() +
                                     ": " + llvm::toString(std::move(error)));
    };
    const std::vector<StageEstimate> &stages = stageCache[key];
    if (llvm::Error error = evaluator.measureMemory(candidate, stages))
      return failed(std::move(error));
    ++result.memoryChecked;
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

  // Ties (the same time to the nanosecond) go to the simpler layout, then
  // to the schedule without overlap pairs (combined 1F1B with one
  // microbatch is no-pp), then to the one with less memory.
  auto better = [](const Candidate &a, const Candidate &b) {
    const double ta = std::round(a.stepTime * 1e9);
    const double tb = std::round(b.stepTime * 1e9);
    return std::make_tuple(ta, a.dimensions(), a.layout.zero,
                           overlapsCommunication(a.strategy), a.memory.peak) <
           std::make_tuple(tb, b.dimensions(), b.layout.zero,
                           overlapsCommunication(b.strategy), b.memory.peak);
  };
  llvm::stable_sort(fitting, better);

  // Verify what the report shows; a candidate the verifier rejects is
  // dropped (and says why in `overflowing`).
  auto detail = [&](Candidate &candidate) {
    if (!candidate.detailed)
      if (llvm::Error error = evaluator.simulateStep(
              candidate, candidateStages(model, candidate), /*detailed=*/true))
        candidate.verdict = "unknown: " + llvm::toString(std::move(error));
  };
  auto verify = [&](Candidate &candidate) {
    detail(candidate);
    if (!options.verify || !candidate.verdict.empty())
      return;
    llvm::Expected<Schedule> lowered = buildSchedule(model, candidate);
    if (!lowered) {
      candidate.verdict = "unknown: " + llvm::toString(lowered.takeError());
      return;
    }
    llvm::Expected<MemoryLimit> memoryLimit = MemoryLimit::fromDouble(limit);
    if (!memoryLimit) {
      candidate.verdict =
          "unknown: " + llvm::toString(memoryLimit.takeError());
      return;
    }
    VerifyOptions verifyOptions;
    verifyOptions.p2p = P2PSemantics::Rendezvous;
    verifyOptions.memoryLimit = *memoryLimit;
    verifyOptions.timeoutSeconds = 30;
    VerifyResult verdict = verifySchedule(*lowered, verifyOptions);
    ++result.verified;
    switch (verdict.verdict) {
    case Verdict::Verified:
      candidate.verdict = "verified";
      break;
    case Verdict::Violated:
      candidate.verdict =
          "violated: " + (verdict.violations.empty()
                              ? std::string("(no detail)")
                              : verdict.violations.front().message);
      candidate.fits = false;
      candidate.overflow = candidate.verdict;
      break;
    case Verdict::Unknown:
      candidate.verdict = "unknown: " + verdict.unknownReason;
      break;
    }
    if (!verdict.peakMemory.empty())
      candidate.memory.peak = std::max(
          candidate.memory.peak,
          *std::max_element(verdict.peakMemory.begin(), verdict.peakMemory.end()));
  };

  // The recommendation: the simplest layout within 3% of the best (no PP
  // before PP, fewer parallel dimensions before more, a lower ZeRO stage
  // before a higher), proved by the verifier.
  auto simplicity = [](const Candidate &c) {
    return std::make_tuple(c.hasPipeline(), c.dimensions(), c.layout.zero,
                           std::round(c.stepTime * 1e9), c.memory.peak);
  };
  int recommended = -1;
  if (!fitting.empty()) {
    std::vector<size_t> within;
    for (size_t i = 0; i < fitting.size(); ++i)
      if (fitting[i].stepTime <= 1.03 * fitting.front().stepTime)
        within.push_back(i);
    llvm::stable_sort(within, [&](size_t a, size_t b) {
      return simplicity(fitting[a]) < simplicity(fitting[b]);
    });
    for (size_t i : within) {
      verify(fitting[i]);
      if (fitting[i].fits) {
        recommended = static_cast<int>(i);
        break;
      }
    }
  }
  // The best of each class, proved.
  for (Candidate &candidate : fitting) {
    std::optional<Candidate> &slot = candidate.hasPipeline()
                                         ? result.bestWithPipeline
                                         : result.bestWithoutPipeline;
    if (slot)
      continue;
    verify(candidate);
    if (candidate.fits)
      slot = candidate;
  }
  // The report: the best `top` (each proved too with verifyAll), then the
  // recommendation when it is not among them.
  std::vector<Candidate> report;
  for (size_t i = 0; i < fitting.size() && report.size() < top; ++i) {
    Candidate &candidate = fitting[i];
    if (options.verifyAll || static_cast<int>(i) == recommended)
      verify(candidate);
    else
      detail(candidate);
    if (!candidate.fits)
      continue;
    if (static_cast<int>(i) == recommended)
      result.recommended = static_cast<int>(report.size());
    report.push_back(candidate);
  }
  if (recommended >= 0 && result.recommended < 0) {
    result.recommended = static_cast<int>(report.size());
    report.push_back(fitting[recommended]);
  }
  result.ranked = std::move(report);
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

  if (result.recommended >= 0) {
    const Candidate &rec = result.ranked[result.recommended];
    const double computeTime = rec.time.compute;
    if (!rec.hasPipeline()) {
      const double dpTotal = rec.time.dataParallel + rec.time.optimizer;
      std::string rest;
      if (result.bestWithPipeline) {
        const double gain =
            rec.stepTime / result.bestWithPipeline->stepTime - 1;
        rest = gain > 0
                   ? llvm::formatv("; the best PP layout is only {0:f1}% "
                                   "faster",
                                   100 * gain)
                         .str()
                   : llvm::formatv("; the best PP layout is {0:f1}% slower",
                                   -100 * gain)
                         .str();
      }
      result.reason = llvm::formatv(
          "no PP: exposed data-parallel traffic is {0:f2}x of compute on a "
          "{1}-device {2} domain{3}",
          computeTime > 0 ? dpTotal / computeTime : 0, cluster.domainSize,
          cluster.topology == Topology::Torus3D ? "torus" : "switched", rest);
    } else if (!result.bestWithoutPipeline) {
      result.reason =
          "PP: no layout without pipeline parallelism fits in memory";
    } else {
      const Candidate &flat = *result.bestWithoutPipeline;
      // The term that differs most between the two.
      const std::pair<const char *, double> terms[] = {
          {"compute", flat.time.compute - rec.time.compute},
          {"tensor-parallel communication",
           flat.time.tensorParallel - rec.time.tensorParallel},
          {"context-parallel communication",
           flat.time.contextParallel - rec.time.contextParallel},
          {"expert all-to-all", flat.time.expertParallel - rec.time.expertParallel},
          {"data-parallel communication",
           flat.time.dataParallel - rec.time.dataParallel},
      };
      const auto *largest =
          std::max_element(std::begin(terms), std::end(terms),
                           [](const auto &a, const auto &b) {
                             return a.second < b.second;
                           });
      std::string detail;
      if (largest->second > 0)
        detail = llvm::formatv("; most of the gap is {0} ({1:f2} s more{2})",
                               largest->first, largest->second,
                               largest == std::begin(terms) &&
                                       flat.layout.recompute != Recompute::None
                                   ? llvm::formatv(", with {0} recomputation "
                                                   "to fit in memory",
                                                   recomputeName(
                                                       flat.layout.recompute))
                                         .str()
                                   : std::string())
                     .str();
      result.reason = llvm::formatv(
          "PP: the best layout without it ({0}, {1}) is {2:f1}% slower{3}",
          flat.layout.str(), flat.scheduleName(),
          100 * (flat.stepTime / rec.stepTime - 1), detail);
    }
  }
  if (result.truncated && result.recommended >= 0)
    // What was not searched could hold a better layout of either kind: no
    // reason that compares them stands.
    result.reason = llvm::formatv(
        "unproved: the search stopped at --max-lowered {0} with candidates "
        "left whose bounds could beat it; run without the cap for an exact "
        "answer",
        options.maxEvaluations);
  result.seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - started)
                       .count();
  return result;
}
