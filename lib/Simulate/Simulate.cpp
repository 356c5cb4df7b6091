//===- Simulate.cpp - list simulation of a schedule -----------------------===//
//
// An event-driven list simulation. Each rank runs its actions in order; a
// rank that reaches an action whose input is not ready parks itself on the
// event it needs and is woken when that event happens, so the work is
// linear in the number of actions. Point-to-point transfers follow eager
// semantics, as PyTorch's runtime: neither a send nor a receive blocks, and
// the consumer of received data waits until it arrives, `comm` after its
// send; with SimulationOptions::blockingSends the sender is held for `comm`
// too (Megatron's non-interleaved 1F1B). Proving freedom from deadlock
// under rendezvous semantics is the verifier's job.
//
//===----------------------------------------------------------------------===//

#include "lib/Simulate/Simulate.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>

using namespace sched;

char SimulationRangeError::ID;

namespace {

/// Events an action can wait for.
enum class EventSlot : uint64_t {
  ForwardDone,
  InputGradDone,
  SendForward,
  SendBackward,
  Collective,
};

uint64_t eventKey(EventSlot slot, uint64_t a, uint64_t b) {
  return (static_cast<uint64_t>(slot) << 56) | (a << 28) | b;
}

/// isCompute, inlined: the simulator asks it several times per action.
inline bool computes(ActionKind kind) {
  static_assert(static_cast<int>(ActionKind::Forward) == 0 &&
                    static_cast<int>(ActionKind::BackwardWeight) == 3,
                "the compute kinds come first");
  return static_cast<uint8_t>(kind) <= 3;
}

/// Whether transfers take the schedule's declared time
/// (SimulationOptions::declaredTransfers) rather than the options' times.
static bool takesDeclared(const Schedule &schedule,
                          const SimulationOptions &options) {
  return options.declaredTransfers && schedule.transferTime >= 0;
}

class ListSimulator {
public:
  ListSimulator(const Schedule &schedule, const SimulationOptions &options)
      : schedule(schedule), options(options),
        stageCosts(options.stageCosts ? *options.stageCosts
                                      : schedule.stageCosts),
        comm(takesDeclared(schedule, options) ? schedule.transferTime
                                              : options.comm),
        boundaryComm(
            !takesDeclared(schedule, options) && options.boundaryComm &&
                    options.boundaryComm->size() == schedule.ranks.size()
                ? options.boundaryComm
                : nullptr) {
    dense.swap(reusedDense());
  }
  ~ListSimulator() { reusedDense().swap(dense); }

  llvm::Expected<Timeline> run();

private:
  /// Runs rank `r` as far as it can go.
  void advance(int32_t r);
  /// advance() for a schedule of computes only, unlowered, each naming a
  /// stage and microbatch of the event table (the planner's orders): the
  /// same arithmetic on the same values, with each input's slot in the
  /// table found directly and a waiting rank parked on its slot.
  void advanceComputes(int32_t r);
  /// The slot of the event `action` waits for and the stage that posts it,
  /// or false when it waits for none (a first stage's forward).
  bool inputSlot(const Action &action, size_t &slot, int32_t &from) const;
  /// The table slot of `event` for (stage, microbatch).
  size_t denseSlot(EventSlot event, int32_t stage, int32_t microbatch) const;
  /// Records the event in `slot` at `time` and readies the ranks parked on
  /// it (advanceComputes).
  void postSlot(size_t slot, double time);
  /// Readiness of one action's inputs: the time they are available, or
  /// nothing after parking rank `r` on the missing event.
  std::optional<double> inputsReady(int32_t r, const Action &action);
  std::optional<double> waitFor(int32_t r, uint64_t key, double delay);
  void post(uint64_t key, double time);
  double computeCost(const Action &action) const;
  /// The stage whose output `action` consumes, and the event carrying it.
  std::optional<std::pair<int32_t, uint64_t>> producerOf(const Action &a) const;
  size_t bundleEnd(int32_t r, size_t pos) const;
  /// Whether `action`, run on rank `r`, sends its output to another rank.
  bool sendsAway(int32_t r, const Action &action) const;
  /// How long the send of `action` from rank `r` takes (`comm` for a
  /// lowered send, whose peer is its transfer's).
  double sendTime(int32_t r, const Action &action) const;
  /// The time rank `r` is free after its actions [begin, end) finish at
  /// `finish`: a blocking send holds it until its transfer completes.
  double freeAfter(int32_t r, size_t begin, size_t end, double finish) const;
  std::optional<double> collectiveReady(int32_t r, const Action &action);
  llvm::Error stuckError() const;
  llvm::Error computeMemory();

  const Schedule &schedule;
  const SimulationOptions &options;
  /// The stage costs it runs with: SimulationOptions::stageCosts, or the
  /// schedule's.
  const std::vector<StageCost> &stageCosts;
  /// The time of one transfer between ranks: the schedule's declared one
  /// or SimulationOptions::comm.
  const double comm;
  /// SimulationOptions::boundaryComm where it applies, else null.
  const std::vector<double> *boundaryComm;
  /// The time of a transfer from rank `from` to rank `to`.
  double transfer(int32_t from, int32_t to) const {
    if (!boundaryComm)
      return comm;
    const int32_t n = static_cast<int32_t>(boundaryComm->size());
    if ((from + 1) % n == to)
      return (*boundaryComm)[static_cast<size_t>(from)];
    if ((to + 1) % n == from)
      return (*boundaryComm)[static_cast<size_t>(to)];
    return comm;
  }
  Timeline timeline;
  bool lowered = false;
  std::vector<int32_t> stageRank;
  std::vector<size_t> pos;
  std::vector<double> clock;
  /// When each event happened: in `dense` the events of a stage and
  /// microbatch (denseIndex), in `events` the rest (collectives, and every
  /// event of a schedule whose stages x microbatches far exceed its
  /// actions). A hash map of every event was a fifth of the planner's time
  /// on a million-action schedule (the 2^40-token plan, docs/limits.md).
  llvm::DenseMap<uint64_t, double> events;
  /// One slot of `dense`: the event's time, whether it happened, and the
  /// first rank parked on it (advanceComputes; -1: none), together so that
  /// a wait or a post touches one cache line.
  struct DenseEvent {
    double time = 0;
    int32_t firstParked = -1;
    uint8_t seen = 0;
  };
  /// The slots by event, then stage, then microbatch (denseSlot). Laid out
  /// by microbatch first instead, the 2^40-token plan took the same time
  /// within its spread (9.3 and 9.5 s, medians of four alternating runs).
  std::vector<DenseEvent> dense;
  /// The thread's `dense` between simulations: the planner simulates
  /// hundreds of schedules of millions of actions one after another, and a
  /// table allocated afresh each time came as new pages the kernel zeroed
  /// (a tenth of the 2^40-token plan's CPU); assign() reuses its capacity.
  static std::vector<DenseEvent> &reusedDense() {
    thread_local std::vector<DenseEvent> kept;
    return kept;
  }
  uint64_t denseStages = 0;
  uint64_t denseMicrobatches = 0;
  /// Events per (stage, microbatch) in `dense`: the four stage-microbatch
  /// events, or only ForwardDone and InputGradDone for advanceComputes.
  uint64_t denseEvents = 0;
  /// The slot of `key` in `dense`, or nothing when it has none.
  std::optional<size_t> denseIndex(uint64_t key) const;
  llvm::DenseMap<uint64_t, llvm::SmallVector<int32_t, 1>> waiters;
  /// advanceComputes: whether it runs the schedule, and the next rank
  /// parked on the same slot after each rank.
  bool computesOnly = false;
  std::vector<int32_t> nextParked;
  /// advanceComputes: computeCost of each stage's F, B, I and W (at
  /// 4 * stage + kind), and whether each stage begins or ends its chain.
  std::vector<double> kindCosts;
  std::vector<uint8_t> chainEnds;
  static constexpr uint8_t kFirstStage = 1, kLastStage = 2;
  std::deque<int32_t> ready;
  /// Collectives: per rank per group, how many issued; per instance, how
  /// many members arrived and the latest arrival.
  std::vector<std::vector<uint32_t>> issued;
  std::vector<bool> arrived;
  llvm::DenseMap<uint64_t, std::pair<size_t, double>> arrivals;
};

} // namespace

double ListSimulator::computeCost(const Action &action) const {
  // Transfers, collectives and the optimizer step take no compute time
  // (and need not name a stage).
  if (!computes(action.kind))
    return 0;
  if (options.unitSteps)
    return 1;
  StageCost cost;
  if (!stageCosts.empty())
    cost = stageCosts[action.stage];
  switch (action.kind) {
  case ActionKind::Forward:
    return cost.forward;
  case ActionKind::Backward:
    return cost.backwardInput + cost.backwardWeight;
  case ActionKind::BackwardInput:
    return cost.backwardInput;
  case ActionKind::BackwardWeight:
    return cost.backwardWeight;
  default:
    return 0;
  }
}

std::optional<std::pair<int32_t, uint64_t>>
ListSimulator::producerOf(const Action &a) const {
  switch (a.kind) {
  case ActionKind::Forward:
    if (schedule.isFirstStage(a.stage))
      return std::nullopt;
    return std::pair{a.stage - 1, eventKey(EventSlot::ForwardDone, a.stage - 1,
                                           a.microbatch)};
  case ActionKind::Backward:
  case ActionKind::BackwardInput:
    if (schedule.isLastStage(a.stage))
      return std::pair{a.stage,
                       eventKey(EventSlot::ForwardDone, a.stage, a.microbatch)};
    return std::pair{a.stage + 1, eventKey(EventSlot::InputGradDone,
                                           a.stage + 1, a.microbatch)};
  case ActionKind::BackwardWeight:
    return std::pair{a.stage,
                     eventKey(EventSlot::InputGradDone, a.stage, a.microbatch)};
  case ActionKind::Send:
    return std::pair{a.stage, eventKey(a.gradient ? EventSlot::InputGradDone
                                                  : EventSlot::ForwardDone,
                                       a.stage, a.microbatch)};
  default:
    return std::nullopt;
  }
}

double ListSimulator::sendTime(int32_t r, const Action &action) const {
  if (lowered || !boundaryComm)
    return comm;
  switch (action.kind) {
  case ActionKind::Forward:
    return transfer(r, stageRank[action.stage + 1]);
  case ActionKind::Backward:
  case ActionKind::BackwardInput:
    return transfer(r, stageRank[action.stage - 1]);
  default:
    return comm;
  }
}

bool ListSimulator::sendsAway(int32_t r, const Action &action) const {
  if (lowered)
    return action.kind == ActionKind::Send;
  switch (action.kind) {
  case ActionKind::Forward:
    return !schedule.isLastStage(action.stage) &&
           stageRank[action.stage + 1] != r;
  case ActionKind::Backward:
  case ActionKind::BackwardInput:
    return !schedule.isFirstStage(action.stage) &&
           stageRank[action.stage - 1] != r;
  default:
    return false;
  }
}

std::optional<size_t> ListSimulator::denseIndex(uint64_t key) const {
  const uint64_t slot = key >> 56;
  const uint64_t stage = (key >> 28) & ((uint64_t(1) << 28) - 1);
  const uint64_t microbatch = key & ((uint64_t(1) << 28) - 1);
  if (slot >= denseEvents || stage >= denseStages ||
      microbatch >= denseMicrobatches)
    return std::nullopt;
  return denseSlot(static_cast<EventSlot>(slot), static_cast<int32_t>(stage),
                   static_cast<int32_t>(microbatch));
}

std::optional<double> ListSimulator::waitFor(int32_t r, uint64_t key,
                                             double delay) {
  if (std::optional<size_t> at = denseIndex(key)) {
    if (dense[*at].seen)
      return dense[*at].time + delay;
  } else if (auto it = events.find(key); it != events.end()) {
    return it->second + delay;
  }
  waiters[key].push_back(r);
  return std::nullopt;
}

double ListSimulator::freeAfter(int32_t r, size_t begin, size_t end,
                                double finish) const {
  if (options.blockingSends) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    double held = 0;
    bool sends = false;
    for (size_t i = begin; i < end; ++i)
      if (sendsAway(r, actions[i])) {
        sends = true;
        held = std::max(held, sendTime(r, actions[i]));
      }
    if (sends)
      return finish + held;
  }
  return finish;
}

void ListSimulator::post(uint64_t key, double time) {
  if (std::optional<size_t> at = denseIndex(key)) {
    dense[*at].time = time;
    dense[*at].seen = 1;
  } else {
    events[key] = time;
  }
  if (waiters.empty())
    return;
  auto it = waiters.find(key);
  if (it == waiters.end())
    return;
  for (int32_t waiter : it->second)
    ready.push_back(waiter);
  waiters.erase(it);
}

std::optional<double> ListSimulator::inputsReady(int32_t r,
                                                 const Action &action) {
  // Eager semantics, as PyTorch's runtime: posting a receive never waits
  // (producerOf has no producer for it); the action that consumes the data
  // waits for it.
  auto producer = producerOf(action);
  if (!producer)
    return 0.0;
  auto [stage, key] = *producer;
  const bool remote = stageRank[stage] != r;
  // In a lowered schedule a remote input travels by the producer's send,
  // `comm` after the send is posted.
  const double delay = remote ? transfer(stageRank[stage], r) : 0.0;
  if (remote && lowered)
    return waitFor(r,
                   eventKey(action.kind == ActionKind::Forward
                                ? EventSlot::SendForward
                                : EventSlot::SendBackward,
                            stage, action.microbatch),
                   delay);
  return waitFor(r, key, delay);
}

std::optional<double> ListSimulator::collectiveReady(int32_t r,
                                                     const Action &action) {
  const ProcessGroup &group = schedule.groups[action.group];
  size_t set = 0;
  while (set < group.members.size() &&
         !llvm::is_contained(group.members[set], r))
    ++set;
  const uint64_t key = eventKey(
      EventSlot::Collective, (static_cast<uint64_t>(action.group) << 12) | set,
      issued[r][action.group]);
  if (!arrived[r]) {
    arrived[r] = true;
    auto &[count, latest] = arrivals[key];
    ++count;
    latest = std::max(latest, clock[r]);
    if (set < group.members.size() && count == group.members[set].size())
      post(key, latest);
  }
  return waitFor(r, key, 0.0);
}

size_t ListSimulator::bundleEnd(int32_t r, size_t at) const {
  const std::vector<Action> &actions = schedule.ranks[r].actions;
  size_t end = at + 1;
  if (actions[at].bundle == 0)
    return end;
  while (end < actions.size() && actions[end].bundle == actions[at].bundle)
    ++end;
  return end;
}

void ListSimulator::advance(int32_t r) {
  const std::vector<Action> &actions = schedule.ranks[r].actions;
  while (pos[r] < actions.size()) {
    const size_t begin = pos[r];
    const size_t end = bundleEnd(r, begin);
    if (actions[begin].group >= 0 && !computes(actions[begin].kind) &&
        actions[begin].kind != ActionKind::Send &&
        actions[begin].kind != ActionKind::Recv) {
      std::optional<double> done = collectiveReady(r, actions[begin]);
      if (!done)
        return;
      arrived[r] = false;
      ++issued[r][actions[begin].group];
      clock[r] = std::max(clock[r], *done);
      if (!options.summaryOnly)
        timeline.times[r][begin] = {clock[r], clock[r]};
      ++pos[r];
      continue;
    }
    double start = clock[r];
    for (size_t i = begin; i < end; ++i) {
      std::optional<double> inputs = inputsReady(r, actions[i]);
      if (!inputs)
        return;
      start = std::max(start, *inputs);
    }
    // A shape exchange carries no data a consumer waits for.
    for (size_t i = begin; i < end; ++i)
      if (actions[i].kind == ActionKind::Send && !actions[i].shape)
        post(eventKey(actions[i].gradient ? EventSlot::SendBackward
                                          : EventSlot::SendForward,
                      actions[i].stage, actions[i].microbatch),
             start);
    double compute = 0;
    for (size_t i = begin; i < end; ++i)
      compute += computeCost(actions[i]);
    const double finish = start + compute;
    timeline.busy[r] += compute;
    for (size_t i = begin; i < end; ++i) {
      const Action &action = actions[i];
      if (!options.summaryOnly)
        timeline.times[r][i] = {start, finish};
      if (action.kind == ActionKind::Forward)
        post(eventKey(EventSlot::ForwardDone, action.stage, action.microbatch),
             finish);
      else if (action.kind == ActionKind::Backward ||
               action.kind == ActionKind::BackwardInput)
        post(
            eventKey(EventSlot::InputGradDone, action.stage, action.microbatch),
            finish);
    }
    clock[r] = freeAfter(r, begin, end, finish);
    pos[r] = end;
  }
}

bool ListSimulator::inputSlot(const Action &a, size_t &slot,
                              int32_t &from) const {
  // producerOf's events, as slots of the table.
  auto at = [&](EventSlot event, int32_t stage) {
    from = stage;
    return denseSlot(event, stage, a.microbatch);
  };
  const uint8_t ends = chainEnds[a.stage];
  switch (a.kind) {
  case ActionKind::Forward:
    if (ends & kFirstStage)
      return false;
    slot = at(EventSlot::ForwardDone, a.stage - 1);
    return true;
  case ActionKind::Backward:
  case ActionKind::BackwardInput:
    slot = ends & kLastStage ? at(EventSlot::ForwardDone, a.stage)
                             : at(EventSlot::InputGradDone, a.stage + 1);
    return true;
  default:
    slot = at(EventSlot::InputGradDone, a.stage);
    return true;
  }
}

size_t ListSimulator::denseSlot(EventSlot event, int32_t stage,
                                int32_t microbatch) const {
  return static_cast<size_t>((static_cast<uint64_t>(event) * denseStages +
                              static_cast<uint64_t>(stage)) *
                                 denseMicrobatches +
                             static_cast<uint64_t>(microbatch));
}

void ListSimulator::postSlot(size_t slot, double time) {
  DenseEvent &event = dense[slot];
  event.time = time;
  event.seen = 1;
  for (int32_t r = event.firstParked; r >= 0; r = nextParked[r])
    ready.push_back(r);
  event.firstParked = -1;
}

void ListSimulator::advanceComputes(int32_t r) {
  const std::vector<Action> &actions = schedule.ranks[r].actions;
  const size_t n = actions.size();
  size_t begin = pos[r];
  while (begin < n) {
    const size_t end = bundleEnd(r, begin);
    // As advance(): the latest of the rank's clock and each input's time
    // (plus the transfer from another rank), in the same order.
    double start = clock[r];
    for (size_t i = begin; i < end; ++i) {
      size_t slot;
      int32_t from;
      if (!inputSlot(actions[i], slot, from)) {
        start = std::max(start, 0.0);
        continue;
      }
      DenseEvent &event = dense[slot];
      if (!event.seen) {
        nextParked[r] = event.firstParked;
        event.firstParked = r;
        pos[r] = begin;
        return;
      }
      start = std::max(start, event.time + (stageRank[from] != r
                                                ? transfer(stageRank[from], r)
                                                : 0.0));
    }
    double compute = 0;
    for (size_t i = begin; i < end; ++i)
      compute += kindCosts[4 * static_cast<size_t>(actions[i].stage) +
                           static_cast<size_t>(actions[i].kind)];
    const double finish = start + compute;
    timeline.busy[r] += compute;
    for (size_t i = begin; i < end; ++i) {
      const Action &action = actions[i];
      if (!options.summaryOnly)
        timeline.times[r][i] = {start, finish};
      if (action.kind == ActionKind::Forward)
        postSlot(
            denseSlot(EventSlot::ForwardDone, action.stage, action.microbatch),
            finish);
      else if (action.kind == ActionKind::Backward ||
               action.kind == ActionKind::BackwardInput)
        postSlot(denseSlot(EventSlot::InputGradDone, action.stage,
                           action.microbatch),
                 finish);
    }
    clock[r] = freeAfter(r, begin, end, finish);
    begin = end;
  }
  pos[r] = n;
}

llvm::Error ListSimulator::computeMemory() {
  const size_t numRanks = schedule.ranks.size();
  timeline.peakActivations.assign(numRanks, 0);
  timeline.peakActivationBytes.assign(numRanks, 0);
  if (options.recordMemory)
    timeline.liveActivations.assign(numRanks, {});
  for (size_t r = 0; r < numRanks; ++r) {
    double live = 0;
    std::vector<double> scratch;
    std::vector<double> &liveAfter =
        options.recordMemory ? timeline.liveActivations[r] : scratch;
    if (options.recordMemory)
      liveAfter.reserve(schedule.ranks[r].actions.size());
    // Each size is below 2^63 and a rank has fewer than 2^64 actions, so the
    // sum is exact in 128 bits; only the peak must fit the report's 64.
    __int128 liveBytes = 0, peakBytes = 0;
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    // What each action adds: in microbatch-activation units and in bytes.
    struct Delta {
      double units = 0;
      __int128 bytes = 0;
    };
    std::vector<Delta> delta(actions.size());
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &action = actions[i];
      if (!computes(action.kind))
        continue;
      StageCost cost;
      if (!stageCosts.empty())
        cost = stageCosts[action.stage];
      const double keep =
          cost.activation > 0
              ? static_cast<double>(cost.weightGrad) / cost.activation
              : options.weightGradFraction;
      switch (action.kind) {
      case ActionKind::Forward: {
        // A layerwise overlap's forward holds its activations' peak beside
        // its backward (layerwiseOverlapPeak) and the rest once the backward
        // has freed its own, whichever of the two is listed first, as the
        // verifier counts them.
        const size_t partner = layerwisePartner(actions, i);
        if (partner == i) {
          delta[i].units += 1;
          delta[i].bytes += cost.activation;
          break;
        }
        const StageCost other =
            stageCosts.empty()
                ? StageCost()
                : stageCosts[actions[partner].stage];
        // Without sizes, a microbatch's activations as a million units.
        constexpr int64_t kUnit = 1000000;
        const int64_t whole = cost.activation > 0 ? cost.activation : kUnit;
        const int64_t peak = layerwiseOverlapPeak(
            whole, cost.layers, cost.activation > 0 ? other.activation : kUnit,
            other.layers);
        const double fraction = static_cast<double>(peak) / whole;
        delta[i].units += fraction;
        delta[partner].units += 1 - fraction;
        if (cost.activation > 0) {
          delta[i].bytes += peak;
          delta[partner].bytes += whole - peak;
        }
        break;
      }
      case ActionKind::Backward:
        delta[i].units -= 1;
        delta[i].bytes -= cost.activation;
        break;
      case ActionKind::BackwardInput:
        delta[i].units -= 1 - keep;
        delta[i].bytes -= cost.activation - cost.weightGrad;
        break;
      default:
        delta[i].units -= keep;
        delta[i].bytes -= cost.weightGrad;
        break;
      }
    }
    // Members of a bundle run together: what allocates counts before what
    // frees, as the verifier counts them. Only compute actions change what
    // is live, so the peak is taken after every delta.
    allocationsFirst(actions, delta, [](const Delta &d) {
      return d.bytes != 0 ? d.bytes > 0 : d.units > 0;
    });
    for (const Delta &d : delta) {
      live += d.units;
      liveBytes += d.bytes;
      timeline.peakActivations[r] = std::max(timeline.peakActivations[r], live);
      if (options.recordMemory)
        liveAfter.push_back(live);
      peakBytes = std::max(peakBytes, liveBytes);
    }
    if (peakBytes > std::numeric_limits<int64_t>::max())
      return llvm::make_error<SimulationRangeError>(
          llvm::formatv("rank {0} holds more than {1} bytes (2^63 - 1) of "
                        "activations at its peak; the stage sizes are too "
                        "large",
                        schedule.ranks[r].id,
                        std::numeric_limits<int64_t>::max())
              .str());
    timeline.peakActivationBytes[r] = static_cast<int64_t>(peakBytes);
  }
  return llvm::Error::success();
}

llvm::Error ListSimulator::stuckError() const {
  std::string message = "the schedule cannot run to the end:";
  int shown = 0;
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    if (pos[r] >= actions.size())
      continue;
    if (shown++ == 4) {
      message += " ...";
      break;
    }
    const Action &action = actions[pos[r]];
    std::string what = computes(action.kind)
                           ? actionLabel(action, /*withStage=*/true)
                           : "a communication action";
    message += llvm::formatv(" rank {0} is stuck at action {1} ({2});",
                             schedule.ranks[r].id, pos[r], what)
                   .str();
  }
  return llvm::createStringError(message);
}

llvm::Expected<Timeline> ListSimulator::run() {
  const size_t numRanks = schedule.ranks.size();
  if (std::string why = schedule.replicaError(); !why.empty())
    return llvm::createStringError(why);
  stageRank.assign(schedule.numStages, -1);
  uint64_t numActions = 0;
  bool onlyComputes = true;
  int32_t largestMicrobatch = -1;
  for (size_t r = 0; r < numRanks; ++r)
    for (const Action &action : schedule.ranks[r].actions) {
      ++numActions;
      onlyComputes &= computes(action.kind) && action.microbatch >= 0;
      largestMicrobatch = std::max(largestMicrobatch, action.microbatch);
      if (action.kind == ActionKind::Send || action.kind == ActionKind::Recv)
        lowered = true;
      // Collectives and the optimizer step may name no stage (-1).
      const bool needsStage = computes(action.kind) ||
                              action.kind == ActionKind::Send ||
                              action.kind == ActionKind::Recv;
      if ((needsStage && action.stage < 0) ||
          action.stage >= schedule.numStages)
        return llvm::createStringError(
            llvm::formatv("rank {0} names stage {1} of {2}",
                          schedule.ranks[r].id, action.stage,
                          schedule.numStages)
                .str());
      if (computes(action.kind) && stageRank[action.stage] < 0)
        stageRank[action.stage] = static_cast<int32_t>(r);
    }
  // A table of the four stage-microbatch events for each stage and
  // microbatch, where that is about as many entries as actions (a schedule
  // has a forward for each): otherwise the map.
  const uint64_t stages = static_cast<uint64_t>(std::max(schedule.numStages, 0));
  const uint64_t microbatches =
      static_cast<uint64_t>(std::max<int64_t>(schedule.numMicrobatches, 0));
  if (stages < (uint64_t(1) << 28) && microbatches < (uint64_t(1) << 28) &&
      stages * microbatches <= numActions + 4096) {
    denseStages = stages;
    denseMicrobatches = microbatches;
    // Computes only, each of a stage and microbatch in the table: only
    // ForwardDone and InputGradDone happen.
    computesOnly =
        onlyComputes && static_cast<uint64_t>(largestMicrobatch) < microbatches;
    denseEvents = computesOnly
                      ? static_cast<uint64_t>(EventSlot::InputGradDone) + 1
                      : static_cast<uint64_t>(EventSlot::Collective);
    dense.assign(static_cast<size_t>(denseEvents * stages * microbatches),
                 DenseEvent());
    if (computesOnly) {
      nextParked.assign(numRanks, -1);
      kindCosts.resize(4 * stages);
      chainEnds.resize(stages);
      for (int32_t s = 0; s < schedule.numStages; ++s) {
        for (ActionKind kind :
             {ActionKind::Forward, ActionKind::Backward,
              ActionKind::BackwardInput, ActionKind::BackwardWeight}) {
          Action probe;
          probe.kind = kind;
          probe.stage = s;
          kindCosts[4 * s + static_cast<size_t>(kind)] = computeCost(probe);
        }
        chainEnds[s] = (schedule.isFirstStage(s) ? kFirstStage : 0) |
                       (schedule.isLastStage(s) ? kLastStage : 0);
      }
    }
  }
  pos.assign(numRanks, 0);
  clock.assign(numRanks, 0);
  arrived.assign(numRanks, false);
  issued.assign(numRanks, std::vector<uint32_t>(schedule.groups.size(), 0));
  timeline.busy.assign(numRanks, 0);
  if (!options.summaryOnly) {
    timeline.times.resize(numRanks);
    for (size_t r = 0; r < numRanks; ++r)
      timeline.times[r].resize(schedule.ranks[r].actions.size());
  }
  for (size_t r = 0; r < numRanks; ++r)
    ready.push_back(static_cast<int32_t>(r));
  while (!ready.empty()) {
    int32_t r = ready.front();
    ready.pop_front();
    if (computesOnly)
      advanceComputes(r);
    else
      advance(r);
  }
  for (size_t r = 0; r < numRanks; ++r)
    if (pos[r] < schedule.ranks[r].actions.size())
      return stuckError();
  timeline.makespan = 0;
  for (double t : clock) {
    // A NaN compares false with everything, so max() alone would drop it
    // (a cost of inf * 0 became a makespan of 0: "verified" at any MFU).
    if (std::isnan(t))
      return llvm::make_error<SimulationRangeError>(
          "the simulated times are not numbers (NaN); a stage cost is NaN "
          "or the product of an infinite and a zero figure");
    timeline.makespan = std::max(timeline.makespan, t);
  }
  // Costs are finite, but their sums may not be.
  if (!std::isfinite(timeline.makespan))
    return llvm::make_error<SimulationRangeError>(
        "the simulated times exceed the largest finite number (about "
        "1.8e308); the stage costs are too large");
  timeline.bubbleRatio.assign(numRanks, 0);
  if (timeline.makespan > 0)
    for (size_t r = 0; r < numRanks; ++r)
      timeline.bubbleRatio[r] =
          (timeline.makespan - timeline.busy[r]) / timeline.makespan;
  if (options.summaryOnly)
    return std::move(timeline);
  if (llvm::Error error = computeMemory())
    return std::move(error);
  return std::move(timeline);
}

llvm::Expected<Timeline> sched::simulate(const Schedule &schedule,
                                         const SimulationOptions &options) {
  return ListSimulator(schedule, options).run();
}

std::string sched::formatNumber(double value) {
  return llvm::formatv("{0}", llvm::format("%g", value)).str();
}
