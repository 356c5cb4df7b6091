//===- Evaluation.cpp - a candidate's step time, memory and proof ---------===//

#include "lib/Planner/Evaluation.h"

#include "lib/Lower/InsertTransfers.h"
#include "lib/Simulate/Simulate.h"
#include "lib/Verify/Verifier.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <tuple>

using namespace sched;

bool sched::overlapsCommunication(Strategy strategy) {
  return strategy == Strategy::DualPipe || strategy == Strategy::DualPipeV ||
         strategy == Strategy::Combined1F1B ||
         strategy == Strategy::InterleavedCombined1F1B;
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

double sched::overlapPairExposed(const OverlapPairTimes &t) {
  // The compute stream, in issue order: the previous layer's attention
  // weight gradients and this forward's attention side, then the MoE
  // block's data gradient (after the backward's combine), its weight
  // gradient, its forward (after the forward's dispatch), and the
  // attention side's data gradient (after the backward's dispatch). The
  // communication stream: the backward's combine, the forward's dispatch
  // (once the router has run), the backward's dispatch (once the block's
  // data gradient is made) and the forward's combine (once the block's
  // forward is done).
  const double attention = t.attentionWeight + t.attentionForward;
  const double combineBackward = t.combineBackward;
  const double blockInputEnd =
      std::max(combineBackward, attention) + t.blockBackwardInput;
  const double dispatchForwardEnd =
      std::max(combineBackward, attention) + t.dispatchForward;
  const double blockWeightEnd = blockInputEnd + t.blockBackwardWeight;
  const double dispatchBackwardEnd =
      std::max(dispatchForwardEnd, blockInputEnd) + t.dispatchBackward;
  const double blockForwardEnd =
      std::max(blockWeightEnd, dispatchForwardEnd) + t.blockForward;
  const double combineForwardEnd =
      std::max(dispatchBackwardEnd, blockForwardEnd) + t.combineForward;
  const double attentionInputEnd =
      std::max(dispatchBackwardEnd, blockForwardEnd) + t.attentionInput;
  const double end = std::max(combineForwardEnd, attentionInputEnd);
  const double compute = attention + t.blockBackwardInput +
                         t.blockBackwardWeight + t.blockForward +
                         t.attentionInput;
  return end - compute;
}

/// Stage times as `strategy` runs them, by one rule for every schedule
/// with overlap pairs (DualPipe, DualPipe-V, combined 1F1B and its
/// interleaved variant): a pair is timed as overlapPairExposed, its
/// forward and backward taken from the action's own stage (the partner
/// as long as its own), and what it hides is split between the two in
/// proportion to their exchanges. `paired` is the share of actions in
/// pairs (1 for a bound, the schedule's own share once it is generated);
/// while an exchange hides its kernels hold SMs the partner's compute
/// lacks (Efficiency::computeShareBeside).
std::vector<StageEstimate> sched::stagesAsRun(const CostModel &model,
                                              std::vector<StageEstimate> stages,
                                              Strategy strategy,
                                              double paired) {
  if (!overlapsCommunication(strategy))
    return stages;
  const Efficiency &eff = model.getCluster().efficiency;
  const double share = eff.computeShareBeside(eff.allToAllMultiprocessors);
  for (StageEstimate &stage : stages) {
    const ExpertOverlapTerms &x = stage.expertOverlap;
    const double forwardComm = stage.forwardTerms.expertParallel;
    const double backwardComm = stage.backwardTerms.expertParallel;
    if (forwardComm + backwardComm <= 0)
      continue;
    // The compute stream's time of each pass, and its attention side (all
    // but the MoE block's kernels).
    OverlapPairTimes t;
    t.blockForward = x.blockForward;
    t.blockBackwardInput = x.blockBackwardInput;
    t.blockBackwardWeight = x.blockBackwardWeight;
    t.attentionForward =
        std::max(0.0, stage.forward - forwardComm - x.blockForward);
    t.attentionInput = std::max(0.0, stage.backwardInput - backwardComm -
                                         x.blockBackwardInput);
    t.attentionWeight =
        std::max(0.0, stage.backwardWeight - x.blockBackwardWeight);
    t.dispatchForward = x.dispatchForward;
    t.combineForward = x.combineForward;
    t.dispatchBackward = x.dispatchBackward;
    t.combineBackward = x.combineBackward;
    const double comm = forwardComm + backwardComm;
    const double hidden =
        paired * std::clamp(comm - overlapPairExposed(t), 0.0, comm);
    auto hide = [share](double &time, StageTerms &terms, double part) {
      const double slower = part * (1 / share - 1);
      terms.expertParallel -= part;
      terms.matmul += slower;
      time += slower - part;
    };
    hide(stage.forward, stage.forwardTerms, hidden * forwardComm / comm);
    hide(stage.backwardInput, stage.backwardTerms,
         hidden * backwardComm / comm);
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

/// Which stages (indices into the cost model's stages) each rank holds
/// (a few each: no allocation per rank, as the search asks this of every
/// candidate).
using RankHoldings = llvm::SmallVector<Holding, 4>;
static void holdings(const Layout &layout, Strategy strategy,
                     llvm::SmallVectorImpl<RankHoldings> &ranks) {
  const int32_t pp = static_cast<int32_t>(layout.pp);
  const double m = static_cast<double>(layout.microbatches);
  ranks.assign(pp, RankHoldings());
  if (strategy == Strategy::DualPipe) {
    // Two replicas, one fed from each end: rank r runs stage r of the
    // first and stage pp-1-r of the second, half the microbatches each.
    for (int32_t r = 0; r < pp; ++r) {
      ranks[r].push_back({r, m / 2});
      ranks[r].push_back({pp - 1 - r, m / 2});
    }
    return;
  }
  const int32_t numStages = static_cast<int32_t>(layout.pp * layout.vpp);
  const StagePlacement placement =
      defaultVpp(strategy) == 2 ? StagePlacement::V : StagePlacement::Loop;
  for (int32_t s = 0; s < numStages; ++s)
    ranks[rankOfStage(s, pp, placement)].push_back({s, m});
}

std::vector<RankFigures>
sched::rankFigures(const CostModel &model, const Layout &layout,
                   Strategy strategy,
                   const std::vector<StageEstimate> &stages) {
  std::vector<RankFigures> ranks;
  rankFigures(model, layout, strategy, stages, ranks);
  return ranks;
}

void sched::rankFigures(const CostModel &model, const Layout &layout,
                        Strategy strategy,
                        const std::vector<StageEstimate> &stages,
                        std::vector<RankFigures> &ranks) {
  // On the stack up to 64 ranks and 256 stages (the search's largest).
  llvm::SmallVector<RankHoldings, 64> held;
  holdings(layout, strategy, held);
  llvm::SmallVector<double, 257> before(stages.size() + 1, 0);
  for (size_t s = 0; s < stages.size(); ++s)
    before[s + 1] = before[s] + stages[s].forward;
  ranks.assign(held.size(), RankFigures());
  std::array<double, 4> lastKey = {-1, -1, -1, -1};
  for (size_t r = 0; r < held.size(); ++r) {
    RankFigures &f = ranks[r];
    f.fill = INFINITY;
    for (const Holding &h : held[r])
      f.fill = std::min(f.fill, before[h.stage]);
    if (held[r].empty())
      f.fill = 0;
    llvm::SmallVector<const StageEstimate *, 4> pointers;
    for (const Holding &h : held[r]) {
      const StageEstimate &s = stages[h.stage];
      pointers.push_back(&s);
      f.busy +=
          h.microbatches * (s.forward + s.backwardInput + s.backwardWeight);
      f.forwardPerMicrobatch += s.forward;
      f.backwardPerMicrobatch += s.backwardInput + s.backwardWeight;
      f.staticBytes += s.staticBytes();
      f.largestActivation = std::max(f.largestActivation, s.activationBytes);
      f.memory.weights += s.weightBytes;
      f.memory.gradients += s.gradientBytes;
      f.memory.optimizer += s.optimizerBytes;
      f.memory.workingSet += s.workingSetBytes;
      const StageTerms &a = s.forwardTerms, &b = s.backwardTerms;
      f.time.compute +=
          h.microbatches *
          (a.matmul + a.attention + a.memoryBound + b.matmul + b.attention +
           b.memoryBound + b.recompute + s.backwardWeight);
      f.time.tensorParallel +=
          h.microbatches * (a.tensorParallel + b.tensorParallel);
      f.time.contextParallel +=
          h.microbatches * (a.contextParallel + b.contextParallel);
      f.time.expertParallel +=
          h.microbatches * (a.expertParallel + b.expertParallel);
      f.time.host += h.microbatches * (a.host + b.host);
    }
    // Ranks that hold as many parameters with the same per-microbatch
    // compute pay the same data-parallel cost (the pipeline's middle
    // ranks): computed once for a run of them.
    double dense = 0, experts = 0;
    for (const StageEstimate *s : pointers) {
      dense += s->denseParameters;
      experts += s->expertParameters;
    }
    const std::array<double, 4> key = {dense, experts, f.forwardPerMicrobatch,
                                       f.backwardPerMicrobatch};
    if (r > 0 && key == lastKey) {
      f.dataParallel = ranks[r - 1].dataParallel;
    } else {
      f.dataParallel = model.dataParallel(
          layout, pointers, f.forwardPerMicrobatch, f.backwardPerMicrobatch);
      lastKey = key;
    }
    f.time.dataParallel = f.dataParallel.exposed;
    f.time.optimizer = f.dataParallel.optimizer;
  }
}

StageCost sched::toStageCost(const StageEstimate &s) {
  StageCost cost;
  cost.forward = s.forward;
  cost.backwardInput = s.backwardInput;
  cost.backwardWeight = s.backwardWeight;
  cost.activation = std::max<int64_t>(1, std::llround(s.activationBytes));
  cost.weightGrad = std::llround(s.weightGradBytes);
  cost.parameters = std::llround(s.staticBytes());
  cost.output = std::max<int64_t>(1, std::llround(s.outputBytes));
  cost.layers = std::max<int64_t>(1, s.numLayers);
  return cost;
}

/// The candidate's order shape with `vpp` chunks (no stage costs).
static PipelineShape orderShape(const Candidate &candidate, int64_t vpp) {
  PipelineShape shape;
  shape.pp = static_cast<int32_t>(candidate.layout.pp);
  shape.vpp = static_cast<int32_t>(vpp);
  shape.microbatches = static_cast<int32_t>(candidate.layout.microbatches);
  return shape;
}

static PipelineShape shapeOf(const Candidate &candidate,
                             const std::vector<StageEstimate> &stages) {
  PipelineShape shape = orderShape(candidate, candidate.layout.vpp);
  for (const StageEstimate &s : stages)
    shape.stageCosts.push_back(toStageCost(s));
  return shape;
}

/// The candidate's strategy generated at its shape with `vpp` chunks.
static llvm::Expected<Schedule> strategyOrder(const Candidate &candidate,
                                              int64_t vpp) {
  return generateSchedule(candidate.strategy, orderShape(candidate, vpp));
}

std::string sched::formatGigabytes(double bytes) {
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

CandidateEvaluator::OrderKey
CandidateEvaluator::orderKey(const Candidate &candidate) {
  const int64_t vpp =
      candidate.strategy == Strategy::DualPipe ? 1 : candidate.layout.vpp;
  return std::make_tuple(candidate.strategy, candidate.layout.pp, vpp,
                         candidate.layout.microbatches);
}

const std::vector<double> *
CandidateEvaluator::mostInFlight(const Candidate &candidate) const {
  // A synthesized order is the candidate's own.
  if (candidate.synthesized)
    return nullptr;
  auto it = inFlight.find(orderKey(candidate));
  return it == inFlight.end() ? nullptr : &it->second;
}

llvm::Expected<const SynthesizedOrder *>
CandidateEvaluator::synthesis(const Candidate &candidate,
                              const std::vector<StageEstimate> &stages) {
  std::vector<double> key = {
      static_cast<double>(candidate.strategy),
      static_cast<double>(candidate.layout.pp),
      static_cast<double>(candidate.layout.vpp),
      static_cast<double>(candidate.layout.microbatches),
      model.p2pTime(candidate.layout, stages.front().outputBytes)};
  for (const StageEstimate &stage : stages) {
    const StageCost cost = toStageCost(stage);
    key.insert(key.end(), {cost.forward, cost.backwardInput,
                           cost.backwardWeight,
                           static_cast<double>(cost.activation),
                           static_cast<double>(cost.weightGrad),
                           static_cast<double>(cost.parameters),
                           static_cast<double>(cost.output)});
  }
  auto it = synthesized.find(key);
  if (it != synthesized.end())
    return &it->second;
  llvm::Expected<SynthesizedOrder> solved =
      synthesizeOrder(model, candidate, stages);
  if (!solved)
    return solved.takeError();
  // Synthesized orders are kept while they take fewer than 2^22 actions in
  // all; past that this cache starts over.
  const size_t actions = solved->schedule.numActions();
  if (cachedSynthesizedActions + actions > (size_t(1) << 22)) {
    synthesized.clear();
    cachedSynthesizedActions = 0;
  }
  cachedSynthesizedActions += actions;
  return &synthesized.emplace(std::move(key), std::move(*solved))
              .first->second;
}

llvm::Expected<const Schedule *>
CandidateEvaluator::order(const Candidate &candidate,
                          const std::vector<StageEstimate> &stages) {
  if (candidate.synthesized) {
    llvm::Expected<const SynthesizedOrder *> solved =
        synthesis(candidate, stages);
    if (!solved)
      return solved.takeError();
    if (!(*solved)->infeasible.empty())
      return llvm::createStringError((*solved)->infeasible);
    return &(*solved)->schedule;
  }
  const int64_t vpp =
      candidate.strategy == Strategy::DualPipe ? 1 : candidate.layout.vpp;
  const OrderKey key = orderKey(candidate);
  // With no cache (orderCacheBytes 0) the one order kept is only the one
  // returned: it is never looked up.
  auto it = orderCacheBytes ? orders.find(key) : orders.end();
  if (it != orders.end()) {
    it->second.lastUse = ++orderUses;
    return &it->second.schedule;
  }
  std::optional<Schedule> generated;
  if (lastWalked && lastWalked->first == key) {
    // The walk that measured this candidate generated it just now.
    generated = std::move(lastWalked->second);
    lastWalked.reset();
  } else {
    llvm::Expected<Schedule> order = strategyOrder(candidate, vpp);
    if (!order)
      return order.takeError();
    generated = std::move(*order);
    ++generatedOrders;
  }
  // Orders are kept while they take fewer than orderCacheBytes in all; the
  // least recently used go first to make room (the one returned is kept
  // even where it alone is larger). Only simulated candidates read them
  // (measureMemory reads memoryWalk's cache).
  size_t bytes = 0;
  for (const RankProgram &rank : generated->ranks)
    bytes += rank.actions.capacity() * sizeof(Action);
  while (!orders.empty() && cachedOrderBytes + bytes > orderCacheBytes) {
    auto oldest = llvm::min_element(orders, [](const auto &a, const auto &b) {
      return a.second.lastUse < b.second.lastUse;
    });
    cachedOrderBytes -= oldest->second.bytes;
    orders.erase(oldest);
  }
  cachedOrderBytes += bytes;
  CachedOrder &cached = orders[key];
  cached.schedule = std::move(*generated);
  cached.bytes = bytes;
  cached.lastUse = ++orderUses;
  return &cached.schedule;
}

CandidateEvaluator::MemoryWalk
CandidateEvaluator::walkSchedule(const Schedule &schedule, int64_t whole,
                                 int64_t part) {
  MemoryWalk walk;
  walk.pairedShare = pairedShare(schedule);
  size_t entries = 0;
  for (const RankProgram &program : schedule.ranks) {
    MemoryWalk::Rank &rank = walk.ranks.emplace_back();
    // Each compute's stage as an index into rank.stages (a rank holds a
    // few stages: found by a scan from the last one found).
    std::vector<uint32_t> localOf;
    localOf.reserve(program.actions.size());
    size_t lastLocal = 0;
    auto push = [&](const Action &a) {
      rank.codes.push_back(static_cast<uint32_t>(a.stage) << 2 |
                           static_cast<uint32_t>(a.kind));
      size_t j = lastLocal;
      if (j >= rank.stages.size() || rank.stages[j] != a.stage) {
        j = llvm::find(rank.stages, a.stage) - rank.stages.begin();
        if (j == rank.stages.size())
          rank.stages.push_back(a.stage);
      }
      lastLocal = j;
      localOf.push_back(static_cast<uint32_t>(j));
    };
    const std::vector<Action> &actions = program.actions;
    size_t skip = actions.size();
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &a = actions[i];
      if (!isCompute(a.kind) || i == skip)
        continue;
      const size_t partner = layerwisePartner(actions, i);
      if (partner > i) {
        // Frees first; the pair's transient is added at evaluation.
        push(actions[partner]);
        skip = partner;
        std::pair<int32_t, int32_t> pair{a.stage, actions[partner].stage};
        if (!llvm::is_contained(rank.layerwisePairs, pair))
          rank.layerwisePairs.push_back(pair);
      }
      push(a);
    }
    // The states, each once: a 64-bit hash updated per action finds the
    // states that may equal the current one (the last state seen with that
    // hash, then those before it with the same hash), which are then
    // compared.
    // The rank's compute actions in the order walked: `whole` of the `part`
    // microbatches walked, each as many actions (0 where they are not).
    size_t actionsThere = rank.codes.size();
    if (whole != part)
      actionsThere = actionsThere % part ? 0 : actionsThere / part * whole;
    const size_t width = 2 * rank.stages.size();
    std::vector<int32_t> state(width, 0);
    std::vector<uint64_t> weights(width);
    for (size_t i = 0; i < width; ++i)
      weights[i] = llvm::hash_value(static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ULL + 1);
    llvm::DenseMap<uint64_t, uint32_t> lastWithHash;
    std::vector<uint32_t> previousWithHash;
    constexpr uint32_t kNoState = UINT32_MAX;
    uint64_t hash = 0;
    size_t count = 0;
    auto add = [&](size_t i, int32_t delta) {
      state[i] += delta;
      hash += static_cast<uint64_t>(static_cast<int64_t>(delta)) * weights[i];
    };
    for (size_t k = 0; k < rank.codes.size(); ++k) {
      const uint32_t code = rank.codes[k];
      const size_t j = localOf[k];
      const size_t residue = rank.stages.size() + j;
      switch (static_cast<ActionKind>(code & 3)) {
      case ActionKind::Forward:
        add(j, 1);
        break;
      case ActionKind::Backward:
        add(j, -1);
        break;
      case ActionKind::BackwardInput:
        add(j, -1);
        add(residue, 1);
        break;
      default:
        add(residue, -1);
        break;
      }
      // DenseMap reserves its two largest keys; the states compared decide.
      const uint64_t hashKey = std::min(hash, ~uint64_t(0) - 2);
      auto slot = lastWithHash.try_emplace(hashKey, kNoState).first;
      bool known = false;
      for (uint32_t s = slot->second; s != kNoState && !known;
           s = previousWithHash[s])
        known = std::equal(state.begin(), state.end(),
                           rank.states.begin() + size_t(s) * width);
      if (known)
        continue;
      previousWithHash.push_back(slot->second);
      slot->second = static_cast<uint32_t>(count++);
      rank.states.insert(rank.states.end(), state.begin(), state.end());
      // Past the actions' count the states cost more than the walk.
      if (rank.states.size() > actionsThere)
        break;
    }
    // Kept at their size: growth left up to half of each unused.
    if (rank.states.size() > actionsThere) {
      rank.states = {};
      rank.stages = {};
      rank.codes.shrink_to_fit();
      entries += rank.codes.size();
    } else {
      rank.codes = {};
      rank.states.shrink_to_fit();
      rank.stages.shrink_to_fit();
      entries += rank.states.size() + rank.stages.size();
    }
  }
  walk.entries = entries;
  return walk;
}

llvm::Expected<const CandidateEvaluator::MemoryWalk *>
CandidateEvaluator::memoryWalk(const Candidate &candidate,
                               const Schedule *given) {
  if (given) {
    givenWalk = walkSchedule(*given);
    return &givenWalk;
  }
  const OrderKey key = orderKey(candidate);
  if (auto it = walks.find(key); it != walks.end())
    return &it->second;
  std::optional<MemoryWalk> walk;
  // Freed before the next is generated: the peak holds one order, as
  // before.
  lastWalked.reset();
  const PipelineShape shape = orderShape(candidate, std::get<2>(key));
  // Where the strategy's steady phase repeats, the order of fewer
  // microbatches passes each rank through the same states, first reached
  // in the same order (lib/Generate/SteadyState.h), and is walked
  // instead: measuring memory then costs the same however many
  // microbatches the candidate has.
  // A rank of the whole order with more states than actions is walked
  // action by action: known from the shorter order's actions where each
  // microbatch brings a rank as many, else where the shorter order
  // already has as many actions as states; if not, an order four times
  // longer (if shorter than the whole) is tried.
  const bool fixed =
      SteadyStateMicrobatches::actionsPerMicrobatchFixed(candidate.strategy);
  PipelineShape steady = shape;
  steady.microbatches = steadyStates(candidate.strategy, shape);
  // GPipe and looped BFS pass through a new state with each action: their
  // ranks are walked action by action, from their runs of one kind on one
  // stage (computeRuns), without the order.
  if (std::optional<std::vector<std::vector<ComputeRun>>> runs =
          computeRuns(candidate.strategy, shape)) {
    walk.emplace();
    for (const std::vector<ComputeRun> &rankRuns : *runs) {
      MemoryWalk::Rank &rank = walk->ranks.emplace_back();
      for (const ComputeRun &run : rankRuns) {
        rank.codes.push_back(static_cast<uint32_t>(run.stage) << 2 |
                             static_cast<uint32_t>(run.kind));
        rank.repeats.push_back(static_cast<uint32_t>(run.count));
      }
      walk->entries += 2 * rank.codes.size();
    }
  }
  for (int tries = 0; tries < (fixed ? 1 : 2) && !walk &&
                      steady.microbatches < shape.microbatches;
       ++tries) {
    llvm::Expected<Schedule> order =
        generateSchedule(candidate.strategy, steady);
    if (!order)
      return order.takeError();
    walk = fixed ? walkSchedule(*order, shape.microbatches, steady.microbatches)
                 : walkSchedule(*order);
    if (llvm::any_of(walk->ranks, [](const MemoryWalk::Rank &rank) {
          return !rank.codes.empty();
        })) {
      walk.reset();
      steady.microbatches =
          steadyStates(candidate.strategy, shape, 4 * steady.microbatches);
    } else
      // The whole order's share of paired actions, from its counts (two
      // actions per overlap).
      walk->pairedShare =
          static_cast<double>(2 *
                              computeOverlapCount(candidate.strategy, shape)) /
          static_cast<double>(computeActionCount(candidate.strategy, shape));
  }
  // The whole order is walked only where the shorter ones do not do:
  // one in the order cache is walked as it is (walking the whole order
  // where a shorter one does costs more than generating the shorter).
  auto cached = orderCacheBytes ? orders.find(key) : orders.end();
  if (!walk && cached != orders.end()) {
    cached->second.lastUse = ++orderUses;
    walk = walkSchedule(cached->second.schedule);
  }
  if (!walk) {
    // The order itself is generated here without entering the order
    // cache: most candidates measured never run, and their orders (over
    // 2^22 actions in all for a model of 512 layers on 64 devices)
    // cleared the cache over and over, so each was generated five times
    // on average. The last one generated is kept aside instead
    // (lastWalked): a candidate that fits is most often simulated right
    // after its walk, on that order.
    llvm::Expected<Schedule> order =
        generateSchedule(candidate.strategy, shape);
    if (!order)
      return order.takeError();
    ++generatedOrders;
    walk = walkSchedule(*order);
    lastWalked.emplace(key, std::move(*order));
  }
  // Walks are kept while they take fewer than 2^24 entries in all (64
  // MB); past that the cache starts over.
  if (cachedWalkActions + walk->entries > (size_t(1) << 24)) {
    walks.clear();
    cachedWalkActions = 0;
  }
  cachedWalkActions += walk->entries;
  return &walks.emplace(key, std::move(*walk)).first->second;
}

llvm::Error
CandidateEvaluator::measureMemory(Candidate &candidate,
                                  const std::vector<StageEstimate> &stages) {
  const Schedule *synthesizedOrder = nullptr;
  if (candidate.synthesized) {
    llvm::Expected<const SynthesizedOrder *> solved =
        synthesis(candidate, stages);
    if (!solved)
      return solved.takeError();
    candidate.synthesisGap = (*solved)->gap;
    if (!(*solved)->infeasible.empty()) {
      // No schedule fits: the least any schedule needs is the peak.
      std::vector<RankFigures> ranks =
          rankFigures(model, candidate.layout, candidate.strategy, stages);
      const RankFigures &fullest = *std::max_element(
          ranks.begin(), ranks.end(),
          [](const RankFigures &a, const RankFigures &b) {
            return a.staticBytes < b.staticBytes;
          });
      candidate.memory = fullest.memory;
      candidate.memory.peak = (*solved)->leastPeak;
      candidate.memory.limit = model.memoryLimit();
      candidate.fits = false;
      candidate.overflow = (*solved)->infeasible;
      return llvm::Error::success();
    }
    synthesizedOrder = &(*solved)->schedule;
  }
  static_assert(static_cast<uint32_t>(ActionKind::Forward) == 0 &&
                    static_cast<uint32_t>(ActionKind::Backward) == 1 &&
                    static_cast<uint32_t>(ActionKind::BackwardInput) == 2 &&
                    static_cast<uint32_t>(ActionKind::BackwardWeight) == 3,
                "MemoryWalk keeps the compute kinds in two bits");
  llvm::Expected<const MemoryWalk *> walk =
      memoryWalk(candidate, synthesizedOrder);
  if (!walk)
    return walk.takeError();
  const std::vector<StageEstimate> run =
      stagesAsRun(model, stages, candidate.strategy, (*walk)->pairedShare);
  std::vector<StageCost> costs;
  for (const StageEstimate &s : run)
    costs.push_back(toStageCost(s));
  std::vector<RankFigures> ranks =
      rankFigures(model, candidate.layout, candidate.strategy, run);
  const double limit = model.memoryLimit();
  double peak = -1, peakActivation = 0, peakCount = 0;
  size_t fullest = 0;
  const std::vector<MemoryWalk::Rank> &walkRanks = (*walk)->ranks;
  std::vector<double> most(walkRanks.size(), 0);
  std::vector<double> act, keep, share;
  for (size_t r = 0; r < walkRanks.size(); ++r) {
    // The simulator's accounting: F keeps the activation, I frees all but
    // the part W needs, W frees that, B frees everything.
    double live = 0, count = 0, high = 0, highCount = 0, mostCount = 0;
    const MemoryWalk::Rank &rank = walkRanks[r];
    const size_t n = rank.stages.size();
    act.assign(n, 0);
    keep.assign(n, 0);
    share.assign(n, 0);
    for (size_t j = 0; j < n; ++j) {
      const StageCost &c = costOf(costs, rank.stages[j]);
      act[j] = static_cast<double>(c.activation);
      keep[j] = static_cast<double>(c.weightGrad);
      share[j] = act[j] > 0 ? keep[j] / act[j] : 0;
    }
    for (size_t at = 0; n > 0 && at < rank.states.size(); at += 2 * n) {
      const int32_t *full = rank.states.data() + at;
      const int32_t *residue = full + n;
      live = 0;
      count = 0;
      for (size_t j = 0; j < n; ++j) {
        live += full[j] * act[j] + residue[j] * keep[j];
        count += full[j] + residue[j] * share[j];
      }
      if (live > high) {
        high = live;
        highCount = count;
      }
      mostCount = std::max(mostCount, count);
    }
    for (size_t k = 0; k < rank.codes.size(); ++k) {
      const uint32_t code = rank.codes[k];
      const StageCost &c = costOf(costs, static_cast<int32_t>(code >> 2));
      const double act = static_cast<double>(c.activation);
      const double keep = static_cast<double>(c.weightGrad);
      const uint32_t times = rank.repeats.empty() ? 1 : rank.repeats[k];
      for (uint32_t i = 0; i < times; ++i) {
        switch (static_cast<ActionKind>(code & 3)) {
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
        mostCount = std::max(mostCount, count);
      }
    }
    // A layerwise overlap holds part of its forward above what was live
    // (the walk freed its backward first): at most this much above the
    // walk's highest state.
    double transient = 0, transientCount = 0;
    for (auto [forward, backward] : rank.layerwisePairs) {
      const StageCost &f = costOf(costs, forward), &b = costOf(costs, backward);
      const double held = static_cast<double>(
          layerwiseOverlapPeak(f.activation, f.layers, b.activation, b.layers));
      if (held > transient) {
        transient = held;
        transientCount = f.activation > 0 ? held / f.activation : 0;
      }
    }
    high += transient;
    highCount += transientCount;
    // Other members of a family have other activations: a whole
    // stage-microbatch bounds any pair's transient from above.
    most[r] = mostCount + (rank.layerwisePairs.empty() ? 0 : 1);
    const double bytes = ranks[r].staticBytes + high;
    if (bytes > peak) {
      peak = bytes;
      fullest = r;
      peakActivation = high;
      peakCount = highCount;
    }
  }
  if (!candidate.synthesized)
    inFlight[orderKey(candidate)] = std::move(most);
  candidate.memory = ranks[fullest].memory;
  candidate.memory.activations = peakActivation;
  candidate.memory.peak = peak;
  candidate.memory.limit = limit;
  candidate.fits = peak <= limit;
  candidate.overflow.clear();
  if (!candidate.fits) {
    const double fixed = ranks[fullest].staticBytes;
    const double working = candidate.memory.workingSet;
    const std::string workingSet =
        working > 0 ? ", " + formatGigabytes(working) + " working set" : "";
    if (fixed > limit)
      candidate.overflow = llvm::formatv(
          "weights, gradients and optimizer state alone take {0} on pipeline "
          "rank {1} ({2} weights, {3} gradients, {4} optimizer{5}), over the "
          "{6} usable",
          formatGigabytes(fixed), fullest,
          formatGigabytes(candidate.memory.weights),
          formatGigabytes(candidate.memory.gradients),
          formatGigabytes(candidate.memory.optimizer), workingSet,
          formatGigabytes(limit));
    else
      candidate.overflow = llvm::formatv(
          "activations in flight ({0}, {1} stage-microbatches at the peak) on "
          "top of {2} of weights, gradients and optimizer state{5} exceed the "
          "{3} usable on pipeline rank {4}",
          formatGigabytes(peakActivation), formatNumber(peakCount),
          formatGigabytes(fixed), formatGigabytes(limit), fullest,
          working > 0 ? " (with the backward's working set)" : "");
  }
  return llvm::Error::success();
}

llvm::Error
CandidateEvaluator::simulateStep(Candidate &candidate,
                                 const std::vector<StageEstimate> &stages,
                                 bool detailed) {
  llvm::Expected<const Schedule *> cached = order(candidate, stages);
  if (!cached)
    return cached.takeError();
  const std::vector<StageEstimate> run =
      stagesAsRun(model, stages, candidate.strategy, pairedShare(**cached));
  // The cached order runs under this candidate's costs, uncopied (a copy
  // of a million-action order per simulation was a tenth of the 2^40-token
  // plan's time).
  const Schedule &schedule = **cached;
  std::vector<StageCost> costs;
  costs.reserve(static_cast<size_t>(schedule.numStages));
  for (int32_t s = 0; s < schedule.numStages; ++s)
    costs.push_back(toStageCost(run[s % run.size()]));
  const double p2p =
      model.p2pTime(candidate.layout, stages.front().outputBytes);
  // Only the makespan and busy times are read: memory was measured on the
  // order's walk (measureMemory) before the candidate was simulated.
  SimulationOptions computeOnlyOptions;
  computeOnlyOptions.stageCosts = &costs;
  computeOnlyOptions.summaryOnly = true;
  // Detailing a candidate the search simulated under the same costs and
  // transfer time repeats that simulation: its figures stand, and only the
  // compute-only run (which splits idle time into bubble and transfers) is
  // new.
  if (detailed && candidate.evaluated && !candidate.detailed &&
      candidate.simulatedTransfer == p2p && candidate.simulatedCosts == costs) {
    llvm::Expected<Timeline> idle = simulate(schedule, computeOnlyOptions);
    if (!idle)
      return idle.takeError();
    candidate.detailed = true;
    candidate.time.bubble = std::max(
        0.0, idle->makespan - idle->busy[candidate.simulatedCritical]);
    candidate.time.pipelineParallel =
        std::max(0.0, candidate.makespan - idle->makespan);
    return llvm::Error::success();
  }
  SimulationOptions withComm;
  withComm.comm = p2p;
  const std::vector<double> boundaries =
      model.p2pBoundaryTimes(candidate.layout, stages.front().outputBytes);
  withComm.boundaryComm = &boundaries;
  withComm.blockingSends =
      model.getTraining().blocksPipelineSends(candidate.scheduleName());
  withComm.stageCosts = &costs;
  withComm.summaryOnly = true;
  llvm::Expected<Timeline> timeline = simulate(schedule, withComm);
  if (!timeline)
    return timeline.takeError();
  std::optional<Timeline> computeOnly;
  if (detailed) {
    llvm::Expected<Timeline> t = simulate(schedule, computeOnlyOptions);
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
    tail = std::max(tail, ranks[r].afterPipeline());
    const double total = timeline->busy[r] + ranks[r].afterPipeline();
    if (total > worst) {
      worst = total;
      critical = r;
    }
  }
  candidate.evaluated = true;
  candidate.detailed = detailed;
  candidate.simulatedCosts = std::move(costs);
  candidate.simulatedTransfer = p2p;
  candidate.simulatedCritical = critical;
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
  if (candidate.synthesized) {
    llvm::Expected<SynthesizedOrder> solved =
        synthesizeOrder(model, candidate, stages);
    if (!solved)
      return solved.takeError();
    if (!solved->infeasible.empty())
      return llvm::createStringError(solved->infeasible);
    return insertTransfers(solved->schedule);
  }
  llvm::Expected<Schedule> order =
      generateSchedule(candidate.strategy, shapeOf(candidate, stages));
  if (!order)
    return order.takeError();
  // Without overlap pairs the stages run as estimated (stagesAsRun), and
  // the order generated is the schedule to lower.
  if (!overlapsCommunication(candidate.strategy))
    return insertTransfers(*order);
  llvm::Expected<Schedule> compute = generateSchedule(
      candidate.strategy,
      shapeOf(candidate, stagesAsRun(model, stages, candidate.strategy,
                                     pairedShare(*order))));
  if (!compute)
    return compute.takeError();
  return insertTransfers(*compute);
}

void CandidateEvaluator::detail(Candidate &candidate) {
  if (candidate.detailed)
    return;
  if (llvm::Error error = simulateStep(
          candidate, candidateStages(model, candidate), /*detailed=*/true))
    candidate.verdict = "unknown: " + llvm::toString(std::move(error));
}

bool sched::proveCandidate(const CostModel &model, Candidate &candidate,
                           uint64_t resourceLimit) {
  llvm::Expected<Schedule> lowered = buildSchedule(model, candidate);
  if (!lowered) {
    candidate.verdict = "unknown: " + llvm::toString(lowered.takeError());
    return false;
  }
  llvm::Expected<MemoryLimit> memoryLimit =
      MemoryLimit::fromDouble(model.memoryLimit());
  if (!memoryLimit) {
    candidate.verdict = "unknown: " + llvm::toString(memoryLimit.takeError());
    return false;
  }
  VerifyOptions verifyOptions;
  verifyOptions.p2p = P2PSemantics::Rendezvous;
  verifyOptions.memoryLimit = *memoryLimit;
  verifyOptions.timeoutSeconds = kProofSafetySeconds;
  verifyOptions.resourceLimit = resourceLimit;
  VerifyResult verdict = verifySchedule(*lowered, verifyOptions);
  candidate.proofResources = verdict.z3Resources;
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
        candidate.memory.peak, *std::max_element(verdict.peakMemory.begin(),
                                                 verdict.peakMemory.end()));
  return true;
}
