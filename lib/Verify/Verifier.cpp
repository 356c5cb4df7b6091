//===- Verifier.cpp - the schedule verifier -------------------------------===//
//
// Structural checks first (counting needs no search), then the wait graph
// and the memory walk, which find violations and a candidate execution,
// then Z3 on the shrunk encoding: every verdict it can give is its own.
//
//===----------------------------------------------------------------------===//

#include "lib/Verify/Verifier.h"
#include "lib/Verify/MemoryCheck.h"
#include "lib/Verify/ScheduleIndex.h"
#include "lib/Verify/StepRules.h"
#include "lib/Verify/StreamOrder.h"
#include "lib/Verify/WaitGraph.h"
#include "lib/Verify/Z3/Z3Prover.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>

using namespace sched;

const char *sched::violationKindName(ViolationKind kind) {
  switch (kind) {
  case ViolationKind::Missing:
    return "missing";
  case ViolationKind::Duplicate:
    return "duplicate";
  case ViolationKind::Placement:
    return "placement";
  case ViolationKind::Dependency:
    return "dependency";
  case ViolationKind::Transfer:
    return "transfer";
  case ViolationKind::Deadlock:
    return "deadlock";
  case ViolationKind::Collective:
    return "collective";
  case ViolationKind::Memory:
    return "memory";
  }
  return "unknown";
}

const char *sched::verdictName(Verdict verdict) {
  switch (verdict) {
  case Verdict::Verified:
    return "verified";
  case Verdict::Violated:
    return "violated";
  case Verdict::Unknown:
    return "unknown";
  }
  return "unknown";
}

namespace {

/// Turns a cycle of the wait graph into a violation.
class CycleReporter {
public:
  CycleReporter(const ScheduleIndex &index, const WaitGraph &graph,
                const VerifyOptions &options)
      : index(index), graph(graph), options(options) {}

  void report(const std::vector<size_t> &cycle, ViolationSink &sink) {
    llvm::SmallSet<int32_t, 8> ranks;
    for (size_t k : cycle) {
      ranks.insert(graph.getEdges()[k].fromAction.rank);
      ranks.insert(graph.getEdges()[k].toAction.rank);
    }
    if (ranks.size() == 1 && reportOrder(cycle, sink))
      return;
    reportDeadlock(cycle, ranks.size(), sink);
  }

private:
  std::string describe(ActionRef ref) const {
    return describeAction(index.schedule, index.action(ref));
  }
  int64_t rankId(ActionRef ref) const {
    return index.schedule.ranks[ref.rank].id;
  }

  /// Why `e.toAction` may not run before `e.fromAction`, for an edge
  /// against program order.
  std::string orderReason(const WaitEdge &e) const {
    const Action &to = index.action(e.toAction);
    switch (e.reason) {
    case WaitReason::AuxLoss:
      return llvm::formatv("a global-batch auxiliary loss at stage {0} needs "
                           "every forward of the stage before any backward",
                           to.stage);
    case WaitReason::BiasUpdate:
      return llvm::formatv("is the bias update of aux head at stage {0} "
                           "(scope aux_free), which must come after every "
                           "backward and weight gradient of the stage",
                           to.stage);
    case WaitReason::Parameters:
      if (to.kind == ActionKind::Reshard)
        return "frees the parameters " + describe(e.fromAction) +
               " needs, and no later UNSHARD gathers them again";
      return "needs its parameters gathered";
    case WaitReason::GradientReduction:
      return llvm::formatv("reduces the gradients of stage {0}, which must "
                           "come after every backward and weight gradient of "
                           "the stage",
                           to.stage);
    case WaitReason::DeclaredCollective:
      if (isCompute(to.kind)) {
        const char *work =
            to.kind == ActionKind::Forward ? "forward" : "backward";
        return llvm::formatv("the collective is declared before_{0} of stage "
                             "{1}: the k-th one runs before the k-th {0}",
                             work, to.stage);
      }
      return llvm::formatv("is declared after_forward of stage {0}: the k-th "
                           "one runs after the k-th forward",
                           index.action(e.fromAction).stage);
    case WaitReason::ShardedReduction:
      return llvm::formatv(
          "sums the gradients of FSDP-sharded stage {0}: it comes after the "
          "stage's REDUCE_GRAD and moves the reduced shard (before it, it "
          "would move the full gradient, while the copies that follow "
          "REDUCE_GRAD move a shard: the members would disagree on the count)",
          to.stage);
    case WaitReason::OptimizerStep:
      return "the optimizer step ends the training step: every action of the "
             "rank must come before it";
    case WaitReason::CommunicatorCreation:
      return waitReasonWords(e.reason);
    case WaitReason::ProgramOrder:
    case WaitReason::Data:
    case WaitReason::Transfer:
    case WaitReason::Rendezvous:
    case WaitReason::GroupCompletion:
      break;
    }
    return "needs its output";
  }

  /// One rank runs a consumer ahead of its producer, or together with it
  /// in one overlap.
  bool reportOrder(const std::vector<size_t> &cycle, ViolationSink &sink) {
    for (size_t k : cycle) {
      const WaitEdge &e = graph.getEdges()[k];
      const Action &to = index.action(e.toAction);
      const bool together =
          to.bundle != 0 && to.bundle == index.action(e.fromAction).bundle;
      if (e.reason == WaitReason::ProgramOrder ||
          (e.toAction.index > e.fromAction.index && !together))
        continue;
      if (e.reason == WaitReason::AuxLoss) {
        reportAuxOrder(e, sink);
        return true;
      }
      const std::string message =
          llvm::formatv(
              "{0} runs {1} {2} on rank {3}, but {4}", describe(e.toAction),
              together ? "together with" : "before", describe(e.fromAction),
              rankId(e.toAction), orderReason(e))
              .str();
      if (Violation *v =
              sink.add(ViolationKind::Dependency, e.toAction, message))
        v->notes.push_back(
            {e.fromAction,
             describe(e.fromAction) + (together ? " runs here, at the same time"
                                                : " runs here, later")});
      return true;
    }
    return false;
  }

  /// A backward of a global-batch head's stage before the stage's last
  /// forward, named as the head sees it.
  void reportAuxOrder(const WaitEdge &e, ViolationSink &sink) {
    const Action &backward = index.action(e.toAction);
    const Action &forward = index.action(e.fromAction);
    const bool together = backward.bundle != 0 &&
                          e.toAction.index != e.fromAction.index &&
                          backward.bundle == forward.bundle;
    const std::string message =
        llvm::formatv("backward of stage {0} microbatch {1} runs {2} the "
                      "forward of microbatch {3} reaches aux head at stage "
                      "{4} (scope global_batch) on rank {5}: a global-batch "
                      "loss needs every forward of its stage before any "
                      "backward there",
                      backward.stage, backward.microbatch,
                      together ? "together with" : "before", forward.microbatch,
                      forward.stage, rankId(e.toAction))
            .str();
    Violation *v = sink.add(ViolationKind::Dependency, e.toAction, message);
    if (!v)
      return;
    v->auxHeadStage = forward.stage;
    v->notes.push_back(
        {e.fromAction, describe(e.fromAction) + " runs here, later"});
  }

  void reportDeadlock(const std::vector<size_t> &cycle, size_t numRanks,
                      ViolationSink &sink) {
    const std::vector<WaitEdge> &edges = graph.getEdges();
    // Anchor at a transfer or collective if the cycle has one.
    size_t anchor = 0;
    for (size_t k = 0; k < cycle.size(); ++k) {
      const Action &a = index.action(edges[cycle[k]].toAction);
      if (!isCompute(a.kind)) {
        anchor = k;
        break;
      }
    }
    const char *semantics =
        options.p2p == P2PSemantics::Eager ? "eager" : "rendezvous";
    Violation *v = sink.add(
        ViolationKind::Deadlock, edges[cycle[anchor]].toAction,
        llvm::formatv("deadlock under {0} semantics: a cycle of {1} waits "
                      "across {2} rank(s)",
                      semantics, cycle.size(), numRanks));
    if (!v)
      return;
    constexpr size_t kMaxNotes = 24;
    for (size_t n = 0; n < cycle.size() && n < kMaxNotes; ++n) {
      const WaitEdge &e = edges[cycle[(anchor + n) % cycle.size()]];
      const WaitEdge &next = edges[cycle[(anchor + n + 1) % cycle.size()]];
      v->notes.push_back(
          {e.toAction,
           llvm::formatv("rank {0}: {1} waits for {2} on rank {3}: {4}",
                         rankId(e.toAction), describe(e.toAction),
                         describe(e.fromAction), rankId(e.fromAction),
                         waitReasonWords(e.reason))
               .str()});
      if (next.fromAction.rank != e.toAction.rank ||
          next.fromAction.index != e.toAction.index)
        v->notes.push_back(
            {next.fromAction,
             llvm::formatv("rank {0}: {1} completes together with {2} on "
                           "rank {3}",
                           rankId(next.fromAction), describe(next.fromAction),
                           describe(e.toAction), rankId(e.toAction))
                 .str()});
    }
    if (cycle.size() > kMaxNotes)
      v->notes.push_back(
          {edges[cycle[anchor]].toAction,
           llvm::formatv("... and {0} more waits", cycle.size() - kMaxNotes)
               .str()});
  }

  const ScheduleIndex &index;
  const WaitGraph &graph;
  const VerifyOptions &options;
};

double secondsSince(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
      .count();
}

/// The Z3 query of a cycle alone: unsatisfiable iff it is a real cycle.
Z3Query cycleQuery(const WaitGraph &graph, const std::vector<size_t> &cycle) {
  Z3Query query;
  std::vector<uint32_t> dense(graph.numClasses(), UINT32_MAX);
  auto node = [&](uint32_t c) {
    if (dense[c] == UINT32_MAX)
      dense[c] = query.numNodes++;
    return dense[c];
  };
  for (size_t k : cycle) {
    const WaitEdge &e = graph.getEdges()[k];
    uint32_t from = node(e.from);
    query.edges.emplace_back(from, node(e.to));
  }
  return query;
}

/// The Z3 query of one rank's memory up to its first checkpoint over the
/// limit: unsatisfiable iff the limit is really exceeded there.
Z3Query memoryQuery(const MemoryCheck &memory, int32_t rank, int32_t position) {
  Z3Query query;
  query.limit = memory.limit();
  MemoryChain chain = memory.getChains()[rank];
  size_t keep = 0;
  while (keep < chain.positions.size() && chain.positions[keep] < position)
    ++keep;
  chain.steps.resize(std::min(keep + 1, chain.steps.size()));
  chain.values.clear();
  query.chains.push_back(std::move(chain));
  return query;
}

} // namespace

/// The name of an action kind in a rule's comment.
static llvm::StringRef kindName(ActionKind kind) {
  if (isCompute(kind))
    return computeLetter(kind);
  switch (kind) {
  case ActionKind::Send:
    return "SEND";
  case ActionKind::Recv:
    return "RECV";
  case ActionKind::ReduceGrad:
    return "REDUCE_GRAD";
  case ActionKind::OptimizerStep:
    return "OPTIMIZER_STEP";
  default:
    return "other";
  }
}

/// Actions a counting rule may list before its violation is stated as a
/// fact instead (the encoding declares three constants per action).
constexpr size_t kMaxRuleActions = 20000;

/// The same for a reading rule, whose Z3 search over the readings costs
/// far more per action (each action also gets a free `reads` constant and a
/// link of a chain per declaration): 2,500 actions take Z3 about a second
/// and 150 MB on the 2-core machine, 12,000 take 6 s and 490 MB.
constexpr size_t kMaxReadingActions = 2500;

/// The attributes of `a` a pairing or placement rule states.
static RuleAction ruleAction(const ScheduleIndex &index, const Action &a) {
  RuleAction result;
  result.kind = static_cast<int64_t>(a.kind);
  result.stage = a.stage;
  result.microbatch = a.microbatch;
  result.peer = a.peer;
  result.group = a.group;
  result.direction = a.gradient ? 1 : 0;
  result.payload = a.shape ? 1 : 0;
  const bool transfer =
      a.kind == ActionKind::Send || a.kind == ActionKind::Recv;
  // A transfer's bytes are its own, else its pair's stage output (what the
  // pairing check compares); a collective's are its own.
  result.bytes = transfer ? index.transferBytes(a) : a.bytes;
  if (a.group >= 0)
    result.stageKey = collectiveStageIsKey(index.schedule, a) ? 1 : 0;
  result.declaration = a.declaration;
  return result;
}

/// Which actions of the ranks a structural rule is about it lists: all of
/// them while they number at most kMaxRuleActions; past that, only those it
/// reads (the kinds it counts or pairs, its subject), since the others add
/// nothing to it; past that too, none (the violation is then its fact).
class RuleScope {
public:
  RuleScope(const ScheduleIndex &index, std::vector<int32_t> ranks,
            std::function<bool(const Action &)> reads, llvm::StringRef kinds,
            ActionRef subject = {}, size_t limit = kMaxRuleActions)
      : index(index), ranks(std::move(ranks)), reads(std::move(reads)),
        subject(subject), limit(limit) {
    for (int32_t r : this->ranks)
      total += index.schedule.ranks[r].actions.size();
    whole = total <= limit;
    if (whole)
      return;
    for (int32_t r : this->ranks)
      for (size_t i = 0; i < index.schedule.ranks[r].actions.size(); ++i)
        listed += keeps(r, i);
    note = llvm::formatv(" (over the {0} actions of {1}: the ranks it is "
                         "about hold {2} actions, more than the {3} a rule "
                         "lists whole, and the other kinds add nothing to "
                         "it)",
                         listed, kinds, total, limit)
               .str();
  }

  /// Whether the rule can be stated over the actions it lists.
  bool fits() const { return whole || listed <= limit; }
  /// " (over the N actions of ...)" when not every action is listed.
  const std::string &comment() const { return note; }

  /// The listed actions of rank `r`, in issue order.
  std::vector<RuleAction> program(int32_t r) const {
    std::vector<RuleAction> result;
    const std::vector<Action> &actions = index.schedule.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i)
      if (keeps(r, i))
        result.push_back(ruleAction(index, actions[i]));
    return result;
  }
  /// The listed actions of every rank in scope as (kind, stage,
  /// microbatch, direction).
  std::vector<std::array<int64_t, 4>> attributes() const {
    std::vector<std::array<int64_t, 4>> result;
    for (int32_t r : ranks) {
      const std::vector<Action> &actions = index.schedule.ranks[r].actions;
      for (size_t i = 0; i < actions.size(); ++i)
        if (keeps(r, i))
          result.push_back({static_cast<int64_t>(actions[i].kind),
                            actions[i].stage, actions[i].microbatch,
                            transferDirection(actions[i])});
    }
    return result;
  }
  /// The position of the subject among the listed actions of its rank.
  size_t subjectIndex() const {
    size_t position = 0;
    for (int32_t i = 0; i < subject.index; ++i)
      position += keeps(subject.rank, i);
    return position;
  }

private:
  bool keeps(int32_t r, size_t i) const {
    if (whole ||
        (r == subject.rank && static_cast<int32_t>(i) == subject.index))
      return true;
    return reads(index.schedule.ranks[r].actions[i]);
  }

  const ScheduleIndex &index;
  std::vector<int32_t> ranks;
  std::function<bool(const Action &)> reads;
  ActionRef subject;
  size_t limit;
  size_t total = 0, listed = 0;
  bool whole = true;
  std::string note;
};

static bool isTransfer(const Action &a) {
  return a.kind == ActionKind::Send || a.kind == ActionKind::Recv;
}

/// Every rank index of the schedule.
static std::vector<int32_t> allRanks(const Schedule &schedule) {
  std::vector<int32_t> ranks(schedule.ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r)
    ranks[r] = static_cast<int32_t>(r);
  return ranks;
}

/// The rank indices of the member set of `group` that holds rank `r`
/// (just `r` when none does).
static std::vector<int32_t> memberSetOf(const Schedule &schedule, int32_t group,
                                        int32_t r) {
  if (group >= 0 && static_cast<size_t>(group) < schedule.groups.size())
    for (const std::vector<int32_t> &members : schedule.groups[group].members)
      if (llvm::is_contained(members, r))
        return members;
  return {r};
}

/// The pairing or placement rule `v` breaks, stated over the programs of
/// the ranks it is about; false when they hold more than kMaxRuleActions
/// actions (the violation is then stated as its fact).
static bool addRankRule(const ScheduleIndex &index, const Violation &v,
                        Z3Query &query) {
  const Schedule &schedule = index.schedule;
  const StructuralRule &rule = v.rule;
  auto rankId = [&](int32_t r) { return schedule.ranks[r].id; };
  if (rule.form == StructuralRule::Form::Message ||
      rule.form == StructuralRule::Form::Collective) {
    const bool message = rule.form == StructuralRule::Form::Message;
    const int32_t group = rule.group;
    const RuleScope scope(
        index, {rule.rank, rule.otherRank},
        [message, group](const Action &a) {
          return message ? isTransfer(a) : a.group == group;
        },
        message ? "kinds 4 and 5 (sends and receives)"
                : "the group (its collectives)");
    if (!scope.fits())
      return false;
    PairingRule pairing;
    pairing.left = scope.program(rule.rank);
    pairing.right = scope.program(rule.otherRank);
    pairing.leftRank = rule.rank;
    pairing.rightRank = rule.otherRank;
    pairing.group = rule.group;
    pairing.stagesPerReplica = schedule.stagesPerReplica();
    if (rule.form == StructuralRule::Form::Message) {
      pairing.form = PairingRule::Form::Message;
      pairing.description = llvm::formatv(
          "the sends of rank {0} to rank {1} (kind 4, peer {3}) and the "
          "receives of rank {1} from rank {0} (kind 5, peer {2}) pair up in "
          "issue order: they are as many, and the k-th of each agree on "
          "direction (dir: 0 activation, 1 gradient), stage (the receive's "
          "is the send's + 1 forward, - 1 backward), microbatch and bytes "
          "(when both are known, >= 0){4}{5}",
          rankId(rule.rank), rankId(rule.otherRank), rule.rank, rule.otherRank,
          index.shapes ? ", and payload where either is a shape exchange "
                         "(payload: 0 data, 1 shape)"
                       : "",
          scope.comment());
    } else {
      pairing.form = PairingRule::Form::Collective;
      pairing.description = llvm::formatv(
          "the collectives of rank {0} and rank {1} on group @{2} (group {3}) "
          "are as many, and the k-th of each agree on kind, model stage "
          "(stage mod {4}, where either's key is 1: a gradient reduction, a "
          "bias update or an undeclared collective) and bytes (equal; -1, "
          "a size not stated, equals only another -1){5}",
          rankId(rule.rank), rankId(rule.otherRank),
          schedule.groups[rule.group].name, rule.group,
          pairing.stagesPerReplica, scope.comment());
    }
    query.pairings.push_back(std::move(pairing));
    return true;
  }
  PlacementRule placement;
  const llvm::StringRef computes = "kinds 0 to 3 (computes)";
  if (rule.form == StructuralRule::Form::OneHolder) {
    const RuleScope scope(
        index, allRanks(schedule),
        [](const Action &a) { return isCompute(a.kind); }, computes);
    if (!scope.fits())
      return false;
    for (int32_t r : allRanks(schedule))
      placement.programs.push_back(scope.program(r));
    placement.form = PlacementRule::Form::OneHolder;
    placement.stage = rule.stage;
    placement.description = llvm::formatv(
        "stage {0} lives on one rank: the ranks among whose actions a compute "
        "(kinds 0 to 3: F, B, I, W) of stage {0} appears number 1{1}",
        rule.stage, scope.comment());
  } else {
    if (v.at.rank < 0 || v.at.index < 0)
      return false;
    const std::vector<int32_t> ranks =
        memberSetOf(schedule, rule.group, v.at.rank);
    const RuleScope scope(
        index, ranks, [](const Action &a) { return isCompute(a.kind); },
        computes, v.at);
    if (!scope.fits())
      return false;
    for (int32_t r : ranks)
      placement.programs.push_back(scope.program(r));
    const Action &a = index.action(v.at);
    placement.form = PlacementRule::Form::Holds;
    placement.subjectProgram = llvm::find(ranks, v.at.rank) - ranks.begin();
    placement.subjectAction = scope.subjectIndex();
    placement.description =
        rule.group < 0
            ? llvm::formatv("rank {0} issues {1} (its action {2}), so it "
                            "holds that action's stage: among its actions, "
                            "the computes (kinds 0 to 3: F, B, I, W) of that "
                            "stage number at least 1{3}",
                            rankId(v.at.rank), describeAction(schedule, a),
                            placement.subjectAction, scope.comment())
                  .str()
            : llvm::formatv("rank {0} issues {1} (its action {2}) on @{3}, "
                            "so a rank of its member set holds that "
                            "action's stage: among their actions, the "
                            "computes (kinds 0 to 3: F, B, I, W) of that "
                            "stage number at least 1{4}",
                            rankId(v.at.rank), describeAction(schedule, a),
                            placement.subjectAction,
                            schedule.groups[rule.group].name, scope.comment())
                  .str();
  }
  query.placements.push_back(std::move(placement));
  return true;
}

/// The selection rule `rule` states, over the program of its rank.
static std::optional<SelectionRule> selectionRule(const ScheduleIndex &index,
                                                  const StructuralRule &rule) {
  const Schedule &schedule = index.schedule;
  std::string kinds;
  for (const ActionPattern &pattern : rule.patterns) {
    const std::string kind = std::to_string(static_cast<int>(pattern.kind));
    if (llvm::StringRef(kinds).contains(" " + kind + ","))
      continue;
    kinds += " " + kind + ",";
  }
  const std::vector<ActionPattern> patterns = rule.patterns;
  const RuleScope scope(
      index, {rule.rank},
      [patterns](const Action &a) {
        return llvm::any_of(
            patterns, [&](const ActionPattern &p) { return p.kind == a.kind; });
      },
      "kinds" + llvm::StringRef(kinds).drop_back().str());
  if (!scope.fits())
    return std::nullopt;
  SelectionRule selection;
  selection.program = scope.program(rule.rank);
  selection.patterns = rule.patterns;
  selection.required = rule.required;
  selection.orCounts = rule.orCounts;
  std::string alternatives;
  for (int64_t count : rule.orCounts)
    alternatives +=
        (alternatives.empty() ? " (or " : " or ") + std::to_string(count);
  if (!alternatives.empty())
    alternatives += ")";
  selection.bound = rule.atLeast  ? SelectionRule::Bound::AtLeast
                    : rule.atMost ? SelectionRule::Bound::AtMost
                                  : SelectionRule::Bound::Exactly;
  selection.premiseName = rule.premiseName;
  selection.premiseValue = rule.premiseValue;
  selection.description =
      llvm::formatv("among the actions of rank {0}, {1} number {2}{3}{4}{5}{6}",
                    schedule.ranks[rule.rank].id, rule.selects,
                    rule.atLeast  ? "at least "
                    : rule.atMost ? "at most "
                                  : "",
                    rule.required, alternatives,
                    rule.premiseName.empty()
                        ? std::string()
                        : llvm::formatv(", when {0} (here {1}) is above 1",
                                        rule.premiseName, rule.premiseValue)
                              .str(),
                    scope.comment());
  return selection;
}

/// The reading rule `rule` states, over the program of its rank: the
/// collectives its declarations could explain and the computes of its
/// stage.
static std::optional<ReadingRule> readingRule(const ScheduleIndex &index,
                                              const StructuralRule &rule) {
  const Schedule &schedule = index.schedule;
  const std::vector<DeclarationPattern> declarations = rule.readings;
  const int32_t stage = rule.stage;
  const RuleScope scope(
      index, {rule.rank},
      [declarations, stage](const Action &a) {
        return a.stage == stage &&
               (isCompute(a.kind) ||
                llvm::any_of(declarations, [&](const DeclarationPattern &d) {
                  return d.pattern.kind == a.kind;
                }));
      },
      "the stage's computes (kinds 0 to 3) and collectives of the "
      "declarations' kinds",
      {}, kMaxReadingActions);
  if (!scope.fits())
    return std::nullopt;
  ReadingRule reading;
  reading.program = scope.program(rule.rank);
  reading.declarations = rule.readings;
  reading.stage = rule.stage;
  reading.orNone = rule.orNone;
  std::string instances;
  for (size_t c = 0; c < declarations.size(); ++c)
    instances += llvm::formatv("{0}{1} for reads {2}",
                               c == 0 ? "" : ", ", declarations[c].instances, c)
                     .str();
  reading.description = llvm::formatv(
      "among the actions of rank {0}, {1} can each be read as one of them "
      "(the constants reads, the declaration's position in this list; an "
      "action naming its declaration is read as that one only) so that each "
      "has its instances ({2}{5}), each on time: the k-th instance of a "
      "before_forward (before_backward) declaration before the k-th forward, "
      "kind 0 (backward start, kinds 1 and 2), of stage {3}, of an "
      "after_forward one after the k-th forward, of an after_backward one "
      "after the stage's last gradient (kinds 1 and 3), of a step one "
      "anywhere (the constants inst, fw, bs and grad count them along the "
      "actions){4}",
      schedule.ranks[rule.rank].id, rule.selects, instances, rule.stage,
      scope.comment(),
      rule.orNone ? ", or none: a pipeline fragment issues a declaration in "
                    "full or not at all"
                  : "");
  return reading;
}

/// The Z3 query of structural violations: the rule each one breaks, stated
/// over the schedule's actions where it has one, else its fact. A rule
/// several violations break is stated once.
static Z3Query structuralQuery(const ScheduleIndex &index,
                               const std::vector<Violation> &violations,
                               const StreamOrder *streams = nullptr) {
  const Schedule &schedule = index.schedule;
  Z3Query query;
  std::set<std::tuple<int, int32_t, int32_t, int32_t>> stated;
  // The reading rules stated, by their words (the declarations of a class
  // that break it each report it).
  std::set<std::string> readings;
  for (const Violation &v : violations) {
    const StructuralRule &rule = v.rule;
    if (rule.form == StructuralRule::Form::Elided)
      continue;
    std::string whyNot;
    if (rule.form == StructuralRule::Form::Streams && streams &&
        rule.rank >= 0) {
      const auto key =
          std::make_tuple(static_cast<int>(rule.form), rule.rank, -1, -1);
      if (stated.count(key))
        continue;
      if (std::optional<StreamRule> order = streams->rule(rule.rank, whyNot)) {
        query.streams.push_back(std::move(*order));
        stated.insert(key);
        continue;
      }
    }
    if (rule.form == StructuralRule::Form::Range && rule.leftOut) {
      RangeRule range;
      range.stage = rule.stage;
      range.microbatch = rule.microbatch;
      range.hasMicrobatch = rule.microbatch >= 0;
      range.stages = schedule.numStages;
      range.microbatches = schedule.numMicrobatches;
      range.description = "an action left out of the schedule: " + v.message;
      query.ranges.push_back(range);
      continue;
    }
    if ((rule.form == StructuralRule::Form::Range ||
         rule.form == StructuralRule::Form::Replica) &&
        v.at.rank >= 0 && v.at.index >= 0) {
      const Action &a = schedule.ranks[v.at.rank].actions[v.at.index];
      RangeRule range;
      range.stage = a.stage;
      range.microbatch = a.microbatch;
      range.hasMicrobatch = isCompute(a.kind) || a.kind == ActionKind::Send ||
                            a.kind == ActionKind::Recv;
      range.stages = schedule.numStages;
      range.microbatches = schedule.numMicrobatches;
      range.description = llvm::formatv(
          "the stage of {0} on rank {1} lies in [0, {2}){3}",
          describeAction(schedule, a), schedule.ranks[v.at.rank].id,
          schedule.numStages,
          range.hasMicrobatch ? llvm::formatv(" and its microbatch in [0, {0})",
                                              schedule.numMicrobatches)
                                    .str()
                              : std::string());
      if (rule.form == StructuralRule::Form::Replica && range.hasMicrobatch) {
        range.stagesPerReplica = schedule.stagesPerReplica();
        range.microbatchesPerReplica = schedule.microbatchesPerReplica();
        range.description += llvm::formatv(
            ", and the microbatch runs through the stage's pipeline replica "
            "({0} replicas): stage div {1} = microbatch div {2}",
            schedule.replicas, range.stagesPerReplica,
            range.microbatchesPerReplica);
      }
      query.ranges.push_back(range);
      continue;
    }
    std::optional<RuleScope> peerScope;
    if (rule.form == StructuralRule::Form::Peer && v.at.rank >= 0 &&
        v.at.index >= 0)
      peerScope.emplace(
          index, allRanks(schedule),
          [](const Action &a) { return isCompute(a.kind); },
          "kinds 0 to 3 (computes), and the transfer", v.at);
    if (peerScope && peerScope->fits()) {
      const Action &a = index.action(v.at);
      TransferRule transfer;
      transfer.subjectProgram = static_cast<size_t>(v.at.rank);
      transfer.subjectAction = peerScope->subjectIndex();
      transfer.stagesPerReplica = schedule.stagesPerReplica();
      for (int32_t r : allRanks(schedule))
        transfer.programs.push_back(peerScope->program(r));
      transfer.description = llvm::formatv(
          "rank {0} issues {1} (its action {2}, kind {3}), so the stage on "
          "its far side (its stage + 1 for a forward send or a backward "
          "receive, - 1 otherwise) is in its pipeline replica (stage div "
          "{4}), the rank its peer names ({5}, by rank index) is not rank "
          "index {6}, and among that rank's actions the computes (kinds 0 to "
          "3: F, B, I, W) of the far stage number at least 1{7}",
          schedule.ranks[v.at.rank].id, describeAction(schedule, a),
          transfer.subjectAction, static_cast<int>(a.kind),
          transfer.stagesPerReplica, a.peer, v.at.rank, peerScope->comment());
      query.transfers.push_back(std::move(transfer));
      continue;
    }
    if (rule.form == StructuralRule::Form::Message ||
        rule.form == StructuralRule::Form::Collective ||
        rule.form == StructuralRule::Form::OneHolder) {
      const auto key =
          std::make_tuple(static_cast<int>(rule.form), rule.rank,
                          rule.otherRank, std::max(rule.group, rule.stage));
      if (stated.count(key) || addRankRule(index, v, query)) {
        stated.insert(key);
        continue;
      }
    }
    if (rule.form == StructuralRule::Form::Placement &&
        addRankRule(index, v, query))
      continue;
    if (rule.form == StructuralRule::Form::Selection && rule.rank >= 0) {
      if (std::optional<SelectionRule> selection = selectionRule(index, rule)) {
        query.selections.push_back(std::move(*selection));
        continue;
      }
    }
    std::optional<RuleScope> backwards;
    if (rule.form == StructuralRule::Form::Backward)
      backwards.emplace(
          index, allRanks(schedule),
          [](const Action &a) {
            return a.kind == ActionKind::Backward ||
                   a.kind == ActionKind::BackwardInput ||
                   a.kind == ActionKind::BackwardWeight;
          },
          "kinds 1 to 3 (B, I, W)");
    if (backwards && backwards->fits()) {
      BackwardRule backward;
      backward.stage = rule.stage;
      backward.microbatch = rule.microbatch;
      backward.description = llvm::formatv(
          "stage {0} mb {1} has one backward: among the actions of every "
          "rank, those of stage {0} and microbatch {1} are one B (kind 1) "
          "and no I (kind 2) or W (kind 3), or one I and one W and no B{2}",
          rule.stage, rule.microbatch, backwards->comment());
      backward.actions = backwards->attributes();
      query.backwards.push_back(std::move(backward));
      continue;
    }
    const bool use = rule.form == StructuralRule::Form::UnshardUse;
    std::optional<RuleScope> sharding;
    if ((use || rule.form == StructuralRule::Form::Alternation) &&
        rule.rank >= 0)
      sharding.emplace(
          index, std::vector<int32_t>{rule.rank},
          [use](const Action &a) {
            return a.kind == ActionKind::Unshard ||
                   a.kind == ActionKind::Reshard || (use && isCompute(a.kind));
          },
          use ? "kinds 0 to 3, 11 and 12 (computes, UNSHARD, RESHARD)"
              : "kinds 11 and 12 (UNSHARD, RESHARD)");
    if (sharding && sharding->fits()) {
      const auto key = std::make_tuple(static_cast<int>(rule.form), rule.rank,
                                       -1, rule.stage);
      if (stated.insert(key).second) {
        ShardingRule order;
        order.form = use ? ShardingRule::Form::Use
                         : ShardingRule::Form::Alternation;
        order.stage = rule.stage;
        order.program = sharding->program(rule.rank);
        order.description =
            use ? llvm::formatv(
                      "along the actions of rank {0}, every RESHARD (kind 12) "
                      "of stage {1} that closes an UNSHARD (kind 11) comes "
                      "after a compute (kinds 0 to 3: F, B, I, W) of the "
                      "stage since that UNSHARD: the constant used is 0 after "
                      "an UNSHARD of the stage, 1 after a compute or a "
                      "RESHARD of it (and before the first action), else the "
                      "previous one, and is 1 before every RESHARD of the "
                      "stage{2}",
                      schedule.ranks[rule.rank].id, rule.stage,
                      sharding->comment())
                : llvm::formatv(
                      "along the actions of rank {0}, after each one the "
                      "UNSHARDs (kind 11) of stage {1} so far less its "
                      "RESHARDs (kind 12) are 0 or 1 (the constants open): "
                      "no UNSHARD while the stage is unsharded, no RESHARD "
                      "while it is sharded{2}",
                      schedule.ranks[rule.rank].id, rule.stage,
                      sharding->comment());
        query.shardings.push_back(std::move(order));
      }
      continue;
    }
    if (rule.form == StructuralRule::Form::Reading && rule.rank >= 0) {
      if (std::optional<ReadingRule> reading = readingRule(index, rule)) {
        if (readings.insert(reading->description).second)
          query.readings.push_back(std::move(*reading));
        continue;
      }
    }
    if (rule.form == StructuralRule::Form::Divides) {
      DividesRule divides;
      divides.stages = schedule.numStages;
      divides.microbatches = schedule.numMicrobatches;
      divides.replicas = schedule.replicas;
      divides.description =
          "the pipeline replicas (at least 1) divide the stages and the "
          "microbatches: each replica runs a chain of stages/replicas stages "
          "on a block of microbatches/replicas microbatches";
      query.divides.push_back(divides);
      continue;
    }
    if (rule.form == StructuralRule::Form::Count) {
      const ActionKind counted = rule.kind;
      const RuleScope countScope(
          index,
          rule.rank < 0 ? allRanks(schedule) : std::vector<int32_t>{rule.rank},
          [counted](const Action &a) { return a.kind == counted; },
          "kind " + std::to_string(static_cast<int>(counted)));
      if (countScope.fits()) {
        CountRule count;
        count.kind = static_cast<int64_t>(rule.kind);
        count.stage = rule.stage;
        count.microbatch = rule.microbatch;
        count.required = rule.required;
        count.direction = rule.direction;
        count.atLeast = rule.atLeast;
        count.description = llvm::formatv(
            "among the actions of {0}, those of kind {1} ({2}){3}{4}{5} "
            "number {6}{7}{8}",
            rule.rank < 0
                ? std::string("every rank")
                : "rank " + std::to_string(schedule.ranks[rule.rank].id),
            static_cast<int>(rule.kind), kindName(rule.kind),
            rule.direction >= 0
                ? llvm::formatv(" in direction {0} ({1}{2})", rule.direction,
                                rule.direction & 1 ? "gradient" : "activation",
                                rule.direction & 2 ? " shape" : "")
                      .str()
                : std::string(),
            rule.stage >= 0 ? " of stage " + std::to_string(rule.stage)
                            : std::string(),
            rule.microbatch >= 0
                ? " and microbatch " + std::to_string(rule.microbatch)
                : std::string(),
            rule.atLeast ? "at least " : "", rule.required,
            countScope.comment());
        count.actions = countScope.attributes();
        query.counts.push_back(std::move(count));
        continue;
      }
    }
    StructuralFact fact;
    fact.observed = v.observed;
    fact.required = v.required;
    fact.description = llvm::formatv(
        "{0} (stated as what the schedule has, {1}, against what the rule "
        "requires, {2}: {3})",
        v.message, v.observed, v.required,
        !whyNot.empty() ? whyNot
        : rule.form != StructuralRule::Form::None
            ? llvm::formatv("the actions the rule reads number more than the "
                            "{0} a rule lists",
                            rule.form == StructuralRule::Form::Reading
                                ? kMaxReadingActions
                                : kMaxRuleActions)
                  .str()
        : !rule.why.empty()
            ? rule.why
            : std::string("this rule is not stated over the schedule's "
                          "actions"));
    query.facts.push_back(std::move(fact));
  }
  return query;
}

/// Writes the SMT-LIB text of `query` into `result` when asked, after a
/// comment per structural rule it states.
static void emitSmtlib(const Z3Query &query, const VerifyOptions &options,
                       VerifyResult &result) {
  if (!options.emitSmtlib)
    return;
  std::string error;
  auto describe = [&](llvm::StringRef kind, const auto &rules) {
    for (const auto &rule : rules)
      result.smtlib += "; " + kind.str() + ": " + rule.description + "\n";
  };
  describe("rule", query.counts);
  describe("rule", query.ranges);
  describe("rule", query.pairings);
  describe("rule", query.placements);
  describe("rule", query.transfers);
  describe("rule", query.selections);
  describe("rule", query.backwards);
  describe("rule", query.divides);
  describe("rule", query.shardings);
  describe("rule", query.readings);
  describe("rule", query.streams);
  describe("fact", query.facts);
  for (const std::string &note : query.unstated)
    result.smtlib += "; not stated: " + note + "\n";
  result.smtlib += encodeSmtlib(query, error);
  if (!error.empty())
    result.smtlib =
        "; schedc: Z3 could not print the encoding: " + error + "\n";
}

/// Z3's verdict on a query whose answer the graph path predicts. Returns
/// false, with the verdict set to unknown, when Z3 does not agree.
static bool confirm(const Z3Query &query, Z3Answer expected,
                    const VerifyOptions &options, VerifyResult &result) {
  // The queries of one verification share its resource budget.
  const uint64_t limit = options.resourceLimit;
  auto outOfResources = [&] {
    result.verdict = Verdict::Unknown;
    result.unknownReason = "Z3 could not decide: resource limit of " +
                           std::to_string(limit) + " units reached";
    return false;
  };
  if (limit != 0 && result.z3Resources >= limit)
    return outOfResources();
  Z3Outcome outcome = solveWithZ3(query, options.timeoutSeconds,
                                  limit == 0 ? 0 : limit - result.z3Resources);
  result.z3Seconds += outcome.seconds;
  result.z3Resources += outcome.resources;
  result.z3Variables += outcome.variables;
  result.z3Constraints += outcome.constraints;
  if (outcome.answer == expected)
    return true;
  result.verdict = Verdict::Unknown;
  if (outcome.answer == Z3Answer::Unknown && limit != 0 &&
      result.z3Resources >= limit)
    return outOfResources();
  if (outcome.answer == Z3Answer::Unknown) {
    result.unknownReason = "Z3 could not decide: " + outcome.reason;
    return false;
  }
  // Z3 and the graph path disagree: Z3's answer stands, but without a
  // located violation it can only be reported as unknown.
  result.unknownReason =
      expected == Z3Answer::Sat
          ? "Z3 rejects the candidate execution the graph path found; rerun "
            "with --proof=search"
          : "Z3 does not confirm a violation the graph path reported";
  return false;
}

/// Where matching left a reading of shared declarations undecided (past
/// the exact search's limits), the violations it causes prove nothing: the
/// verdict is unknown, unless a violation no reading changes (memory, which
/// no collective's reading moves) stands. Returns true when it set the
/// verdict.
static bool leaveUndecided(const StepRules &rules,
                           const VerifyOptions &options,
                           VerifyResult &result) {
  const std::vector<std::string> &undecided = rules.undecidedReadings();
  if (undecided.empty() ||
      llvm::any_of(result.violations, [](const Violation &v) {
        return v.kind == ViolationKind::Memory;
      }))
    return false;
  result.verdict = Verdict::Unknown;
  result.unknownReason = llvm::join(undecided, "; ");
  // What matching reported stays visible, as warnings: each may be wrong.
  for (Violation &v : result.violations) {
    v.message = "unproved (past the exact reading's limits): " + v.message;
    result.unchecked.push_back(std::move(v));
  }
  result.violations.clear();
  // No encoding decides an unknown verdict: the file says so instead.
  if (options.emitSmtlib)
    result.smtlib = "; verdict unknown: " + result.unknownReason + "\n";
  return true;
}

/// A violation of a rank's streams and events whose stream rule is past
/// its limits (StreamOrder::rule) has no encoding Z3 could refute: it stays
/// visible as a warning, and if no other violation is left the verdict is
/// unknown, never violated on the graph path's word alone. Returns true
/// when it set the verdict.
static bool leaveUnproved(const StreamOrder &streams,
                          const VerifyOptions &options, VerifyResult &result) {
  if (!options.useZ3)
    return false;
  std::map<int32_t, std::string> pastLimits;
  std::vector<Violation> proved;
  for (Violation &v : result.violations) {
    if (v.rule.form != StructuralRule::Form::Streams || v.rule.rank < 0) {
      proved.push_back(std::move(v));
      continue;
    }
    auto [it, first] = pastLimits.try_emplace(v.rule.rank);
    if (first && streams.rule(v.rule.rank, it->second))
      it->second.clear();
    if (it->second.empty()) {
      proved.push_back(std::move(v));
      continue;
    }
    v.message = "unproved (past the stream rule's limits): " + v.message;
    result.unchecked.push_back(std::move(v));
  }
  result.violations = std::move(proved);
  if (!result.violations.empty())
    return false;
  std::vector<std::string> reasons;
  for (const auto &entry : pastLimits)
    if (!entry.second.empty())
      reasons.push_back(entry.second);
  result.verdict = Verdict::Unknown;
  result.unknownReason =
      llvm::join(reasons, "; ") +
      ": the violation of its streams' order is not proved";
  if (options.emitSmtlib)
    result.smtlib = "; verdict unknown: " + result.unknownReason + "\n";
  return true;
}

VerifyResult sched::verifySchedule(const Schedule &schedule,
                                   const VerifyOptions &options) {
  VerifyResult result;
  const auto begin = std::chrono::steady_clock::now();
  ViolationSink sink;
  // Actions the reader left out are out of range: violations whatever the
  // rest holds, stated as range rules.
  for (auto [stage, microbatch] : options.outOfRangeActions)
    if (Violation *v = sink.add(
            ViolationKind::Missing, {},
            microbatch >= schedule.numMicrobatches
                ? llvm::formatv("an action of microbatch {0} is out of range: "
                                "the schedule has {1} microbatches",
                                microbatch, schedule.numMicrobatches)
                      .str()
                : llvm::formatv("an action of stage {0} is out of range: the "
                                "schedule has {1} stages",
                                stage, schedule.numStages)
                      .str()))
      v->rule = StructuralRule::leftOutRange(stage, microbatch);
  ScheduleIndex index(schedule);
  std::optional<StepRules> rules;
  if (index.check(sink)) {
    rules.emplace(index, options.wholeStep);
    result.unchecked = rules->unchecked();
  }
  // Structural violations: Z3 refutes the facts they state.
  auto structural = [&](const StreamOrder *streams = nullptr) {
    result.violations = sink.take();
    result.graphSeconds = secondsSince(begin);
    if (rules && leaveUndecided(*rules, options, result))
      return result;
    if (streams && leaveUnproved(*streams, options, result))
      return result;
    Z3Query facts = structuralQuery(index, result.violations, streams);
    emitSmtlib(facts, options, result);
    result.verdict = Verdict::Violated;
    if (options.useZ3)
      confirm(facts, Z3Answer::Unsat, options, result);
    return result;
  };
  if (!rules || !rules->check(sink))
    return structural();
  // The full wait graph lives only until it is shrunk: Z3 works on the
  // shrunk graph, and the two are never held together with Z3's tables.
  std::optional<WaitGraph> graph(std::in_place, index, options);
  graph->build();
  // Streams and events must order every dependency of a rank and its
  // operations on each communicator (a schedule on one stream per rank
  // passes at once).
  StreamOrder streams(index);
  if (!streams.check(*graph, sink))
    return structural(&streams);
  std::vector<Z3Query> refutations;
  if (!graph->sort()) {
    const std::vector<size_t> cycle = graph->findCycle();
    CycleReporter(index, *graph, options).report(cycle, sink);
    refutations.push_back(cycleQuery(*graph, cycle));
  }
  MemoryCheck memory(index, options);
  memory.run(sink);
  result.peakMemory = memory.peaks();
  result.memoryInBytes = memory.inBytes();
  result.graphSeconds = secondsSince(begin);
  const bool clean = sink.empty();
  result.violations = sink.take();
  if (!clean && leaveUndecided(*rules, options, result))
    return result;

  // The full encoding: written out when asked, and checked against the
  // candidate (or solved) when the graph path found nothing.
  ShrunkGraph shrunk = graph->shrink();
  graph.reset();
  Z3Query full;
  full.numNodes = shrunk.numNodes;
  full.edges = std::move(shrunk.edges);
  full.chains = memory.getChains();
  full.limit = memory.limit();
  // The order of each rank's streams and events, which the check above
  // found to hold: stated so that Z3's answer covers it. Z3 solves them in
  // the SMT-LIB file and unaided search, and evaluates them in the witness
  // check, each to its limits; the rules past them are listed in `unstated`.
  auto stateStreams = [&](bool solved) {
    full.streams.clear();
    full.unstated.clear();
    for (size_t r = 0; r < schedule.ranks.size(); ++r) {
      std::string whyNot;
      if (std::optional<StreamRule> order =
              solved ? streams.rule(static_cast<int32_t>(r), whyNot)
                     : streams.rule(static_cast<int32_t>(r), whyNot,
                                    StreamOrder::kMaxGroundStreamCells,
                                    StreamOrder::kMaxGroundStreamCells))
        full.streams.push_back(std::move(*order));
      else if (!whyNot.empty())
        full.unstated.push_back(whyNot);
    }
  };
  const bool search = options.proofMode == ProofMode::Search;
  if (options.emitSmtlib) {
    stateStreams(/*solved=*/true);
    emitSmtlib(full, options, result);
  }
  result.verdict = clean ? Verdict::Verified : Verdict::Violated;
  if (!options.useZ3)
    return result;

  if (clean) {
    if (!options.emitSmtlib || !search)
      stateStreams(/*solved=*/search);
    // A stream rule Z3 does not check leaves the streams' order unproved:
    // the graph path's clocks found it, but no verdict rests on them alone.
    if (!full.unstated.empty()) {
      result.verdict = Verdict::Unknown;
      result.unknownReason =
          llvm::join(full.unstated, "; ") +
          ": the order of its streams and events is not proved";
      if (options.emitSmtlib)
        result.smtlib = "; verdict unknown: " + result.unknownReason + "\n";
      return result;
    }
    if (options.proofMode == ProofMode::Witness)
      full.witness = std::move(shrunk.witness);
    confirm(full, Z3Answer::Sat, options, result);
    return result;
  }
  // Each violation found by search is refuted on its own: the cycle, and
  // the memory chain of each rank over the limit.
  for (const Violation &v : result.violations)
    if (v.kind == ViolationKind::Memory && v.at.rank >= 0)
      refutations.push_back(memoryQuery(memory, v.at.rank, v.at.index));
  for (const Z3Query &query : refutations)
    if (!confirm(query, Z3Answer::Unsat, options, result))
      return result;
  return result;
}
