//===- ScheduleIndex.cpp - where each action of a schedule sits -----------===//

#include "lib/Verify/ScheduleIndex.h"

#include "llvm/Support/FormatVariadic.h"

using namespace sched;

//===----------------------------------------------------------------------===//
// ViolationSink
//===----------------------------------------------------------------------===//

Violation *ViolationSink::add(ViolationKind kind, ActionRef at,
                              const llvm::Twine &message) {
  if (violations.size() >= kMaxViolations) {
    ++suppressed;
    return nullptr;
  }
  violations.push_back({kind, at, message.str(), {}});
  return &violations.back();
}

Violation *ViolationSink::add(ViolationKind kind, ActionRef at,
                              const llvm::Twine &message, int64_t observed,
                              int64_t required) {
  Violation *v = add(kind, at, message);
  if (v) {
    v->observed = observed;
    v->required = required;
  }
  return v;
}

std::vector<Violation> ViolationSink::take() {
  if (suppressed) {
    violations.push_back(
        {violations.back().kind,
         {},
         llvm::formatv("{0} more violations not shown", suppressed).str(),
         {}});
    violations.back().rule.form = StructuralRule::Form::Elided;
  }
  suppressed = 0;
  return std::move(violations);
}

//===----------------------------------------------------------------------===//
// ScheduleIndex
//===----------------------------------------------------------------------===//

static constexpr ActionRef kNone{-1, -1};

static bool isSet(ActionRef ref) { return ref.rank >= 0; }

/// Index of the table for a compute kind or a transfer direction; shape
/// exchanges have tables of their own, after the data transfers'.
static int tableIndex(ActionKind kind, bool gradient, bool shape) {
  switch (kind) {
  case ActionKind::Forward:
    return 0;
  case ActionKind::Backward:
    return 1;
  case ActionKind::BackwardInput:
    return 2;
  case ActionKind::BackwardWeight:
    return 3;
  case ActionKind::Send:
    return (gradient ? 5 : 4) + (shape ? 4 : 0);
  case ActionKind::Recv:
    return (gradient ? 7 : 6) + (shape ? 4 : 0);
  default:
    return -1;
  }
}

ScheduleIndex::ScheduleIndex(const Schedule &schedule)
    : schedule(schedule), numStages(schedule.numStages),
      numMicrobatches(schedule.numMicrobatches) {}

std::vector<ActionRef> &ScheduleIndex::table(ActionKind kind, bool gradient,
                                             bool shape) {
  return tables[tableIndex(kind, gradient, shape)];
}

const std::vector<ActionRef> &
ScheduleIndex::table(ActionKind kind, bool gradient, bool shape) const {
  return tables[tableIndex(kind, gradient, shape)];
}

ActionRef ScheduleIndex::compute(ActionKind kind, int32_t stage,
                                 int32_t mb) const {
  return table(kind, false, false)[slot(stage, mb)];
}

ActionRef ScheduleIndex::transfer(ActionKind kind, bool gradient, int32_t stage,
                                  int32_t mb, bool shape) const {
  if (stage < 0 || stage >= numStages)
    return kNone;
  return table(kind, gradient, shape)[slot(stage, mb)];
}

ActionRef ScheduleIndex::inputGradient(int32_t stage, int32_t mb) const {
  ActionRef full = compute(ActionKind::Backward, stage, mb);
  return isSet(full) ? full : compute(ActionKind::BackwardInput, stage, mb);
}

bool ScheduleIndex::check(ViolationSink &sink) {
  if (!indexActions(sink))
    return false;
  checkCompleteness(sink);
  if (lowered)
    checkTransfers(sink);
  checkCollectives(sink);
  return sink.empty();
}

bool ScheduleIndex::indexActions(ViolationSink &sink) {
  const size_t numActions = schedule.numActions();
  const uint64_t slots =
      static_cast<uint64_t>(numStages) * static_cast<uint64_t>(numMicrobatches);
  // A complete schedule holds at least one F and one B per slot, so a slot
  // count far above the action count is incomplete; say so without
  // allocating tables for it.
  if (numStages < 1 || numMicrobatches < 1 || slots > 2 * numActions + 4096) {
    sink.add(ViolationKind::Missing, {},
             llvm::formatv("the schedule names {0} stages x {1} microbatches "
                           "but holds only {2} actions: most forwards and "
                           "backwards are missing",
                           numStages, numMicrobatches, numActions));
    return false;
  }
  if (std::string why = schedule.replicaError(); !why.empty()) {
    if (Violation *v = sink.add(ViolationKind::Placement, {}, why))
      v->rule = StructuralRule::divides();
    return false;
  }
  for (std::vector<ActionRef> &t : tables)
    t.assign(slots, kNone);
  stageRank.assign(numStages, -1);
  std::vector<ActionRef> stageFirst(numStages, kNone);
  std::vector<bool> placementReported(numStages, false);
  bool placementOk = true;

  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &a = actions[i];
      const int t = tableIndex(a.kind, a.gradient, a.shape);
      if (t < 0)
        continue;
      const ActionRef here{static_cast<int32_t>(r), static_cast<int32_t>(i)};
      if (a.stage < 0 || a.stage >= numStages || a.microbatch < 0 ||
          a.microbatch >= numMicrobatches) {
        if (Violation *v = sink.add(
                ViolationKind::Missing, here,
                llvm::formatv("{0} is out of range: the schedule has {1} "
                              "stages and {2} microbatches",
                              describeAction(schedule, a), numStages,
                              numMicrobatches)))
          v->rule = StructuralRule::range();
        placementOk = false;
        continue;
      }
      if (!schedule.visits(a.stage, a.microbatch)) {
        const int32_t first = schedule.firstMicrobatchOf(a.stage);
        if (Violation *v = sink.add(
                ViolationKind::Placement, here,
                llvm::formatv("{0}: mb {1} belongs to another pipeline "
                              "replica; stage {2} runs mbs {3}..{4}",
                              describeAction(schedule, a), a.microbatch,
                              a.stage, first,
                              first + schedule.microbatchesPerReplica() - 1)))
          v->rule = StructuralRule::replica();
        placementOk = false;
        continue;
      }
      if (a.kind == ActionKind::Send || a.kind == ActionKind::Recv) {
        lowered = true;
        shapes |= a.shape;
      }
      ActionRef &entry = tables[t][slot(a.stage, a.microbatch)];
      if (isSet(entry)) {
        if (Violation *v = sink.add(
                ViolationKind::Duplicate, here,
                llvm::formatv("duplicate {0}: it already runs on rank {1}",
                              describeAction(schedule, a),
                              schedule.ranks[entry.rank].id),
                /*observed=*/2, /*required=*/1)) {
          v->notes.push_back({entry, "the first copy is here"});
          if (isCompute(a.kind))
            v->rule =
                StructuralRule::count(-1, a.kind, a.stage, a.microbatch, 1);
          else
            v->rule = StructuralRule::transferCount(
                -1, a.kind, transferDirection(a), a.stage, a.microbatch, 1,
                /*atLeast=*/false);
        }
        continue;
      }
      entry = here;
      if (!isCompute(a.kind))
        continue;
      if (stageRank[a.stage] < 0) {
        stageRank[a.stage] = static_cast<int32_t>(r);
        stageFirst[a.stage] = here;
        continue;
      }
      if (stageRank[a.stage] == static_cast<int32_t>(r) ||
          placementReported[a.stage])
        continue;
      placementReported[a.stage] = true;
      placementOk = false;
      if (Violation *v = sink.add(
              ViolationKind::Placement, here,
              llvm::formatv("stage {0} runs on two ranks: {1} is on rank {2}, "
                            "but the stage already runs on rank {3}",
                            a.stage, describeAction(schedule, a),
                            schedule.ranks[r].id,
                            schedule.ranks[stageRank[a.stage]].id))) {
        v->notes.push_back({stageFirst[a.stage], "the stage first runs here"});
        v->rule = StructuralRule::oneHolder(a.stage);
      }
    }
  }
  return placementOk;
}

void ScheduleIndex::checkCompleteness(ViolationSink &sink) {
  const int32_t perReplica = schedule.microbatchesPerReplica();
  for (int32_t s = 0; s < numStages; ++s) {
    const ActionRef where{stageRank[s], -1};
    const int32_t first = schedule.firstMicrobatchOf(s);
    for (int32_t m = first; m < first + perReplica; ++m) {
      if (!isSet(compute(ActionKind::Forward, s, m)))
        if (Violation *v = sink.add(
                ViolationKind::Missing, where,
                llvm::formatv("missing forward F(stage {0}, mb {1})", s, m),
                /*observed=*/0, /*required=*/1))
          v->rule = StructuralRule::count(-1, ActionKind::Forward, s, m, 1);
      const ActionRef full = compute(ActionKind::Backward, s, m);
      const ActionRef input = compute(ActionKind::BackwardInput, s, m);
      const ActionRef weight = compute(ActionKind::BackwardWeight, s, m);
      if (isSet(full) && (isSet(input) || isSet(weight))) {
        if (Violation *v = sink.add(
                ViolationKind::Duplicate, isSet(input) ? input : weight,
                llvm::formatv("stage {0} mb {1} has both a full backward B "
                              "and a split backward (I/W)",
                              s, m))) {
          v->notes.push_back({full, "the full backward is here"});
          v->rule = StructuralRule::backward(s, m);
        }
        continue;
      }
      if (isSet(full))
        continue;
      Violation *v = nullptr;
      if (!isSet(input) && !isSet(weight))
        v = sink.add(ViolationKind::Missing, where,
                     llvm::formatv("missing backward of stage {0} mb {1} (a "
                                   "B, or an I and a W)",
                                   s, m),
                     /*observed=*/0, /*required=*/1);
      else if (!isSet(input))
        v = sink.add(ViolationKind::Missing, weight,
                     llvm::formatv("W(stage {0}, mb {1}) has no I: missing "
                                   "backward_input",
                                   s, m));
      else if (!isSet(weight))
        v = sink.add(ViolationKind::Missing, input,
                     llvm::formatv("I(stage {0}, mb {1}) has no W: missing "
                                   "backward_weight",
                                   s, m));
      if (v)
        v->rule = StructuralRule::backward(s, m);
    }
  }
}

int64_t ScheduleIndex::transferBytes(const Action &transfer) const {
  if (transfer.bytes >= 0)
    return transfer.bytes;
  if (transfer.shape)
    return kShapeExchangeBytes;
  // A receive of stage s brings stage s-1's output forward, or the
  // gradient of stage s's output backward; a send mirrors it.
  const bool send = transfer.kind == ActionKind::Send;
  const int32_t lower =
      transfer.gradient == send ? transfer.stage - 1 : transfer.stage;
  if (lower < 0 || static_cast<size_t>(lower) >= schedule.stageCosts.size())
    return -1;
  return schedule.stageCosts[lower].output;
}

void ScheduleIndex::checkTransfers(ViolationSink &sink) {
  const int32_t numRanks = static_cast<int32_t>(schedule.ranks.size());
  auto rankName = [&](int32_t r) {
    return r >= 0 && r < numRanks
               ? "rank " + std::to_string(schedule.ranks[r].id)
               : std::string("no rank");
  };
  bool pairable = true;
  for (int32_t r = 0; r < numRanks; ++r) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &a = actions[i];
      if (a.kind != ActionKind::Send && a.kind != ActionKind::Recv)
        continue;
      const ActionRef here{r, static_cast<int32_t>(i)};
      const bool send = a.kind == ActionKind::Send;
      // Described only when reported: most transfers are fine.
      auto what = [&] { return describeAction(schedule, a); };
      if (stageRank[a.stage] != r) {
        pairable = false;
        if (Violation *v = sink.add(
                ViolationKind::Placement, here,
                llvm::formatv("{0} is issued by rank {1}, but stage {2} "
                              "runs on {3}",
                              what(), schedule.ranks[r].id, a.stage,
                              rankName(stageRank[a.stage]))))
          v->rule = StructuralRule::placement();
        continue;
      }
      // The stage on the far side: a forward send goes to stage + 1, a
      // backward send to stage - 1; a receive mirrors it.
      const bool downstream = a.gradient != send;
      if (downstream ? schedule.isLastStage(a.stage)
                     : schedule.isFirstStage(a.stage)) {
        pairable = false;
        if (Violation *v = sink.add(
                ViolationKind::Transfer, here,
                llvm::formatv("{0} has no peer: stage {1} is the {2} stage "
                              "of its pipeline",
                              what(), a.stage, downstream ? "last" : "first")))
          v->rule = StructuralRule::peer();
        continue;
      }
      const int32_t far = downstream ? a.stage + 1 : a.stage - 1;
      const int32_t farRank = stageRank[far];
      if (farRank < 0 || farRank != a.peer) {
        pairable = false;
        if (Violation *v =
                sink.add(ViolationKind::Transfer, here,
                         llvm::formatv(
                             "{0} names {1} as its peer, but stage {2} "
                             "runs on {3}",
                             what(), rankName(a.peer), far, rankName(farRank))))
          v->rule = StructuralRule::peer();
        continue;
      }
      // Both stages on this rank: the data is already here, and a message
      // to oneself is no transfer a runtime issues.
      if (a.peer == r) {
        pairable = false;
        if (Violation *v = sink.add(
                ViolationKind::Transfer, here,
                llvm::formatv("{0} names its own rank as its peer: stages "
                              "{1} and {2} both run on rank {3}, so the "
                              "data needs no transfer",
                              what(), a.stage, far, schedule.ranks[r].id)))
          v->rule = StructuralRule::peer();
      }
    }
  }
  // Pairing only means something once every transfer names the right
  // peer.
  if (pairable)
    checkMessageOrder(sink);
  if (shapes)
    checkShapeExchanges(sink);
  // Every cross-rank input must arrive by a receive. A stage that runs on
  // no rank is missing all its work, which completeness reports.
  const int32_t perReplica = schedule.microbatchesPerReplica();
  auto crosses = [&](int32_t s, int32_t other) {
    return stageRank[s] >= 0 && stageRank[other] >= 0 &&
           stageRank[s] != stageRank[other];
  };
  for (int32_t s = 0; s < numStages; ++s)
    for (int32_t m = schedule.firstMicrobatchOf(s), end = m + perReplica;
         m < end; ++m) {
      // The rule: the rank that computes stage s receives the input (one
      // receive at least; a second is a duplicate).
      if (!schedule.isFirstStage(s) && crosses(s, s - 1) &&
          !isSet(transfer(ActionKind::Recv, false, s, m)))
        if (Violation *v = sink.add(
                ViolationKind::Transfer, compute(ActionKind::Forward, s, m),
                llvm::formatv("F(stage {0}, mb {1}) needs the activation of "
                              "stage {2} from {3}, but no recv brings it",
                              s, m, s - 1, rankName(stageRank[s - 1]))))
          v->rule = StructuralRule::transferCount(
              stageRank[s], ActionKind::Recv, /*direction=*/0, s, m, 1,
              /*atLeast=*/true);
      if (!schedule.isLastStage(s) && crosses(s, s + 1) &&
          !isSet(transfer(ActionKind::Recv, true, s, m)))
        if (Violation *v = sink.add(
                ViolationKind::Transfer, inputGradient(s, m),
                llvm::formatv("the backward of stage {0} mb {1} needs the "
                              "gradient of stage {2} from {3}, but no recv "
                              "brings it",
                              s, m, s + 1, rankName(stageRank[s + 1]))))
          v->rule = StructuralRule::transferCount(
              stageRank[s], ActionKind::Recv, /*direction=*/1, s, m, 1,
              /*atLeast=*/true);
    }
}

void ScheduleIndex::checkShapeExchanges(ViolationSink &sink) {
  // batch_isend_irecv takes its receive buffers allocated: a data receive
  // cannot be issued in one p2p group with the shape exchange its buffer
  // is sized from, under either semantics.
  // The shape receives' tables, forward and backward.
  for (int t : {10, 11})
    for (ActionRef shapeRecv : tables[t]) {
      if (!isSet(shapeRecv))
        continue;
      const Action &s = action(shapeRecv);
      const ActionRef recv =
          transfer(ActionKind::Recv, s.gradient, s.stage, s.microbatch);
      if (!isSet(recv) || recv.rank != shapeRecv.rank || s.bundle == 0 ||
          action(recv).bundle != s.bundle)
        continue;
      if (Violation *v = sink.add(
              ViolationKind::Dependency, recv,
              llvm::formatv("{0} is issued in one p2p group with {1}, whose "
                            "shape its buffer is allocated from: a batched "
                            "receive is posted with its buffer, before any "
                            "of the group's transfers completes (exchange "
                            "the shape in a group of its own first)",
                            describeAction(schedule, action(recv)),
                            describeAction(schedule, s)))) {
        v->notes.push_back({shapeRecv, "the shape exchange is here"});
        v->rule.why = "which actions a p2p group holds is not stated over "
                      "the rank's actions";
      }
    }
}

/// "1st", "2nd", "3rd", "4th", ... for the 0-based position `k`.
static std::string ordinal(size_t k) {
  const size_t n = k + 1;
  const char *suffix = "th";
  if (n % 100 < 11 || n % 100 > 13) {
    if (n % 10 == 1)
      suffix = "st";
    else if (n % 10 == 2)
      suffix = "nd";
    else if (n % 10 == 3)
      suffix = "rd";
  }
  return std::to_string(n) + suffix;
}

void ScheduleIndex::checkMessageOrder(ViolationSink &sink) {
  // Every transfer on its channel (sender, receiver), in issue order: rank
  // programs are in issue order, and so are the members of a p2p group.
  struct Entry {
    uint64_t channel;
    bool receive;
    ActionRef at;
  };
  std::vector<Entry> entries;
  const uint64_t numRanks = schedule.ranks.size();
  for (size_t r = 0; r < numRanks; ++r) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &a = actions[i];
      if (a.kind != ActionKind::Send && a.kind != ActionKind::Recv)
        continue;
      const bool receive = a.kind == ActionKind::Recv;
      const uint64_t sender = receive ? a.peer : r;
      const uint64_t receiver = receive ? r : a.peer;
      entries.push_back({sender * numRanks + receiver,
                         receive,
                         {static_cast<int32_t>(r), static_cast<int32_t>(i)}});
    }
  }
  std::stable_sort(
      entries.begin(), entries.end(),
      [](const Entry &x, const Entry &y) { return x.channel < y.channel; });
  auto rankId = [&](int32_t r) { return schedule.ranks[r].id; };
  for (size_t begin = 0; begin < entries.size();) {
    size_t end = begin;
    std::vector<ActionRef> sends, receives;
    for (;
         end < entries.size() && entries[end].channel == entries[begin].channel;
         ++end)
      (entries[end].receive ? receives : sends).push_back(entries[end].at);
    begin = end;
    const size_t common = std::min(sends.size(), receives.size());
    for (size_t k = 0; k < common; ++k)
      checkPair(sends[k], receives[k], k, sink);
    // Operations left over on either side have no match.
    auto leftOver = [&](const std::vector<ActionRef> &mine, size_t others,
                        bool send) {
      for (size_t k = common; k < mine.size(); ++k) {
        const Action &a = action(mine[k]);
        Violation *v =
            sink.add(ViolationKind::Transfer, mine[k],
                     llvm::formatv("{0} has no matching {1}: it is the {2} {3} "
                                   "rank {4} {5} rank {6}, which {7} only {8} "
                                   "{1}(s) {9} rank {4}",
                                   describeAction(schedule, a),
                                   send ? "receive" : "send", ordinal(k),
                                   send ? "send from" : "receive on",
                                   rankId(mine[k].rank), send ? "to" : "from",
                                   rankId(a.peer), send ? "posts" : "issues",
                                   others, send ? "from" : "to"));
        if (v)
          v->rule = StructuralRule::message(send ? mine[k].rank : a.peer,
                                            send ? a.peer : mine[k].rank);
      }
    };
    leftOver(sends, receives.size(), /*send=*/true);
    leftOver(receives, sends.size(), /*send=*/false);
  }
}

void ScheduleIndex::checkPair(ActionRef sendRef, ActionRef recvRef, size_t k,
                              ViolationSink &sink) {
  const Action &send = action(sendRef);
  const Action &recv = action(recvRef);
  const int32_t expectedStage = send.gradient ? send.stage - 1 : send.stage + 1;
  const int64_t sendBytes = transferBytes(send);
  const int64_t recvBytes = transferBytes(recv);
  // What disagrees, and the values the SMT facts state (see
  // Violation::observed): what the receive has against what the send
  // requires.
  std::string disagreement;
  int64_t observed = 1, required = 0;
  auto disagree = [&](int64_t has, int64_t wants, std::string why) {
    observed = has;
    required = wants;
    disagreement = std::move(why);
  };
  if (send.shape != recv.shape)
    disagree(transferDirection(recv), transferDirection(send),
             llvm::formatv("one carries {0}, the other {1}",
                           send.shape ? "a shape" : "data",
                           recv.shape ? "a shape" : "data"));
  else if (send.gradient != recv.gradient)
    disagree(recv.gradient, send.gradient,
             llvm::formatv("one carries {0}, the other {1}",
                           send.gradient ? "a gradient" : "an activation",
                           recv.gradient ? "a gradient" : "an activation"));
  else if (recv.stage != expectedStage)
    disagree(recv.stage, expectedStage,
             llvm::formatv("the send's data is for stage {0}, the receive's "
                           "for stage {1}",
                           expectedStage, recv.stage));
  else if (recv.microbatch != send.microbatch)
    disagree(recv.microbatch, send.microbatch,
             llvm::formatv("the send carries microbatch {0}, the receive "
                           "expects microbatch {1}",
                           send.microbatch, recv.microbatch));
  else if (sendBytes >= 0 && recvBytes >= 0 && sendBytes != recvBytes)
    disagree(recvBytes, sendBytes,
             llvm::formatv("a send of {0} bytes into a receive of {1} bytes",
                           sendBytes, recvBytes));
  if (disagreement.empty())
    return;
  const int64_t from = schedule.ranks[sendRef.rank].id;
  const int64_t to = schedule.ranks[recvRef.rank].id;
  const std::string sendText = describeAction(schedule, send);
  const std::string recvText = describeAction(schedule, recv);
  // Both cells are wrong with respect to each other: one violation at each,
  // with a note at its partner.
  auto report = [&](ActionRef at, ActionRef other, const std::string &mine,
                    const std::string &theirs) {
    if (Violation *v = sink.add(
            ViolationKind::Transfer, at,
            llvm::formatv("{0} is matched with {1}: they are the {2} send and "
                          "receive between rank {3} and rank {4}, and "
                          "point-to-point operations between two ranks match "
                          "in issue order (they carry no tag); {5}",
                          mine, theirs, ordinal(k), from, to, disagreement),
            observed, required)) {
      v->rule = StructuralRule::message(sendRef.rank, recvRef.rank);
      v->notes.push_back({other, "the " + ordinal(k) + " " +
                                     (other.rank == sendRef.rank &&
                                              other.index == sendRef.index
                                          ? "send"
                                          : "receive") +
                                     " of the pair is here"});
    }
  };
  report(recvRef, sendRef, recvText, sendText);
  report(sendRef, recvRef, sendText, recvText);
}

int32_t sched::transferDirection(const Action &a) {
  return (a.gradient ? 1 : 0) + (a.shape ? 2 : 0);
}

bool sched::collectiveStageIsKey(const Schedule &schedule, const Action &a) {
  // A declaration the plan names is the only reading; otherwise any that
  // fits could be the one.
  const bool named = a.declaration >= 0 && static_cast<size_t>(a.declaration) <
                                               schedule.collectives.size();
  bool declared = named;
  if (named && schedule.collectives[a.declaration].when ==
                   CollectiveTiming::AfterBackward)
    return true;
  for (const CollectiveDeclaration &decl : schedule.collectives) {
    if (named || decl.kind != a.kind || decl.group != a.group ||
        (decl.stage >= 0 && decl.stage != a.stage) ||
        (a.bytes >= 0 && a.bytes != decl.bytes))
      continue;
    if (decl.when == CollectiveTiming::AfterBackward)
      return true;
    declared = true;
  }
  for (const AuxLossHead &head : schedule.auxHeads)
    if (head.biasGroup >= 0 && head.biasGroup == a.group &&
        head.stage == a.stage && a.kind == ActionKind::AllReduce)
      return true;
  return !declared;
}

void ScheduleIndex::checkCollectives(ViolationSink &sink) {
  const size_t numRanks = schedule.ranks.size();
  // Per group, per rank: positions of the collectives issued on it.
  std::vector<std::vector<std::vector<int32_t>>> issued(
      schedule.groups.size(), std::vector<std::vector<int32_t>>(numRanks));
  for (size_t r = 0; r < numRanks; ++r) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i)
      if (actions[i].group >= 0 &&
          static_cast<size_t>(actions[i].group) < schedule.groups.size())
        issued[actions[i].group][r].push_back(static_cast<int32_t>(i));
  }
  // Copies of one model stage in different pipeline replicas match.
  const int32_t perReplica = schedule.stagesPerReplica();
  auto modelStage = [&](int32_t stage) {
    return stage < 0 ? stage : stage % perReplica;
  };
  auto same = [&](ActionRef x, ActionRef y) {
    const Action &a = action(x), &b = action(y);
    const bool stageMatters =
        collectiveStageIsKey(schedule, a) || collectiveStageIsKey(schedule, b);
    // A size not stated is a size of its own, never a wildcard: the
    // engine passes some count for it (the executor one element per
    // member), and gloo and NCCL fail or hang on counts that differ.
    return a.kind == b.kind &&
           (!stageMatters || modelStage(a.stage) == modelStage(b.stage)) &&
           a.bytes == b.bytes;
  };
  // `other` is the action `ref` is compared with: a size not stated is
  // named only where the other states one.
  auto describe = [&](ActionRef ref, ActionRef other) {
    const Action &a = action(ref);
    std::string text = describeAction(schedule, a);
    if (a.bytes >= 0)
      text += llvm::formatv(" of {0} bytes", a.bytes).str();
    else if (other.index >= 0 && action(other).bytes >= 0)
      text += " (size not stated)";
    return text;
  };
  for (size_t g = 0; g < schedule.groups.size(); ++g) {
    const ProcessGroup &group = schedule.groups[g];
    for (const std::vector<int32_t> &members : group.members) {
      if (members.size() < 2)
        continue;
      const int32_t lead = members.front();
      const std::vector<int32_t> &leadOps = issued[g][lead];
      for (int32_t member : llvm::ArrayRef(members).drop_front()) {
        const std::vector<int32_t> &ops = issued[g][member];
        const size_t common = std::min(ops.size(), leadOps.size());
        size_t k = 0;
        while (k < common && same({member, ops[k]}, {lead, leadOps[k]}))
          ++k;
        if (k == common && ops.size() == leadOps.size())
          continue;
        const bool memberShort = k == ops.size();
        const ActionRef here =
            memberShort ? ActionRef{member, -1} : ActionRef{member, ops[k]};
        const ActionRef there = k < leadOps.size() ? ActionRef{lead, leadOps[k]}
                                                   : ActionRef{lead, -1};
        std::string mine =
            memberShort ? std::string("nothing") : describe(here, there);
        std::string theirs = k < leadOps.size() ? describe(there, here)
                                                : std::string("nothing");
        if (Violation *v = sink.add(
                ViolationKind::Collective, here,
                llvm::formatv("collective #{0} on group @{1}: rank {2} issues "
                              "{3}, but rank {4} issues {5}; members of a "
                              "group must issue the same collectives (kind, "
                              "stage and bytes) in the same order",
                              k, group.name, schedule.ranks[member].id, mine,
                              schedule.ranks[lead].id, theirs))) {
          v->notes.push_back(
              {there, "rank " + std::to_string(schedule.ranks[lead].id) +
                          " issues this one"});
          v->rule = StructuralRule::collectiveOrder(static_cast<int32_t>(g),
                                                    member, lead);
        }
      }
    }
  }
}
