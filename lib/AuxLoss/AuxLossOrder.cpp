//===- AuxLossOrder.cpp - global-batch aux losses and compute order -------===//

#include "lib/AuxLoss/AuxLossOrder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

using namespace sched;

//===----------------------------------------------------------------------===//
// Finding conflicts
//===----------------------------------------------------------------------===//

/// The conflict of one copy of a head on the rank that holds it.
static std::optional<AuxLossConflict> findOnRank(const Schedule &schedule,
                                                 int32_t stage) {
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    int32_t lastForward = -1, firstBackward = -1;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &a = actions[i];
      if (!isCompute(a.kind) || a.stage != stage)
        continue;
      if (a.kind == ActionKind::Forward)
        lastForward = static_cast<int32_t>(i);
      else if (a.kind != ActionKind::BackwardWeight && firstBackward < 0)
        firstBackward = static_cast<int32_t>(i);
    }
    if (lastForward < 0 && firstBackward < 0)
      continue;
    if (lastForward < 0 || firstBackward < 0)
      return std::nullopt;
    const Action &f = actions[lastForward];
    const Action &b = actions[firstBackward];
    const bool together = f.bundle != 0 && f.bundle == b.bundle;
    if (firstBackward > lastForward && !together)
      return std::nullopt;
    return AuxLossConflict{stage,
                           static_cast<int32_t>(r),
                           firstBackward,
                           b.microbatch,
                           lastForward,
                           f.microbatch,
                           together};
  }
  return std::nullopt;
}

std::optional<AuxLossConflict>
sched::findAuxLossConflict(const Schedule &schedule, int32_t stage) {
  if (stage < 0 || stage >= schedule.numStages ||
      !schedule.replicaError().empty())
    return std::nullopt;
  const int32_t perReplica = schedule.stagesPerReplica();
  for (int32_t copy = stage % perReplica; copy < schedule.numStages;
       copy += perReplica)
    if (std::optional<AuxLossConflict> conflict = findOnRank(schedule, copy))
      return conflict;
  return std::nullopt;
}

std::string sched::describeAuxLossConflict(const AuxLossConflict &conflict) {
  if (conflict.together)
    return llvm::formatv("backward of stage {0} microbatch {1} runs together "
                         "with the forward of microbatch {2}, before that "
                         "forward reaches aux head at stage {0} (scope "
                         "global_batch)",
                         conflict.stage, conflict.backwardMicrobatch,
                         conflict.forwardMicrobatch);
  return llvm::formatv("backward of stage {0} microbatch {1} runs before the "
                       "forward of microbatch {2} reaches aux head at stage "
                       "{0} (scope global_batch)",
                       conflict.stage, conflict.backwardMicrobatch,
                       conflict.forwardMicrobatch);
}

//===----------------------------------------------------------------------===//
// Reordering
//===----------------------------------------------------------------------===//

namespace {

constexpr double kNotDone = -1;

/// Actions of one rank that run as one: a lone action, or an overlap.
struct Unit {
  std::vector<Action> actions;
  bool heldBack = false;
  bool done = false;
};

/// The list simulation that reorders a compute schedule around its heads.
class HeadReorderer {
public:
  HeadReorderer(const Schedule &compute, llvm::ArrayRef<int32_t> stages)
      : compute(compute), perReplica(compute.stagesPerReplica()),
        numMicrobatches(compute.numMicrobatches),
        isHead(perReplica, false) {
    for (int32_t s : stages)
      if (s >= 0 && s < compute.numStages) {
        isHead[s % perReplica] = true;
        highestHead = std::max(highestHead, s % perReplica);
      }
  }

  llvm::Expected<Schedule> run();

private:
  size_t slot(int32_t stage, int32_t mb) const {
    return static_cast<size_t>(stage) * numMicrobatches + mb;
  }
  bool holdsBack(const Action &a) const {
    return a.kind != ActionKind::Forward && a.stage % perReplica <= highestHead;
  }
  double cost(const Action &a) const;
  llvm::Error buildUnits();
  /// When every input of `unit` is done: the latest end among them, or
  /// kNotDone while one is missing.
  double readyTime(const Unit &unit) const;
  double readyTime(const Action &a) const;
  void finish(Unit &unit, double end);
  /// The unit rank `r` runs next and when it starts, or none yet.
  std::optional<std::pair<size_t, double>> next(size_t r);

  const Schedule &compute;
  const int32_t perReplica;
  const int32_t numMicrobatches;
  std::vector<bool> isHead;
  int32_t highestHead = -1;
  bool unitSteps = false;
  std::vector<std::vector<Unit>> units;
  /// Per rank: the first unit not done, the first not held back and not
  /// done, and when the rank is free again.
  std::vector<size_t> firstPending, firstFree;
  std::vector<double> freeAt;
  /// Per (stage, microbatch): when its F and its B or I ended.
  std::vector<double> forwardEnd, inputGradEnd;
  /// Per model stage of a head: forwards done over every replica's copy,
  /// and the last one's end.
  std::vector<int32_t> headForwards;
  std::vector<double> headForwardEnd;
  std::vector<std::vector<Action>> order;
};

} // namespace

double HeadReorderer::cost(const Action &a) const {
  if (unitSteps || compute.stageCosts.empty())
    return 1;
  const StageCost &c = compute.stageCosts[a.stage];
  switch (a.kind) {
  case ActionKind::Forward:
    return c.forward;
  case ActionKind::Backward:
    return c.backwardInput + c.backwardWeight;
  case ActionKind::BackwardInput:
    return c.backwardInput;
  default:
    return c.backwardWeight;
  }
}

llvm::Error HeadReorderer::buildUnits() {
  for (const StageCost &c : compute.stageCosts)
    if (!(c.forward > 0 && c.backwardInput > 0 && c.backwardWeight > 0))
      unitSteps = true;
  units.resize(compute.ranks.size());
  for (size_t r = 0; r < compute.ranks.size(); ++r) {
    const std::vector<Action> &actions = compute.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &a = actions[i];
      if (!isCompute(a.kind))
        return llvm::createStringError(
            llvm::formatv("reordering works on compute and transfers only, "
                          "but rank {0} holds {1}",
                          compute.ranks[r].id, describeAction(compute, a)));
      if (a.stage < 0 || a.stage >= compute.numStages || a.microbatch < 0 ||
          a.microbatch >= numMicrobatches)
        return llvm::createStringError(
            llvm::formatv("{0} on rank {1} is out of range",
                          describeAction(compute, a), compute.ranks[r].id));
      std::vector<Unit> &rankUnits = units[r];
      // An overlap stays one unit unless it mixes a held-back backward with
      // an action that is not held back: then its members run alone.
      const bool joins = a.bundle != 0 && i > 0 &&
                         actions[i - 1].bundle == a.bundle &&
                         rankUnits.back().heldBack == holdsBack(a);
      Action copy = a;
      if (joins) {
        rankUnits.back().actions.push_back(copy);
        continue;
      }
      if (a.bundle != 0 && i > 0 && actions[i - 1].bundle == a.bundle) {
        // Split: the overlap's earlier members become lone actions too.
        for (Action &member : rankUnits.back().actions)
          member.bundle = 0;
        copy.bundle = 0;
      }
      rankUnits.push_back({{copy}, holdsBack(a), false});
    }
    // An overlap split at its second member may have left later members
    // with its bundle: lone actions carry none.
    for (Unit &unit : units[r])
      if (unit.actions.size() == 1)
        unit.actions.front().bundle = 0;
  }
  return llvm::Error::success();
}

double HeadReorderer::readyTime(const Action &a) const {
  const int32_t s = a.stage, m = a.microbatch;
  const int32_t model = s % perReplica;
  switch (a.kind) {
  case ActionKind::Forward:
    return model == 0 ? 0 : forwardEnd[slot(s - 1, m)];
  case ActionKind::Backward:
  case ActionKind::BackwardInput: {
    double ready = forwardEnd[slot(s, m)];
    if (ready < 0)
      return kNotDone;
    if (model != perReplica - 1) {
      const double gradient = inputGradEnd[slot(s + 1, m)];
      if (gradient < 0)
        return kNotDone;
      ready = std::max(ready, gradient);
    }
    if (isHead[model]) {
      // Every microbatch's forward through every copy of the head.
      if (headForwards[model] < numMicrobatches)
        return kNotDone;
      ready = std::max(ready, headForwardEnd[model]);
    }
    return ready;
  }
  default:
    return inputGradEnd[slot(s, m)];
  }
}

double HeadReorderer::readyTime(const Unit &unit) const {
  double ready = 0;
  for (const Action &a : unit.actions) {
    // Members of one overlap do not wait for each other.
    const double at = readyTime(a);
    if (at < 0)
      return kNotDone;
    ready = std::max(ready, at);
  }
  return ready;
}

void HeadReorderer::finish(Unit &unit, double end) {
  unit.done = true;
  for (const Action &a : unit.actions) {
    const size_t k = slot(a.stage, a.microbatch);
    if (a.kind == ActionKind::Forward) {
      forwardEnd[k] = end;
      const int32_t model = a.stage % perReplica;
      if (isHead[model]) {
        ++headForwards[model];
        headForwardEnd[model] = std::max(headForwardEnd[model], end);
      }
    } else if (a.kind != ActionKind::BackwardWeight) {
      inputGradEnd[k] = end;
    }
  }
}

std::optional<std::pair<size_t, double>> HeadReorderer::next(size_t r) {
  std::vector<Unit> &rankUnits = units[r];
  while (firstPending[r] < rankUnits.size() && rankUnits[firstPending[r]].done)
    ++firstPending[r];
  while (firstFree[r] < rankUnits.size() &&
         (rankUnits[firstFree[r]].done || rankUnits[firstFree[r]].heldBack))
    ++firstFree[r];
  auto startOf = [&](size_t u) -> std::optional<std::pair<size_t, double>> {
    if (u >= rankUnits.size())
      return std::nullopt;
    const double ready = readyTime(rankUnits[u]);
    if (ready < 0)
      return std::nullopt;
    return std::pair{u, std::max(ready, freeAt[r])};
  };
  std::optional<std::pair<size_t, double>> first = startOf(firstPending[r]);
  if (firstPending[r] >= rankUnits.size() ||
      !rankUnits[firstPending[r]].heldBack)
    return first;
  // A held-back unit comes first: it runs if it can start no later than the
  // next unit that is not held back, else that one overtakes it.
  std::optional<std::pair<size_t, double>> free = startOf(firstFree[r]);
  if (first && (!free || first->second <= free->second))
    return first;
  return free;
}

llvm::Expected<Schedule> HeadReorderer::run() {
  if (std::string why = compute.replicaError(); !why.empty())
    return llvm::createStringError(why);
  if (llvm::Error error = buildUnits())
    return std::move(error);
  const size_t slots =
      static_cast<size_t>(compute.numStages) * numMicrobatches;
  forwardEnd.assign(slots, kNotDone);
  inputGradEnd.assign(slots, kNotDone);
  headForwards.assign(perReplica, 0);
  headForwardEnd.assign(perReplica, 0);
  const size_t numRanks = compute.ranks.size();
  firstPending.assign(numRanks, 0);
  firstFree.assign(numRanks, 0);
  freeAt.assign(numRanks, 0);
  order.assign(numRanks, {});
  size_t remaining = 0;
  for (const std::vector<Unit> &rankUnits : units)
    remaining += rankUnits.size();
  while (remaining > 0) {
    std::optional<std::pair<size_t, std::pair<size_t, double>>> best;
    for (size_t r = 0; r < numRanks; ++r) {
      std::optional<std::pair<size_t, double>> candidate = next(r);
      if (candidate && (!best || candidate->second < best->second.second))
        best = std::pair{r, *candidate};
    }
    if (!best) {
      for (size_t r = 0; r < numRanks; ++r)
        if (firstPending[r] < units[r].size())
          return llvm::createStringError(llvm::formatv(
              "the compute order cannot run to the end: rank {0} waits at "
              "{1}",
              compute.ranks[r].id,
              describeAction(compute,
                             units[r][firstPending[r]].actions.front())));
      break;
    }
    const auto [r, choice] = *best;
    Unit &unit = units[r][choice.first];
    double duration = 0;
    for (const Action &a : unit.actions)
      duration += cost(a);
    freeAt[r] = choice.second + duration;
    finish(unit, freeAt[r]);
    llvm::append_range(order[r], unit.actions);
    --remaining;
  }
  Schedule result = compute;
  for (size_t r = 0; r < numRanks; ++r)
    result.ranks[r].actions = std::move(order[r]);
  return result;
}

llvm::Expected<Schedule>
sched::reorderForGlobalBatchHeads(const Schedule &compute,
                                  llvm::ArrayRef<int32_t> stages) {
  return HeadReorderer(compute, stages).run();
}
