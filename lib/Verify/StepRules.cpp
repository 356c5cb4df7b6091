//===- StepRules.cpp - the rest of the training step ----------------------===//

#include "lib/Verify/StepRules.h"

#include "lib/Schedule/DataParallelAxes.h"

#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <functional>
#include <optional>
#include <set>

using namespace sched;

static bool isCollective(ActionKind kind) {
  switch (kind) {
  case ActionKind::AllReduce:
  case ActionKind::ReduceScatter:
  case ActionKind::AllGather:
  case ActionKind::AllToAll:
  case ActionKind::Barrier:
    return true;
  default:
    return false;
  }
}

static const char *timingName(CollectiveTiming when) {
  switch (when) {
  case CollectiveTiming::BeforeForward:
    return "before_forward";
  case CollectiveTiming::AfterForward:
    return "after_forward";
  case CollectiveTiming::BeforeBackward:
    return "before_backward";
  case CollectiveTiming::AfterBackward:
    return "after_backward";
  case CollectiveTiming::Step:
    return "step";
  }
  return "";
}

/// True for the timings that pair each instance with one compute.
static bool servesComputes(CollectiveTiming when) {
  return when == CollectiveTiming::BeforeForward ||
         when == CollectiveTiming::AfterForward ||
         when == CollectiveTiming::BeforeBackward;
}

bool StepRules::reducesGradients(const Schedule &schedule, const Action &a) {
  if (a.kind != ActionKind::AllReduce && a.kind != ActionKind::ReduceScatter)
    return false;
  // A plan that names the declaration an action fulfils tells the engine
  // what it does: there is one reading.
  if (a.declaration >= 0 &&
      static_cast<size_t>(a.declaration) < schedule.collectives.size())
    return schedule.collectives[a.declaration].when ==
           CollectiveTiming::AfterBackward;
  return llvm::any_of(schedule.collectives,
                      [&](const CollectiveDeclaration &decl) {
                        return decl.when == CollectiveTiming::AfterBackward &&
                               decl.kind == a.kind && decl.group == a.group &&
                               (decl.stage < 0 || decl.stage == a.stage);
                      });
}

StepRules::StepRules(const ScheduleIndex &index, bool verifyWholeStep)
    : index(index), schedule(index.schedule), sharding(index.numStages),
      reduceGrads(index.numStages), optimizerSteps(schedule.ranks.size()),
      wholeStep(verifyWholeStep || index.schedule.wholeStep),
      declaredWholeStep(wholeStep), gradientReductions(index.numStages),
      declarations(schedule.collectives),
      biasHeadOf(schedule.collectives.size(), -1) {
  for (size_t h = 0; h < schedule.auxHeads.size(); ++h) {
    const AuxLossHead &head = schedule.auxHeads[h];
    if (head.scope != AuxLossScope::AuxFree || head.biasGroup < 0)
      continue;
    CollectiveDeclaration bias;
    bias.kind = ActionKind::AllReduce;
    bias.group = head.biasGroup;
    bias.bytes = head.biasBytes;
    bias.when = CollectiveTiming::AfterBackward;
    bias.stage = head.stage;
    declarations.push_back(bias);
    biasHeadOf.push_back(static_cast<int32_t>(h));
  }
  for (size_t r = 0; r < schedule.ranks.size(); ++r)
    for (const Action &a : schedule.ranks[r].actions)
      if (names(a) && a.stage < index.numStages &&
          index.stageRank[a.stage] == static_cast<int32_t>(r))
        ++namedAhead[{a.declaration, a.stage}];
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &a = actions[i];
      const ActionRef here{static_cast<int32_t>(r), static_cast<int32_t>(i)};
      const bool inRange = a.stage >= 0 && a.stage < index.numStages;
      switch (a.kind) {
      case ActionKind::OptimizerStep:
        optimizerSteps[r].push_back(here);
        wholeStep = true;
        continue;
      case ActionKind::Unshard:
      case ActionKind::Reshard:
      case ActionKind::ReduceGrad:
        if (!inRange)
          outOfRange.push_back(here);
        else if (a.kind == ActionKind::ReduceGrad)
          reduceGrads[a.stage].push_back(here);
        else
          sharding[a.stage].push_back(here);
        continue;
      default:
        break;
      }
      if (!isCollective(a.kind) || !inRange)
        continue;
      if (reducesGradients(schedule, a))
        gradientReductions[a.stage].push_back(here);
      const int32_t d = declarationOf(a, here);
      if (names(a) && index.stageRank[a.stage] == static_cast<int32_t>(r))
        --namedAhead[{d, a.stage}];
      if (d >= 0)
        instances[{d, a.stage}].push_back(here);
      else
        undeclared.push_back(here);
    }
  }
  rereadShared();
}

static bool declares(const CollectiveDeclaration &decl, const Action &a) {
  return decl.kind == a.kind && decl.group == a.group &&
         (decl.stage < 0 || decl.stage == a.stage) &&
         (a.bytes < 0 || a.bytes == decl.bytes);
}

/// Among timings with no deadline, the ones that free a further instance
/// for later actions come first.
static int openTimingRank(CollectiveTiming when) {
  return when == CollectiveTiming::AfterForward    ? 0
         : when == CollectiveTiming::AfterBackward ? 1
                                                   : 2;
}

bool StepRules::names(const Action &a) const {
  return isCollective(a.kind) && a.stage >= 0 && a.declaration >= 0 &&
         static_cast<size_t>(a.declaration) < schedule.collectives.size();
}

int32_t StepRules::declarationOf(const Action &a, ActionRef at) {
  // The declaration the plan names (the reader checked that it explains
  // the action).
  if (names(a))
    return a.declaration;
  int32_t first = -1, count = 0;
  for (size_t d = 0; d < declarations.size(); ++d)
    if (declares(declarations[d], a)) {
      if (first < 0)
        first = static_cast<int32_t>(d);
      ++count;
    }
  // Placement is checked elsewhere; timing compares positions on the
  // stage's rank only.
  if (count < 2 || at.rank != index.stageRank[a.stage])
    return first;
  // Declarations that share kind, group and bytes (an all-to-all before
  // and one after each forward; a gradient all-reduce and a step one) are
  // not told apart by their actions. Each action goes to a declaration
  // whose next instance it can be, the one due soonest (the next instance
  // of a before_* declaration is due at its compute): points matched to
  // intervals in that order find a matching whenever one exists, so a
  // schedule that can be read as issuing every declaration on time is.
  int32_t best = -1;
  std::pair<int32_t, int> bestDue;
  for (size_t d = 0; d < declarations.size(); ++d) {
    const CollectiveDeclaration &decl = declarations[d];
    if (!declares(decl, a))
      continue;
    const size_t k = issued(d, a.stage).size();
    auto ahead = namedAhead.find({static_cast<int32_t>(d), a.stage});
    if (k + (ahead == namedAhead.end() ? 0 : ahead->second) >=
        expectedInstances(decl))
      continue;
    std::pair<int32_t, int> due{INT32_MAX, openTimingRank(decl.when)};
    if (servesComputes(decl.when)) {
      const int32_t compute = servedComputesCached(a.stage, decl.when)[k].index;
      const bool before = decl.when != CollectiveTiming::AfterForward;
      if (before ? compute < at.index : compute > at.index)
        continue;
      if (before)
        due.first = compute;
    } else if (decl.when == CollectiveTiming::AfterBackward &&
               lastGradientCached(a.stage).index > at.index) {
      continue;
    }
    if (best < 0 || due < bestDue) {
      best = static_cast<int32_t>(d);
      bestDue = due;
    }
  }
  return best >= 0 ? best : first;
}

std::pair<size_t, size_t> StepRules::onTimeInstances(size_t d, int32_t stage,
                                                     ActionRef at) {
  const CollectiveDeclaration &decl = declarations[d];
  const size_t n = expectedInstances(decl);
  if (servesComputes(decl.when)) {
    // The served computes are in program order: those after the action
    // are a suffix, those before it a prefix.
    const std::vector<ActionRef> &computes =
        servedComputesCached(stage, decl.when);
    const size_t before = static_cast<size_t>(
        llvm::partition_point(computes,
                              [&](ActionRef c) { return c.index < at.index; }) -
        computes.begin());
    return decl.when == CollectiveTiming::AfterForward
               ? std::make_pair(size_t(0), before)
               : std::make_pair(before, n);
  }
  if (decl.when == CollectiveTiming::AfterBackward &&
      lastGradientCached(stage).index > at.index)
    return {0, 0};
  return {0, n};
}

std::vector<int32_t>
StepRules::exactReading(int32_t stage, const std::vector<ActionRef> &actions,
                        const std::vector<std::vector<int32_t>> &candidates,
                        const std::vector<int32_t> &chosen) {
  // Slots: the k-th instance of each chosen declaration, those of one
  // declaration in a row from base[d]. Each action takes one, each slot is
  // taken once, and an action only takes a slot it is on time for (a range
  // of each declaration's instances): a bipartite matching, grown by
  // augmenting paths from a greedy start. Read in program order, the
  // actions a declaration takes are on time for its instances in order
  // too: the instances' deadlines (or starts) only grow with k.
  std::map<int32_t, size_t> base;
  size_t slots = 0;
  for (int32_t d : chosen) {
    base[d] = slots;
    slots += expectedInstances(declarations[d]);
  }
  if (slots != actions.size() || actions.size() > kMaxExactReading)
    return {};
  // Per action, its on-time slots as ranges, and the declaration of each.
  std::vector<std::vector<std::pair<size_t, size_t>>> fits(actions.size());
  std::vector<int32_t> slotDeclaration(slots);
  for (int32_t d : chosen)
    std::fill_n(slotDeclaration.begin() + base[d],
                expectedInstances(declarations[d]), d);
  for (size_t i = 0; i < actions.size(); ++i)
    for (int32_t d : candidates[i]) {
      auto it = base.find(d);
      if (it == base.end())
        continue;
      auto [from, to] = onTimeInstances(d, stage, actions[i]);
      if (from < to)
        fits[i].emplace_back(it->second + from, it->second + to);
    }
  std::vector<int32_t> takenBy(slots, -1);
  std::vector<char> visited(slots, 0);
  std::function<bool(size_t)> take = [&](size_t i) {
    for (auto [from, to] : fits[i])
      for (size_t slot = from; slot < to; ++slot) {
        if (visited[slot])
          continue;
        visited[slot] = 1;
        if (takenBy[slot] < 0 || take(takenBy[slot])) {
          takenBy[slot] = static_cast<int32_t>(i);
          return true;
        }
      }
    return false;
  };
  // Greedy start, earliest deadline first: each action the first free
  // slot of its ranges that is due soonest (a before_* instance at its
  // compute). The slots of a declaration are taken in order, so the first
  // free one is past the last taken.
  std::map<int32_t, size_t> nextFree = base;
  std::vector<size_t> unplaced;
  for (size_t i = 0; i < actions.size(); ++i) {
    std::optional<size_t> best;
    std::pair<int32_t, int> bestDue;
    for (auto [from, to] : fits[i]) {
      const int32_t d = slotDeclaration[from];
      const size_t slot = std::max(from, nextFree[d]);
      if (slot >= to)
        continue;
      const CollectiveDeclaration &decl = declarations[d];
      std::pair<int32_t, int> due{INT32_MAX, openTimingRank(decl.when)};
      if (servesComputes(decl.when) &&
          decl.when != CollectiveTiming::AfterForward)
        due.first =
            servedComputesCached(stage, decl.when)[slot - base[d]].index;
      if (!best || due < bestDue) {
        best = slot;
        bestDue = due;
      }
    }
    if (!best) {
      unplaced.push_back(i);
      continue;
    }
    takenBy[*best] = static_cast<int32_t>(i);
    nextFree[slotDeclaration[*best]] = *best + 1;
  }
  for (size_t i : unplaced) {
    std::fill(visited.begin(), visited.end(), 0);
    if (!take(i))
      return {};
  }
  std::vector<int32_t> reading(actions.size(), -1);
  for (size_t slot = 0; slot < slots; ++slot)
    reading[takenBy[slot]] = slotDeclaration[slot];
  return reading;
}

void StepRules::rereadShared() {
  // Per stage: the actions on its rank that some declaration explains, in
  // program order (an action elsewhere is a placement violation).
  std::map<int32_t, std::vector<ActionRef>> byStage;
  for (const auto &[key, refs] : instances)
    for (ActionRef ref : refs)
      if (ref.rank == index.stageRank[key.second])
        byStage[key.second].push_back(ref);
  for (auto &[stage, actions] : byStage) {
    llvm::sort(actions,
               [](ActionRef x, ActionRef y) { return x.index < y.index; });
    std::vector<std::vector<int32_t>> candidates;
    for (ActionRef ref : actions) {
      const Action &a = index.action(ref);
      std::vector<int32_t> readings;
      if (names(a))
        readings.push_back(a.declaration);
      else
        for (size_t d = 0; d < declarations.size(); ++d)
          if (declares(declarations[d], a))
            readings.push_back(static_cast<int32_t>(d));
      candidates.push_back(std::move(readings));
    }
    // Declarations that share an action are read together.
    llvm::EquivalenceClasses<int32_t> shared;
    for (const std::vector<int32_t> &readings : candidates)
      for (int32_t d : readings)
        shared.unionSets(readings.front(), d);
    std::map<int32_t, std::vector<size_t>> classes;
    for (size_t i = 0; i < actions.size(); ++i)
      classes[shared.getLeaderValue(candidates[i].front())].push_back(i);
    for (const auto &[leader, members] : classes)
      rereadClass(stage, actions, candidates, members);
  }
}

void StepRules::rereadClass(
    int32_t stage, const std::vector<ActionRef> &stageActions,
    const std::vector<std::vector<int32_t>> &stageCandidates,
    const std::vector<size_t> &members) {
  std::vector<ActionRef> actions;
  std::vector<std::vector<int32_t>> candidates;
  std::vector<int32_t> shared;
  for (size_t i : members) {
    actions.push_back(stageActions[i]);
    candidates.push_back(stageCandidates[i]);
    for (int32_t d : stageCandidates[i])
      if (!llvm::is_contained(shared, d))
        shared.push_back(d);
  }
  if (shared.size() < 2)
    return;
  llvm::sort(shared);
  const int32_t rank = index.stageRank[stage];
  auto onRank = [&](ActionRef ref) { return ref.rank == rank; };
  // Matching's reading stands when it issues each declaration in full (in
  // a fragment, or not at all), each instance on time.
  bool stands = true;
  for (int32_t d : shared) {
    std::vector<ActionRef> refs;
    llvm::copy_if(issued(d, stage), std::back_inserter(refs), onRank);
    if (refs.size() != expectedInstances(declarations[d]) &&
        (wholeStep || !refs.empty()))
      stands = false;
    for (size_t k = 0; k < refs.size() && stands; ++k) {
      auto [from, to] = onTimeInstances(d, stage, refs[k]);
      stands = from <= k && k < to;
    }
    if (!stands)
      break;
  }
  if (stands)
    return;
  // Takes the reading of the actions as `chosen`, if there is one.
  auto read = [&](const std::vector<int32_t> &chosen) {
    const std::vector<int32_t> reading =
        exactReading(stage, actions, candidates, chosen);
    if (reading.empty())
      return false;
    for (int32_t d : shared)
      if (auto it = instances.find({d, stage}); it != instances.end())
        llvm::erase_if(it->second, onRank);
    for (size_t i = 0; i < actions.size(); ++i)
      instances[{reading[i], stage}].push_back(actions[i]);
    for (int32_t d : shared) {
      auto it = instances.find({d, stage});
      if (it == instances.end())
        continue;
      if (it->second.empty()) {
        instances.erase(it);
        continue;
      }
      llvm::sort(it->second, [](ActionRef x, ActionRef y) {
        return std::make_pair(x.rank, x.index) <
               std::make_pair(y.rank, y.index);
      });
    }
    return true;
  };
  // Past the search's limits a reading may exist that matching missed:
  // the verdict is left undecided rather than violated.
  auto undecide = [&](std::string why) {
    undecided.push_back(llvm::formatv(
        "matching reads the {0} action{5} of stage {1} on rank {2} that {3} "
        "declarations share without issuing each on time, and {4}: a reading "
        "that does may exist",
        actions.size(), stage, rankId(rank), shared.size(), why,
        actions.size() == 1 ? "" : "s"));
  };
  if (actions.size() > kMaxExactReading)
    return undecide(llvm::formatv("the exact search stops at {0} actions",
                                  kMaxExactReading));
  // A whole step issues every declaration. A fragment issues any of them
  // that ask for as many instances as there are actions (every one
  // first); past a dozen shared declarations those sets are not searched.
  if (wholeStep) {
    read(shared);
    return;
  }
  if (shared.size() > kMaxSubsetSearch)
    return undecide(llvm::formatv("a fragment's search of their sets stops "
                                  "at {0} declarations",
                                  kMaxSubsetSearch));
  for (uint32_t subset = (1u << shared.size()) - 1; subset > 0; --subset) {
    std::vector<int32_t> chosen;
    for (size_t b = 0; b < shared.size(); ++b)
      if (subset & (1u << b))
        chosen.push_back(shared[b]);
    if (read(chosen))
      return;
  }
}

const std::vector<ActionRef> &
StepRules::servedComputesCached(int32_t stage, CollectiveTiming when) {
  auto [it, inserted] = computesOf.try_emplace({stage, when});
  if (inserted)
    it->second = servedComputes(stage, when);
  return it->second;
}

ActionRef StepRules::lastGradientCached(int32_t stage) {
  auto [it, inserted] = lastGradientOf.try_emplace(stage);
  if (inserted)
    it->second = lastGradient(stage);
  return it->second;
}

ActionRef StepRules::lastGradient(int32_t stage) const {
  ActionRef last;
  const int32_t first = schedule.firstMicrobatchOf(stage);
  for (int32_t m = first; m < first + schedule.microbatchesPerReplica(); ++m) {
    ActionRef gradient = index.compute(ActionKind::Backward, stage, m);
    if (gradient.rank < 0)
      gradient = index.compute(ActionKind::BackwardWeight, stage, m);
    if (gradient.index > last.index)
      last = gradient;
  }
  return last;
}

const std::vector<ActionRef> &StepRules::issued(size_t d, int32_t stage) const {
  static const std::vector<ActionRef> kNone;
  auto it = instances.find({static_cast<int32_t>(d), stage});
  return it == instances.end() ? kNone : it->second;
}

size_t StepRules::expectedInstances(const CollectiveDeclaration &d) const {
  return servesComputes(d.when) ? schedule.microbatchesPerReplica() : 1;
}

std::vector<ActionRef> StepRules::servedComputes(int32_t stage,
                                                 CollectiveTiming when) const {
  std::vector<ActionRef> computes;
  const int32_t first = schedule.firstMicrobatchOf(stage);
  for (int32_t m = first; m < first + schedule.microbatchesPerReplica(); ++m)
    computes.push_back(when == CollectiveTiming::BeforeBackward
                           ? index.inputGradient(stage, m)
                           : index.compute(ActionKind::Forward, stage, m));
  llvm::sort(computes,
             [](ActionRef x, ActionRef y) { return x.index < y.index; });
  return computes;
}

std::vector<int32_t> StepRules::stagesOf(const CollectiveDeclaration &d) const {
  if (d.stage >= 0)
    return d.stage < index.numStages ? std::vector<int32_t>{d.stage}
                                     : std::vector<int32_t>{};
  std::vector<int32_t> stages(index.numStages);
  for (int32_t s = 0; s < index.numStages; ++s)
    stages[s] = s;
  return stages;
}

std::string StepRules::describe(ActionRef ref) const {
  return describeAction(schedule, index.action(ref));
}

int64_t StepRules::rankId(int32_t rank) const {
  return schedule.ranks[rank].id;
}

//===----------------------------------------------------------------------===//
// Counting and placement
//===----------------------------------------------------------------------===//

bool StepRules::check(ViolationSink &sink) const {
  bool ok = checkPlacement(sink);
  if (!ok)
    return false;
  ok &= checkSharding(sink);
  ok &= checkReduceGrad(sink);
  ok &= checkOptimizerStep(sink);
  ok &= checkDeclarations(sink);
  ok &= checkStructuralReductions(sink);
  // Counting per declaration reports an extra instance itself.
  if (ok)
    ok &= checkReducedOnce(sink);
  return ok;
}

bool StepRules::checkPlacement(ViolationSink &sink) const {
  bool ok = true;
  for (ActionRef ref : outOfRange) {
    ok = false;
    if (Violation *v = sink.add(
            ViolationKind::Missing, ref,
            llvm::formatv("{0} is out of range: the schedule has {1} stages",
                          describe(ref), index.numStages)))
      v->rule = StructuralRule::range();
  }
  auto place = [&](ActionRef ref) {
    const int32_t holder = index.stageRank[index.action(ref).stage];
    if (ref.rank == holder)
      return;
    ok = false;
    if (Violation *v = sink.add(
            ViolationKind::Placement, ref,
            llvm::formatv("{0} is issued by rank {1}, but stage {2} runs on "
                          "rank {3}",
                          describe(ref), rankId(ref.rank),
                          index.action(ref).stage, rankId(holder)),
            /*observed=*/rankId(ref.rank), /*required=*/rankId(holder)))
      v->rule = StructuralRule::placement();
  };
  for (int32_t s = 0; s < index.numStages; ++s) {
    llvm::for_each(sharding[s], place);
    llvm::for_each(reduceGrads[s], place);
  }
  // Declared collectives, and the gradient reductions the engine sees
  // (one no declaration's bytes explain is no instance), each once.
  std::set<std::pair<int32_t, int32_t>> collectives;
  for (const auto &[key, refs] : instances)
    for (ActionRef ref : refs)
      collectives.insert({ref.rank, ref.index});
  for (const std::vector<ActionRef> &refs : gradientReductions)
    for (ActionRef ref : refs)
      collectives.insert({ref.rank, ref.index});
  for (auto [rank, position] : collectives)
    place({rank, position});
  // An undeclared collective that carries a stage moves that stage's data:
  // the member set it runs on must hold the stage's rank.
  for (ActionRef ref : undeclared) {
    const Action &a = index.action(ref);
    const int32_t holder = index.stageRank[a.stage];
    if (holder < 0 || a.group < 0 ||
        static_cast<size_t>(a.group) >= schedule.groups.size() ||
        llvm::is_contained(memberSet(a.group, ref.rank), holder))
      continue;
    ok = false;
    if (Violation *v = sink.add(
            ViolationKind::Placement, ref,
            llvm::formatv("{0} is issued by rank {1}, but stage {2} runs on "
                          "rank {3}, which is not in the member set of @{4} "
                          "that rank {1} belongs to: no member holds the "
                          "stage's data",
                          describe(ref), rankId(ref.rank), a.stage,
                          rankId(holder), schedule.groups[a.group].name),
            /*observed=*/rankId(ref.rank), /*required=*/rankId(holder)))
      v->rule = StructuralRule::placement(a.group);
  }
  return ok;
}

bool StepRules::checkSharding(ViolationSink &sink) const {
  bool ok = true;
  for (int32_t s = 0; s < index.numStages; ++s) {
    bool gathered = false;
    ActionRef previous;
    for (ActionRef ref : sharding[s]) {
      const bool unshard = index.action(ref).kind == ActionKind::Unshard;
      if (unshard && gathered) {
        ok = false;
        if (Violation *v = sink.add(
                ViolationKind::Duplicate, ref,
                llvm::formatv("UNSHARD(stage {0}) on rank {1} while the "
                              "stage is unsharded: it has no RESHARD since "
                              "the previous UNSHARD",
                              s, rankId(ref.rank)),
                /*observed=*/2, /*required=*/1)) {
          v->notes.push_back({previous, "the previous UNSHARD is here"});
          v->rule = StructuralRule::alternation(ref.rank, s);
        }
      } else if (!unshard && !gathered) {
        ok = false;
        Violation *v = sink.add(
            ViolationKind::Missing, ref,
            llvm::formatv("RESHARD(stage {0}) on rank {1} without an "
                          "UNSHARD before it: the stage's parameters are "
                          "not gathered",
                          s, rankId(ref.rank)),
            /*observed=*/0, /*required=*/1);
        if (v && previous.rank >= 0)
          v->notes.push_back({previous, "the stage was last resharded here"});
        if (v)
          v->rule = StructuralRule::alternation(ref.rank, s);
      }
      if (!unshard && gathered && !usedSince(previous, ref, s)) {
        ok = false;
        if (Violation *v = sink.add(
                ViolationKind::Missing, ref,
                llvm::formatv("RESHARD(stage {0}) on rank {1} closes an "
                              "UNSHARD that no compute of the stage used: "
                              "an UNSHARD is waited for by the first compute "
                              "that needs the parameters, and PyTorch's "
                              "runtime asserts on a RESHARD of a stage whose "
                              "UNSHARD was never waited for",
                              s, rankId(ref.rank)),
                /*observed=*/0, /*required=*/1)) {
          v->notes.push_back({previous, "the UNSHARD is here"});
          v->rule = StructuralRule::unshardUse(ref.rank, s);
        }
      }
      gathered = unshard;
      previous = ref;
    }
  }
  return ok;
}

bool StepRules::usedSince(ActionRef unshard, ActionRef reshard,
                          int32_t stage) const {
  const std::vector<Action> &actions = schedule.ranks[reshard.rank].actions;
  for (int32_t i = unshard.index + 1; i < reshard.index; ++i)
    if (isCompute(actions[i].kind) && actions[i].stage == stage)
      return true;
  return false;
}

/// At most one action per slot (`twice(slot)` reports a second one), and
/// once any slot has one, one in every slot that `holder` places (a slot
/// it gives rank -1 needs none; `missing(slot)` reports it). Returns false
/// when it reported a violation.
static bool checkOncePerSlot(ViolationSink &sink,
                             const std::vector<std::vector<ActionRef>> &slots,
                             llvm::function_ref<ActionRef(size_t)> holder,
                             llvm::function_ref<std::string(size_t)> twice,
                             llvm::function_ref<std::string(size_t)> missing,
                             const char *otherNote,
                             llvm::function_ref<StructuralRule(size_t)> rule) {
  bool ok = true;
  ActionRef any;
  for (const std::vector<ActionRef> &refs : slots)
    if (!refs.empty() && any.rank < 0)
      any = refs.front();
  for (size_t k = 0; k < slots.size(); ++k) {
    const std::vector<ActionRef> &refs = slots[k];
    if (refs.size() > 1) {
      ok = false;
      if (Violation *v = sink.add(ViolationKind::Duplicate, refs[1], twice(k),
                                  /*observed=*/refs.size(), /*required=*/1)) {
        v->notes.push_back({refs[0], "the first one is here"});
        v->rule = rule(k);
      }
    }
    const ActionRef where = holder(k);
    if (refs.empty() && any.rank >= 0 && where.rank >= 0) {
      ok = false;
      if (Violation *v = sink.add(ViolationKind::Missing, where, missing(k),
                                  /*observed=*/0, /*required=*/1)) {
        v->notes.push_back({any, otherNote});
        v->rule = rule(k);
      }
    }
  }
  return ok;
}

bool StepRules::checkReduceGrad(ViolationSink &sink) const {
  return checkOncePerSlot(
      sink, reduceGrads,
      [&](size_t s) {
        return ActionRef{index.stageRank[s], -1};
      },
      [&](size_t s) {
        return llvm::formatv("REDUCE_GRAD(stage {0}) twice on rank {1}: a "
                             "stage's gradients are reduced once per step",
                             s, rankId(index.stageRank[s]))
            .str();
      },
      [&](size_t s) {
        return llvm::formatv("stage {0} on rank {1} has no REDUCE_GRAD, but "
                             "the schedule reduces the gradients of other "
                             "stages",
                             s, rankId(index.stageRank[s]))
            .str();
      },
      "a REDUCE_GRAD of another stage is here",
      [&](size_t s) {
        return StructuralRule::count(index.stageRank[s], ActionKind::ReduceGrad,
                                     static_cast<int32_t>(s), -1, 1);
      });
}

bool StepRules::checkOptimizerStep(ViolationSink &sink) const {
  std::vector<bool> holds(schedule.ranks.size(), false);
  for (int32_t rank : index.stageRank)
    if (rank >= 0)
      holds[rank] = true;
  if (declaredWholeStep &&
      llvm::all_of(optimizerSteps, [](const std::vector<ActionRef> &steps) {
        return steps.empty();
      })) {
    // No rank steps: each rank that holds a stage misses its step.
    for (size_t r = 0; r < schedule.ranks.size(); ++r) {
      if (!holds[r])
        continue;
      Violation *v = sink.add(
          ViolationKind::Missing, {static_cast<int32_t>(r), -1},
          llvm::formatv("rank {0} holds stages but has no OPTIMIZER_STEP, "
                        "and the schedule is one whole training step (a "
                        "runtime plan always is): without it the step "
                        "computes gradients and updates nothing",
                        rankId(r)),
          /*observed=*/0, /*required=*/1);
      if (v)
        v->rule = StructuralRule::count(static_cast<int32_t>(r),
                                        ActionKind::OptimizerStep, -1, -1, 1);
    }
    return false;
  }
  return checkOncePerSlot(
      sink, optimizerSteps,
      [&](size_t r) {
        return ActionRef{holds[r] ? static_cast<int32_t>(r) : -1, -1};
      },
      [&](size_t r) {
        return llvm::formatv("OPTIMIZER_STEP twice on rank {0}: a training "
                             "step updates the parameters once",
                             rankId(r))
            .str();
      },
      [&](size_t r) {
        return llvm::formatv("rank {0} holds stages but has no "
                             "OPTIMIZER_STEP, while other ranks step",
                             rankId(r))
            .str();
      },
      "an optimizer step of another rank",
      [&](size_t r) {
        return StructuralRule::count(static_cast<int32_t>(r),
                                     ActionKind::OptimizerStep, -1, -1, 1);
      });
}

bool StepRules::checkDeclarations(ViolationSink &sink) const {
  bool ok = true;
  // Past the sink's capacity a violation is only counted: keep the cost of
  // its message off schedules with many declarations and stages.
  size_t reported = 0;
  for (size_t d = 0; d < declarations.size(); ++d) {
    const CollectiveDeclaration &decl = declarations[d];
    const size_t expected = expectedInstances(decl);
    for (int32_t s : stagesOf(decl)) {
      const std::vector<ActionRef> &refs = issued(d, s);
      if (refs.size() == expected || (!wholeStep && refs.empty()))
        continue;
      ok = false;
      const bool extra = refs.size() > expected;
      if (reported++ < ViolationSink::kMaxViolations) {
        Violation *v = biasHeadOf[d] >= 0 ? reportBiasUpdate(sink, decl, refs)
                                          : reportDeclared(sink, decl, s, refs);
        if (v)
          v->rule = declarationRule(d, s);
      } else
        sink.add(extra ? ViolationKind::Duplicate : ViolationKind::Missing,
                 {index.stageRank[s], -1}, "", refs.size(), expected);
    }
  }
  return ok;
}

bool StepRules::checkReducedOnce(ViolationSink &sink) const {
  bool ok = true;
  for (int32_t s = 0; s < index.numStages; ++s) {
    // Per group: the actions that reduce the stage's gradients over it.
    // REDUCE_GRAD reduces over the data-parallel replicas, as @dp does, so
    // it counts with @dp, and (hybrid sharding) with @dp_shard and
    // @dp_replicate, whose axes @dp sums too; a second REDUCE_GRAD is
    // checkReduceGrad's to report.
    std::set<int32_t> groups;
    for (ActionRef ref : gradientReductions[s])
      groups.insert(index.action(ref).group);
    for (int32_t group : groups) {
      const std::string &name = schedule.groups[group].name;
      const ReplicaSpan span = replicaSpanOf(name);
      const bool acrossReplicas =
          replicasAlong(span, schedule.dataParallel,
                        schedule.shardGroupSize) > 1;
      auto counted = [&](int32_t g) {
        return g == group ||
               (acrossReplicas && span != ReplicaSpan::All &&
                schedule.groups[g].name == kDataParallelAxis);
      };
      std::vector<ActionRef> refs;
      if (acrossReplicas && !reduceGrads[s].empty())
        refs.push_back(reduceGrads[s].front());
      for (ActionRef ref : gradientReductions[s])
        if (counted(index.action(ref).group))
          refs.push_back(ref);
      if (refs.size() < 2)
        continue;
      llvm::sort(refs, [](ActionRef x, ActionRef y) {
        return x.rank != y.rank ? x.rank < y.rank : x.index < y.index;
      });
      ok = false;
      if (Violation *v = sink.add(
              ViolationKind::Duplicate, refs[1],
              llvm::formatv("{0} reduces the gradients of stage {1} over "
                            "@{2} a second time on rank {3}: the engine takes "
                            "every all_reduce or reduce_scatter that an "
                            "after_backward declaration could explain ({4}) "
                            "for a gradient reduction, and sums the reduced "
                            "gradients again",
                            describe(refs[1]), s, name, rankId(refs[1].rank),
                            span == ReplicaSpan::Shard ||
                                    span == ReplicaSpan::Replicate
                                ? llvm::formatv("and REDUCE_GRAD and @dp, "
                                                "which sum over every "
                                                "data-parallel replica, so "
                                                "along @{0} too",
                                                name)
                                      .str()
                                : std::string("and REDUCE_GRAD, over @dp")),
              /*observed=*/refs.size(), /*required=*/1)) {
        v->notes.push_back({refs[0], "the first reduction is here"});
        std::string words;
        std::vector<ActionPattern> patterns =
            reductionPatterns(s, counted, words);
        if (acrossReplicas) {
          ActionPattern reduceGrad;
          reduceGrad.kind = ActionKind::ReduceGrad;
          reduceGrad.stage = s;
          patterns.insert(patterns.begin(), reduceGrad);
          words = patternWords(reduceGrad) + " or " + words;
        }
        v->rule = StructuralRule::selection(
            refs[1].rank, std::move(patterns),
            llvm::formatv("the actions that reduce the gradients of stage {0} "
                          "over @{1} (every all_reduce or reduce_scatter "
                          "that an after_backward declaration explains{2}: "
                          "{3})",
                          s, name,
                          !acrossReplicas ? ""
                          : span == ReplicaSpan::All
                              ? ", and REDUCE_GRAD, over the data-parallel "
                                "replicas"
                              : ", and REDUCE_GRAD or @dp, which sum its "
                                "replicas too",
                          words)
                .str(),
            1);
        v->rule.atMost = true;
      }
    }
  }
  return ok;
}

bool StepRules::checkStructuralReductions(ViolationSink &sink) const {
  if (!wholeStep)
    return true;
  bool ok = true;
  auto groupName = [&](int32_t g) -> llvm::StringRef {
    return g >= 0 && static_cast<size_t>(g) < schedule.groups.size()
               ? llvm::StringRef(schedule.groups[g].name)
               : llvm::StringRef();
  };
  const int32_t perReplica = schedule.stagesPerReplica();
  for (int32_t s = 0; s < index.numStages; ++s) {
    const int32_t rank = index.stageRank[s];
    if (rank < 0)
      continue;
    const std::vector<ActionRef> &reductions = gradientReductions[s];
    // Data parallelism: the engine runs the plan once per replica, each on
    // its own microbatches; REDUCE_GRAD, or a gradient reduction on the
    // group named dp, sums the replicas' gradients. With hybrid sharding a
    // reduction over @dp_shard and one over @dp_replicate do it together
    // (an axis of one replica needs none: its sum changes nothing).
    auto reducesOver = [&](llvm::StringRef name) {
      return llvm::any_of(reductions, [&](ActionRef r) {
        return groupName(index.action(r).group) == name;
      });
    };
    const bool hybrid = schedule.shardGroupSize > 0;
    auto along = [&](llvm::StringRef axis) {
      return replicasAlong(replicaSpanOf(axis), schedule.dataParallel,
                           schedule.shardGroupSize);
    };
    auto summedAlong = [&](llvm::StringRef axis) {
      return along(axis) < 2 || reducesOver(axis);
    };
    const bool overDp =
        !reduceGrads[s].empty() || reducesOver(kDataParallelAxis) ||
        (hybrid && summedAlong(kShardAxis) && summedAlong(kReplicateAxis));
    if (schedule.dataParallel > 1 && !overDp) {
      ok = false;
      // What is missing: the reduction over the whole of dp, or, when the
      // stage reduces along one hybrid-sharding axis, the other one.
      llvm::StringRef missing = kDataParallelAxis;
      if (hybrid && (reducesOver(kShardAxis) || reducesOver(kReplicateAxis)))
        missing = summedAlong(kShardAxis) ? kReplicateAxis : kShardAxis;
      const int64_t replicas = along(missing);
      const bool whole = missing == kDataParallelAxis;
      Violation *v = sink.add(
          ViolationKind::Missing, {rank, -1},
          whole ? llvm::formatv(
                      "stage {0} on rank {1} has no gradient "
                      "reduction over the {2} data-parallel replicas: "
                      "each replica would step on the gradient of its "
                      "own microbatches; the step needs REDUCE_GRAD"
                      "(stage {0}) or an all_reduce @dp of stage {0} "
                      "declared after_backward{3}",
                      s, rankId(rank), schedule.dataParallel,
                      hybrid ? ", or one over @dp_shard and one over "
                               "@dp_replicate"
                             : "")
                      .str()
                : llvm::formatv(
                      "stage {0} on rank {1} reduces its gradients over "
                      "@{2} but not over @{3} ({4}): with hybrid sharding "
                      "the sum over every data-parallel replica needs both; "
                      "each {5} would step on a partial sum",
                      s, rankId(rank),
                      missing == kShardAxis ? kReplicateAxis : kShardAxis,
                      missing,
                      missing == kShardAxis
                          ? llvm::formatv("the {0} replicas of each shard "
                                          "group", replicas)
                                .str()
                          : llvm::formatv("across the {0} shard groups",
                                          replicas)
                                .str(),
                      missing == kShardAxis ? "replica" : "shard group")
                      .str(),
          /*observed=*/0, /*required=*/1);
      if (v) {
        ActionPattern reduceGrad;
        reduceGrad.kind = ActionKind::ReduceGrad;
        reduceGrad.stage = s;
        std::string words = whole ? patternWords(reduceGrad) : "";
        std::vector<ActionPattern> patterns = reductionPatterns(
            s, [&](int32_t g) { return groupName(g) == missing; }, words);
        if (whole)
          patterns.insert(patterns.begin(), reduceGrad);
        v->rule = StructuralRule::selection(
            rank, std::move(patterns),
            whole ? llvm::formatv("the gradient reductions of stage {0} over "
                                  "the data-parallel replicas (REDUCE_GRAD, "
                                  "or an all_reduce or reduce_scatter on @dp "
                                  "that an after_backward declaration "
                                  "explains: {1})",
                                  s, words)
                        .str()
                  : llvm::formatv("the gradient reductions of stage {0} "
                                  "over @{1} (an all_reduce or "
                                  "reduce_scatter on @{1} that an "
                                  "after_backward declaration explains: {2})",
                                  s, missing,
                                  words.empty() ? std::string("no declaration")
                                                : words)
                        .str(),
            1);
        v->rule.atLeast = true;
        v->rule.premiseName = missing.str();
        v->rule.premiseValue = replicas;
      }
    }
    if (schedule.replicas < 2)
      continue;
    // Pipeline replicas: each copy of a model stage sees only its own
    // replica's microbatches until a gradient reduction whose member set
    // joins the ranks of every copy sums them.
    std::vector<int32_t> copyRanks;
    for (int32_t k = 0; k < schedule.replicas; ++k)
      copyRanks.push_back(index.stageRank[s % perReplica + k * perReplica]);
    const bool summed = llvm::any_of(reductions, [&](ActionRef r) {
      const int32_t g = index.action(r).group;
      for (const std::vector<int32_t> &members : schedule.groups[g].members)
        if (llvm::is_contained(members, rank))
          return llvm::all_of(copyRanks, [&](int32_t copy) {
            return copy < 0 || llvm::is_contained(members, copy);
          });
      return false;
    });
    if (summed)
      continue;
    ok = false;
    std::string copies;
    for (int32_t k = 0; k < schedule.replicas; ++k) {
      const int32_t copy = s % perReplica + k * perReplica;
      if (!copies.empty())
        copies += ", ";
      copies += llvm::formatv("stage {0} on rank {1}", copy,
                              copyRanks[k] < 0 ? -1 : rankId(copyRanks[k]));
    }
    Violation *v = sink.add(
        ViolationKind::Missing, {rank, -1},
        llvm::formatv("stage {0} on rank {1} has no replica sum: the "
                      "schedule runs {2} pipeline replicas, and each copy "
                      "of model stage {3} ({4}) computes the gradient of "
                      "its own microbatches only; the step needs an "
                      "all_reduce of stage {0} declared after_backward "
                      "on a group whose member set holds every copy's "
                      "rank",
                      s, rankId(rank), schedule.replicas, s % perReplica,
                      copies),
        /*observed=*/0, /*required=*/1);
    if (!v)
      continue;
    std::string words;
    std::vector<ActionPattern> patterns = reductionPatterns(
        s, [](int32_t) { return true; }, words);
    std::vector<int32_t> holds;
    for (int32_t copy : copyRanks)
      if (copy >= 0)
        holds.push_back(copy);
    for (ActionPattern &pattern : patterns) {
      pattern.members = memberSet(pattern.group, rank);
      pattern.holds = holds;
    }
    v->rule = StructuralRule::selection(
        rank, std::move(patterns),
        llvm::formatv("the replica sums of stage {0} (an all_reduce or "
                      "reduce_scatter that an after_backward declaration "
                      "explains, on a group whose member set holding rank "
                      "index {2} (the constants member) holds the rank index "
                      "of every copy of model stage {3} (the constants "
                      "holds): {1})",
                      s, words.empty() ? std::string("no declaration") : words,
                      rank, s % perReplica)
            .str(),
        1);
    v->rule.atLeast = true;
    v->rule.premiseName = "replicas";
    v->rule.premiseValue = schedule.replicas;
  }
  return checkBiasSpansCopies(sink) && ok;
}

bool StepRules::checkBiasSpansCopies(ViolationSink &sink) const {
  if (schedule.replicas < 2)
    return true;
  bool ok = true;
  const int32_t perReplica = schedule.stagesPerReplica();
  for (size_t d = 0; d < declarations.size(); ++d) {
    if (biasHeadOf[d] < 0)
      continue;
    const CollectiveDeclaration &bias = declarations[d];
    const int32_t stage = bias.stage;
    if (stage < 0 || stage >= index.numStages || index.stageRank[stage] < 0)
      continue;
    const int32_t rank = index.stageRank[stage];
    // Each pipeline copy of the stage balances its experts on its own
    // block of microbatches; only a bias all-reduce whose member set joins
    // every copy's rank gives the copies one bias.
    const std::vector<int32_t> &members = memberSet(bias.group, rank);
    std::vector<int32_t> holds;
    std::string outside;
    for (int32_t k = 0; k < schedule.replicas; ++k) {
      const int32_t copy = stage % perReplica + k * perReplica;
      const int32_t copyRank = index.stageRank[copy];
      if (copyRank < 0)
        continue;
      holds.push_back(copyRank);
      if (llvm::is_contained(members, copyRank))
        continue;
      if (!outside.empty())
        outside += ", ";
      outside += llvm::formatv("rank {0} (stage {1})", rankId(copyRank), copy);
    }
    if (outside.empty())
      continue;
    ok = false;
    std::string memberWords;
    for (int32_t m : members)
      memberWords += (memberWords.empty() ? "" : ", ") +
                     std::to_string(rankId(m));
    const std::vector<ActionRef> &refs = issued(d, stage);
    Violation *v = sink.add(
        ViolationKind::Missing,
        refs.empty() ? ActionRef{rank, -1} : refs.front(),
        llvm::formatv("the bias update of aux head at stage {0} (scope "
                      "aux_free) runs on @{1}, whose member set on rank {2} "
                      "([{3}]) does not hold {4}, another copy of model stage "
                      "{5}: each of the {6} pipeline replicas would update "
                      "the expert bias from its own microbatches and the "
                      "copies' biases diverge; the bias all_reduce needs a "
                      "group whose member set holds every copy's rank",
                      stage, schedule.groups[bias.group].name, rankId(rank),
                      memberWords, outside, stage % perReplica,
                      schedule.replicas),
        /*observed=*/0, /*required=*/1);
    if (!v)
      continue;
    v->auxHeadStage = stage;
    ActionPattern pattern;
    pattern.kind = bias.kind;
    pattern.stage = stage;
    pattern.group = bias.group;
    pattern.ofBytes = true;
    pattern.bytes = bias.bytes;
    pattern.declarations.push_back(-1);
    pattern.members = members;
    pattern.holds = holds;
    std::string words = patternWords(pattern);
    v->rule = StructuralRule::selection(
        rank, {std::move(pattern)},
        llvm::formatv("the bias updates of aux head at stage {0} ({1}) on a "
                      "group whose member set holding rank index {2} (the "
                      "constants member) holds the rank index of every copy "
                      "of model stage {3} (the constants holds)",
                      stage, words, rank, stage % perReplica)
            .str(),
        1);
    v->rule.atLeast = true;
    v->rule.premiseName = "replicas";
    v->rule.premiseValue = schedule.replicas;
  }
  return ok;
}

std::string StepRules::patternWords(const ActionPattern &pattern) const {
  Action a;
  a.kind = pattern.kind;
  a.stage = pattern.stage;
  a.group = pattern.group;
  std::string words = describeAction(schedule, a);
  words += llvm::formatv(" (kind {0}", static_cast<int>(pattern.kind));
  if (pattern.group >= 0)
    words += llvm::formatv(", group {0}", pattern.group);
  if (pattern.ofBytes)
    words += llvm::formatv(", bytes {0} or unknown", pattern.bytes);
  if (!pattern.declarations.empty()) {
    words += ", naming no declaration (named -1)";
    for (int32_t d : pattern.declarations)
      if (d >= 0)
        words += " or declaration " + std::to_string(d);
  }
  return words + ")";
}

std::vector<ActionPattern>
StepRules::reductionPatterns(int32_t stage,
                             llvm::function_ref<bool(int32_t)> onGroup,
                             std::string &words) const {
  std::vector<ActionPattern> patterns;
  for (const CollectiveDeclaration &decl : schedule.collectives) {
    if (decl.when != CollectiveTiming::AfterBackward ||
        (decl.kind != ActionKind::AllReduce &&
         decl.kind != ActionKind::ReduceScatter) ||
        (decl.stage >= 0 && decl.stage != stage) || !onGroup(decl.group))
      continue;
    const int32_t d = static_cast<int32_t>(&decl - &schedule.collectives[0]);
    auto same = llvm::find_if(patterns, [&](const ActionPattern &p) {
      return p.kind == decl.kind && p.group == decl.group;
    });
    if (same != patterns.end()) {
      same->declarations.push_back(d);
      continue;
    }
    ActionPattern pattern;
    pattern.kind = decl.kind;
    pattern.stage = stage;
    pattern.group = decl.group;
    pattern.declarations.push_back(d);
    if (!words.empty())
      words += " or ";
    words += patternWords(pattern);
    patterns.push_back(std::move(pattern));
  }
  return patterns;
}

StructuralRule StepRules::declarationRule(size_t d, int32_t stage) const {
  const int32_t rank = index.stageRank[stage];
  if (rank < 0)
    return {};
  const std::vector<Action> &program = schedule.ranks[rank].actions;
  // An action that names its declaration is an instance of that one only.
  auto applies = [&](size_t c, const Action &a) {
    return a.stage == stage && declares(declarations[c], a) &&
           (a.declaration < 0 || static_cast<size_t>(a.declaration) == c);
  };
  // The declarations that explain an action d (or one of them) explains:
  // the instances of each are among the actions they explain together.
  std::vector<bool> inClass(declarations.size(), false);
  inClass[d] = true;
  for (bool grew = true; grew;) {
    grew = false;
    for (const Action &a : program) {
      bool shared = false;
      for (size_t c = 0; c < declarations.size() && !shared; ++c)
        shared = inClass[c] && applies(c, a);
      if (!shared)
        continue;
      for (size_t c = 0; c < declarations.size(); ++c)
        if (!inClass[c] && applies(c, a))
          inClass[c] = grew = true;
    }
  }
  std::vector<ActionPattern> patterns;
  std::vector<DeclarationPattern> readings;
  std::string words;
  int64_t required = 0;
  size_t members = 0;
  for (size_t c = 0; c < declarations.size(); ++c) {
    if (!inClass[c])
      continue;
    ++members;
    const CollectiveDeclaration &decl = declarations[c];
    const int64_t instances = static_cast<int64_t>(expectedInstances(decl));
    required += instances;
    ActionPattern pattern;
    pattern.kind = decl.kind;
    pattern.stage = stage;
    pattern.group = decl.group;
    pattern.ofBytes = true;
    pattern.bytes = decl.bytes;
    // A bias update is no declaration of the schedule's: no action names
    // it.
    pattern.declarations.push_back(
        c < schedule.collectives.size() ? static_cast<int32_t>(c) : -1);
    if (!words.empty())
      words += " and ";
    words += patternWords(pattern) + " declared " + timingName(decl.when);
    if (biasHeadOf[c] >= 0)
      words += " (the bias update of aux head at stage " +
               std::to_string(decl.stage) + ")";
    readings.push_back({pattern, decl.when, instances});
    patterns.push_back(std::move(pattern));
  }
  // A fragment issues each declaration in full or not at all: the counts
  // it allows are the sums of the instances of some of them.
  std::vector<int64_t> allowed{0};
  for (size_t c = 0; c < declarations.size() && !wholeStep; ++c) {
    if (!inClass[c])
      continue;
    const int64_t instances =
        static_cast<int64_t>(expectedInstances(declarations[c]));
    for (size_t k = 0, end = allowed.size(); k < end; ++k)
      allowed.push_back(allowed[k] + instances);
    llvm::sort(allowed);
    allowed.erase(llvm::unique(allowed), allowed.end());
  }
  int64_t found = 0;
  for (const Action &a : program)
    for (size_t c = 0; c < declarations.size(); ++c)
      if (inClass[c] && applies(c, a)) {
        ++found;
        break;
      }
  std::string selects =
      llvm::formatv("the actions {0} {1} {2} (of its kind and group, of "
                    "stage {3}, of its bytes or of unknown bytes)",
                    members > 1 ? "the declarations" : "the declaration", words,
                    members > 1 ? "explain" : "explains", stage)
          .str();
  // As many as declared in all (in a fragment, as some of them ask for),
  // but no reading issues each on time: the count holds, and the rule is
  // the order, over the readings of the actions (matching finds an on-time
  // reading whenever one exists). A fragment that issues fewer gives each
  // declaration its instances or none.
  if (found == required || (!wholeStep && llvm::is_contained(allowed, found))) {
    StructuralRule rule = StructuralRule::reading(
        rank, stage, std::move(readings), std::move(selects));
    rule.orNone = found != required;
    return rule;
  }
  StructuralRule rule = StructuralRule::selection(rank, std::move(patterns),
                                                  std::move(selects), required);
  // Besides `required`, the counts of a fragment that issues some of the
  // declarations only.
  if (!wholeStep)
    for (int64_t count : allowed)
      if (count != required)
        rule.orCounts.push_back(count);
  return rule;
}

Violation *
StepRules::reportBiasUpdate(ViolationSink &sink,
                            const CollectiveDeclaration &decl,
                            const std::vector<ActionRef> &refs) const {
  const int32_t rank = index.stageRank[decl.stage];
  Action update;
  update.kind = decl.kind;
  update.group = decl.group;
  update.stage = decl.stage;
  const std::string what = describeAction(schedule, update);
  if (!refs.empty()) {
    if (Violation *v = sink.add(
            ViolationKind::Duplicate, refs[1],
            llvm::formatv("{0} is issued {1} times on rank {2}, but the bias "
                          "update of aux head at stage {3} (scope aux_free) "
                          "runs once per step",
                          what, refs.size(), rankId(rank), decl.stage),
            /*observed=*/refs.size(), /*required=*/1)) {
      v->notes.push_back({refs.front(), "the first one is here"});
      v->auxHeadStage = decl.stage;
      return v;
    }
    return nullptr;
  }
  Violation *v = sink.add(
      ViolationKind::Missing, {rank, -1},
      llvm::formatv("rank {0} has no bias update for aux head at stage "
                    "{1} (scope aux_free): {2} after the stage's last "
                    "backward and before the optimizer step",
                    rankId(rank), decl.stage, what),
      /*observed=*/0, /*required=*/1);
  if (v)
    v->auxHeadStage = decl.stage;
  return v;
}

Violation *StepRules::reportDeclared(ViolationSink &sink,
                                     const CollectiveDeclaration &decl,
                                     int32_t stage,
                                     const std::vector<ActionRef> &refs) const {
  const size_t expected = expectedInstances(decl);
  const int32_t rank = index.stageRank[stage];
  Action declared;
  declared.kind = decl.kind;
  declared.group = decl.group;
  declared.stage = stage;
  const std::string what = describeAction(schedule, declared);
  if (refs.size() > expected) {
    if (Violation *v = sink.add(
            ViolationKind::Duplicate, refs[expected],
            llvm::formatv("{0} is issued {1} times on rank {2}, but its "
                          "declaration ({3}) asks for {4} per step",
                          what, refs.size(), rankId(rank),
                          timingName(decl.when), expected),
            /*observed=*/refs.size(), /*required=*/expected)) {
      v->notes.push_back({refs.front(), "the first one is here"});
      return v;
    }
    return nullptr;
  }
  if (servesComputes(decl.when)) {
    const ActionRef unserved = servedComputes(stage, decl.when)[refs.size()];
    return sink.add(
        ViolationKind::Missing, unserved,
        llvm::formatv(
            "{0} has no {1} {2} it: the collective is "
            "declared {3}, and rank {4} issues it {5} times "
            "for the stage's {6} {7}",
            describe(unserved), what,
            decl.when == CollectiveTiming::AfterForward ? "after" : "before",
            timingName(decl.when), rankId(rank), refs.size(), expected,
            decl.when == CollectiveTiming::BeforeBackward ? "backwards"
                                                          : "forwards"),
        /*observed=*/refs.size(), /*required=*/expected);
  }
  return sink.add(ViolationKind::Missing, {rank, -1},
                  llvm::formatv("rank {0} does not issue {1}, declared {2}{3}",
                                rankId(rank), what, timingName(decl.when),
                                decl.when == CollectiveTiming::Step
                                    ? " (before the optimizer step)"
                                    : " (after the stage's last gradient)"),
                  /*observed=*/0, /*required=*/1);
}

//===----------------------------------------------------------------------===//
// Orders
//===----------------------------------------------------------------------===//

void StepRules::addOrders(
    llvm::function_ref<void(ActionRef, ActionRef, WaitReason)> edge) const {
  addShardingOrders(edge);
  addDeclarationOrders(edge);
  addUndeclaredOrders(edge);
  // Gradient reduction after the stage's last gradient (B or W): earlier
  // gradients of the rank precede that one in program order.
  std::vector<ActionRef> lastGradients(index.numStages);
  for (int32_t s = 0; s < index.numStages; ++s) {
    lastGradients[s] = lastGradient(s);
    for (ActionRef reduce : reduceGrads[s])
      edge(lastGradients[s], reduce, WaitReason::GradientReduction);
  }
  for (const auto &[key, refs] : instances)
    if (declarations[key.first].when == CollectiveTiming::AfterBackward)
      for (ActionRef reduce : refs)
        edge(lastGradients[key.second], reduce,
             biasHeadOf[key.first] >= 0 ? WaitReason::BiasUpdate
                                        : WaitReason::GradientReduction);
  // Whatever declaration matching gives it, the engine takes an action an
  // after_backward declaration could explain for a gradient reduction:
  // every reading must be on time.
  for (int32_t s = 0; s < index.numStages; ++s)
    for (ActionRef reduce : gradientReductions[s])
      edge(lastGradients[s], reduce, WaitReason::GradientReduction);
  // On an FSDP stage over data-parallel replicas, REDUCE_GRAD keeps the
  // rank's shard of the reduced gradient, and a sum over another group
  // (DualPipe's replica sum) then moves that shard. Issued before it, that
  // sum would move the full gradient: its members must agree, so every one
  // follows the REDUCE_GRAD, as FSDP's hybrid sharding orders them.
  if (schedule.dataParallel > 1)
    for (int32_t s = 0; s < index.numStages; ++s) {
      if (sharding[s].empty() || reduceGrads[s].empty())
        continue;
      for (ActionRef reduce : gradientReductions[s])
        if (replicaSpanOf(schedule.groups[index.action(reduce).group].name) ==
            ReplicaSpan::None)
          edge(reduceGrads[s].front(), reduce, WaitReason::ShardedReduction);
    }
  // The optimizer step ends the computation of the step: every compute,
  // gradient reduction and declared collective of its rank comes before it
  // (what precedes it does by program order). Transfers, FSDP's UNSHARD and
  // RESHARD and undeclared collectives may follow it: a send after the step
  // carries a value computed before it.
  std::set<std::pair<int32_t, int32_t>> declared;
  for (const auto &[key, refs] : instances)
    for (ActionRef ref : refs)
      declared.insert({ref.rank, ref.index});
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    for (ActionRef step : optimizerSteps[r])
      for (int32_t i = step.index + 1,
                   end = static_cast<int32_t>(actions.size());
           i < end; ++i) {
        const Action &a = actions[i];
        const bool ofTheStep =
            isCompute(a.kind) || a.kind == ActionKind::ReduceGrad ||
            (isCollective(a.kind) &&
             (declared.count({step.rank, i}) || reducesGradients(schedule, a)));
        if (ofTheStep)
          edge({step.rank, i}, step, WaitReason::OptimizerStep);
      }
  }
}

const std::vector<int32_t> &StepRules::memberSet(int32_t group,
                                                 int32_t rank) const {
  static const std::vector<int32_t> kNone;
  if (group < 0 || static_cast<size_t>(group) >= schedule.groups.size())
    return kNone;
  for (const std::vector<int32_t> &members : schedule.groups[group].members)
    if (llvm::is_contained(members, rank))
      return members;
  return kNone;
}

bool StepRules::isReplicaSum(ActionRef ref) const {
  const Action &a = index.action(ref);
  if (schedule.replicas < 2 || a.kind != ActionKind::AllReduce)
    return false;
  const int32_t perReplica = schedule.stagesPerReplica();
  const std::vector<int32_t> &members = memberSet(a.group, ref.rank);
  for (int32_t k = 0; k < schedule.replicas; ++k) {
    const int32_t copy = index.stageRank[a.stage % perReplica + k * perReplica];
    if (copy >= 0 && !llvm::is_contained(members, copy))
      return false;
  }
  return true;
}

StepRules::ImpliedRole StepRules::impliedRole(ActionRef ref) const {
  const Action &a = index.action(ref);
  // A reduce-scatter of a stage is FSDP's gradient reduction; an
  // all-reduce joining every copy of a stage is DualPipe's replica sum.
  if (a.kind == ActionKind::ReduceScatter || isReplicaSum(ref))
    return ImpliedRole::GradientReduction;
  // An all-gather of a stage over the data-parallel replicas gathers its
  // parameters (FSDP).
  if (a.kind == ActionKind::AllGather && a.group >= 0 &&
      static_cast<size_t>(a.group) < schedule.groups.size() &&
      replicaSpanOf(schedule.groups[a.group].name) != ReplicaSpan::None)
    return ImpliedRole::ParameterGather;
  return ImpliedRole::Unknown;
}

std::vector<Violation> StepRules::unchecked() const {
  std::vector<Violation> found;
  for (ActionRef ref : undeclared) {
    const Action &a = index.action(ref);
    if (impliedRole(ref) != ImpliedRole::Unknown)
      continue;
    Violation v;
    v.at = ref;
    v.kind = ViolationKind::Collective;
    v.message = llvm::formatv(
        "unchecked: {0} on rank {1} carries stage {2}, but no declaration "
        "(sched.collective) says when it runs, and its kind and group do not "
        "say what it does; declare it to have it checked",
        describe(ref), rankId(ref.rank), a.stage);
    found.push_back(std::move(v));
    if (found.size() >= ViolationSink::kMaxViolations)
      break;
  }
  return found;
}

void StepRules::addUndeclaredOrders(
    llvm::function_ref<void(ActionRef, ActionRef, WaitReason)> edge) const {
  std::vector<bool> gathered(index.numStages, false);
  for (ActionRef ref : undeclared) {
    const Action &a = index.action(ref);
    const ImpliedRole role = impliedRole(ref);
    if (role == ImpliedRole::Unknown || ref.rank != index.stageRank[a.stage])
      continue;
    // A gradient reduction comes after the stage's last gradient.
    if (role == ImpliedRole::GradientReduction) {
      edge(lastGradient(a.stage), ref, WaitReason::GradientReduction);
      continue;
    }
    // The first all-gather of a stage over @dp gathers its parameters:
    // before the stage's first compute.
    if (gathered[a.stage])
      continue;
    gathered[a.stage] = true;
    const std::vector<Action> &actions = schedule.ranks[ref.rank].actions;
    for (int32_t i = 0, end = static_cast<int32_t>(actions.size()); i < end;
         ++i)
      if (isCompute(actions[i].kind) && actions[i].stage == a.stage) {
        edge(ref, {ref.rank, i}, WaitReason::Parameters);
        break;
      }
  }
}

void StepRules::addShardingOrders(
    llvm::function_ref<void(ActionRef, ActionRef, WaitReason)> edge) const {
  // Every action of a stage sits on the rank that holds it (checked), so
  // one state per stage serves all ranks.
  const int32_t numStages = index.numStages;
  std::vector<int32_t> lastUnshard(numStages, -1), lastReshard(numStages, -1);
  // Computes of a sharded stage outside an UNSHARD..RESHARD window: the
  // next UNSHARD must come before them, or else the RESHARD before them
  // after them.
  std::vector<std::vector<int32_t>> outside(numStages);
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    const int32_t rank = static_cast<int32_t>(r);
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    for (int32_t i = 0, end = static_cast<int32_t>(actions.size()); i < end;
         ++i) {
      const Action &a = actions[i];
      if (a.stage < 0 || a.stage >= numStages || sharding[a.stage].empty())
        continue;
      const int32_t s = a.stage;
      if (isCompute(a.kind) && lastUnshard[s] <= lastReshard[s])
        outside[s].push_back(i);
      if (a.kind == ActionKind::Unshard) {
        for (int32_t compute : outside[s])
          edge({rank, i}, {rank, compute}, WaitReason::Parameters);
        outside[s].clear();
        lastUnshard[s] = i;
      }
      if (a.kind == ActionKind::Reshard)
        lastReshard[s] = i;
    }
  }
  for (int32_t s = 0; s < numStages; ++s) {
    const int32_t rank = index.stageRank[s];
    if (lastReshard[s] >= 0)
      for (int32_t compute : outside[s])
        edge({rank, compute}, {rank, lastReshard[s]}, WaitReason::Parameters);
  }
}

void StepRules::addDeclarationOrders(
    llvm::function_ref<void(ActionRef, ActionRef, WaitReason)> edge) const {
  for (const auto &[key, refs] : instances) {
    const CollectiveTiming when = declarations[key.first].when;
    if (!servesComputes(when))
      continue;
    const std::vector<ActionRef> computes = servedComputes(key.second, when);
    for (size_t k = 0; k < refs.size() && k < computes.size(); ++k) {
      if (when == CollectiveTiming::AfterForward)
        edge(computes[k], refs[k], WaitReason::DeclaredCollective);
      else
        edge(refs[k], computes[k], WaitReason::DeclaredCollective);
    }
  }
}
