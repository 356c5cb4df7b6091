//===- StreamOrder.cpp - the order streams and events give a rank ---------===//
//
// Vector clocks over each rank's streams: an action's clock holds, for each
// stream of its rank, the last position of that stream that happens before
// it (its stream's previous action, and through each event it waits for,
// the clock of the action the event was recorded after).
//
//===----------------------------------------------------------------------===//

#include "lib/Verify/StreamOrder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace sched;

StreamOrder::StreamOrder(const ScheduleIndex &index) : index(index) {
  const Schedule &schedule = index.schedule;
  ranks.resize(schedule.ranks.size());
  if (!schedule.hasStreams())
    return;
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    RankClocks &rank = ranks[r];
    for (const Action &a : actions)
      if (!llvm::is_contained(rank.streams, a.stream))
        rank.streams.push_back(a.stream);
    const bool events = llvm::any_of(actions, [](const Action &a) {
      return a.waitEvent >= 0 || a.recordEvent >= 0;
    });
    if (rank.streams.size() < 2 && !events) {
      rank.streams.clear();
      continue;
    }
    const size_t width = rank.streams.size();
    auto column = [&](uint16_t stream) {
      return static_cast<size_t>(
          llvm::find(rank.streams, stream) - rank.streams.begin());
    };
    rank.clocks.assign(actions.size() * width, -1);
    // Per stream, its last action so far; per event, its latest record.
    std::vector<int32_t> last(width, -1);
    std::map<int16_t, int32_t> recorded;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &a = actions[i];
      int32_t *clock = &rank.clocks[i * width];
      const size_t s = column(a.stream);
      if (last[s] >= 0)
        std::copy_n(&rank.clocks[last[s] * width], width, clock);
      if (a.waitEvent >= 0) {
        auto record = recorded.find(a.waitEvent);
        // A wait for an event never recorded returns at once (CUDA).
        if (record != recorded.end())
          for (size_t k = 0; k < width; ++k)
            clock[k] =
                std::max(clock[k], rank.clocks[record->second * width + k]);
      }
      clock[s] = static_cast<int32_t>(i);
      last[s] = static_cast<int32_t>(i);
      if (a.recordEvent >= 0)
        recorded[a.recordEvent] = static_cast<int32_t>(i);
    }
  }
}

bool StreamOrder::ordered(int32_t rank, int32_t before, int32_t after) const {
  const RankClocks &clocks = ranks[rank];
  if (clocks.streams.empty())
    return before < after;
  if (before >= after)
    return false;
  const Action &a = index.schedule.ranks[rank].actions[before];
  const size_t width = clocks.streams.size();
  const size_t s = static_cast<size_t>(
      llvm::find(clocks.streams, a.stream) - clocks.streams.begin());
  return clocks.clocks[after * width + s] >= before;
}

bool StreamOrder::check(const WaitGraph &graph, ViolationSink &sink) {
  bool clean = true;
  dependencies.assign(ranks.size(), {});
  if (llvm::all_of(ranks,
                   [](const RankClocks &r) { return r.streams.empty(); }))
    return clean;
  checkCommunicators(sink, clean);
  checkDependencies(graph.getImpliedEdges(), sink, clean);
  checkDependencies(graph.getEdges(), sink, clean);
  return clean;
}

/// An action in a diagnostic: describeAction, and a collective's bytes
/// when stated (two collectives of one communicator often differ only
/// there).
static std::string describe(const Schedule &schedule, const Action &a) {
  std::string text = describeAction(schedule, a);
  const bool transfer =
      a.kind == ActionKind::Send || a.kind == ActionKind::Recv;
  if (a.group >= 0 && !transfer && a.bytes >= 0)
    text += llvm::formatv(" of {0} bytes", a.bytes).str();
  return text;
}

/// The streams and events rules enter the encoding as the rank's stream
/// rule (StreamOrder::rule).
static void markRule(Violation *v, int32_t rank) {
  if (!v)
    return;
  v->rule.form = StructuralRule::Form::Streams;
  v->rule.rank = rank;
}

/// The communicator `a` of rank `r` runs on, as a key (a group's member
/// set: (0, group, set); a rank pair's own point-to-point one: (1, low
/// rank, high rank)) and its name; none for an action on no communicator.
static std::optional<std::pair<std::tuple<int, int32_t, int32_t>, std::string>>
communicatorOf(const Schedule &schedule, size_t r, const Action &a) {
  const bool transfer =
      a.kind == ActionKind::Send || a.kind == ActionKind::Recv;
  const int32_t group = transfer ? a.communicator : a.group;
  if (group >= 0) {
    const std::vector<std::vector<int32_t>> &sets =
        schedule.groups[group].members;
    int32_t set = -1;
    for (size_t k = 0; k < sets.size() && set < 0; ++k)
      if (llvm::is_contained(sets[k], static_cast<int32_t>(r)))
        set = static_cast<int32_t>(k);
    return std::make_pair(std::make_tuple(0, group, set),
                          "@" + schedule.groups[group].name);
  }
  if (!transfer || a.peer < 0)
    return std::nullopt;
  const int32_t low = std::min<int32_t>(r, a.peer);
  const int32_t high = std::max<int32_t>(r, a.peer);
  return std::make_pair(
      std::make_tuple(1, low, high),
      llvm::formatv("the point-to-point communicator of ranks {0} and {1}",
                    schedule.ranks[low].id, schedule.ranks[high].id)
          .str());
}

void StreamOrder::checkDependencies(const std::vector<WaitEdge> &edges,
                                    ViolationSink &sink, bool &clean) {
  const Schedule &schedule = index.schedule;
  std::set<std::pair<uint64_t, uint64_t>> seen;
  std::set<std::tuple<int32_t, int32_t, int32_t>> kept;
  for (const WaitEdge &e : edges) {
    switch (e.reason) {
    case WaitReason::ProgramOrder:
    case WaitReason::Rendezvous:
    case WaitReason::GroupCompletion:
    case WaitReason::CommunicatorCreation:
    case WaitReason::Transfer:
      continue;
    default:
      break;
    }
    const ActionRef from = e.fromAction, to = e.toAction;
    // A wait on a later action of the rank closes a cycle with program
    // order: the graph reports it.
    if (from.rank < 0 || from.rank != to.rank || from.index < 0 ||
        from.index >= to.index || ranks[from.rank].streams.empty())
      continue;
    const Action &a = index.action(from);
    const Action &b = index.action(to);
    // Members of one bundle run together on one stream.
    if (a.bundle != 0 && a.bundle == b.bundle)
      continue;
    if (kept.insert({from.rank, from.index, to.index}).second)
      dependencies[from.rank].emplace_back(from.index, to.index);
    if (ordered(from.rank, from.index, to.index))
      continue;
    if (!seen.insert({(uint64_t(from.rank) << 32) | uint32_t(from.index),
                      (uint64_t(to.rank) << 32) | uint32_t(to.index)})
             .second)
      continue;
    clean = false;
    const std::string before = describe(schedule, a);
    Violation *v = sink.add(
        ViolationKind::Dependency, to,
        llvm::formatv(
            "{0} on stream {1} of rank {2} must wait for {3} on stream {4} "
            "({5}), but neither stream order nor an event orders them: "
            "different streams run concurrently, so it may run first (record "
            "an event after {3} and wait for it before {0})",
            describe(schedule, b), schedule.streamName(b.stream),
            schedule.ranks[to.rank].id, before,
            schedule.streamName(a.stream), waitReasonWords(e.reason)));
    markRule(v, from.rank);
    if (v)
      v->notes.push_back(
          {from, llvm::formatv("{0} runs on stream {1}", before,
                               schedule.streamName(a.stream))
                     .str()});
  }
}

void StreamOrder::checkCommunicators(ViolationSink &sink, bool &clean) const {
  const Schedule &schedule = index.schedule;
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    if (ranks[r].streams.empty())
      continue;
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    // Per communicator: a group's member set (0, group, set), or a rank
    // pair's own point-to-point one (1, low rank, high rank); its last
    // operation so far.
    std::map<std::tuple<int, int32_t, int32_t>, int32_t> last;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &a = actions[i];
      const bool transfer =
          a.kind == ActionKind::Send || a.kind == ActionKind::Recv;
      const auto communicator = communicatorOf(schedule, r, a);
      if (!communicator)
        continue;
      const auto &[key, name] = *communicator;
      auto [it, first] = last.try_emplace(key, static_cast<int32_t>(i));
      if (first)
        continue;
      const int32_t previous = it->second;
      it->second = static_cast<int32_t>(i);
      const Action &p = actions[previous];
      if ((p.bundle != 0 && p.bundle == a.bundle) ||
          ordered(static_cast<int32_t>(r), previous, static_cast<int32_t>(i)))
        continue;
      clean = false;
      const bool transfers =
          transfer && (p.kind == ActionKind::Send || p.kind == ActionKind::Recv);
      const std::string earlier = describe(schedule, p);
      Violation *v = sink.add(
          transfers ? ViolationKind::Transfer : ViolationKind::Collective,
          {static_cast<int32_t>(r), static_cast<int32_t>(i)},
          llvm::formatv(
              "rank {0} issues {1} on stream {2} and {3} on stream {4}, two "
              "operations of one communicator ({5}), and neither stream order "
              "nor an event orders them: every member must issue a "
              "communicator's operations in one order (NCCL), and a runtime "
              "that launches each stream's work when it is ready may issue "
              "these two in either order",
              schedule.ranks[r].id, earlier, schedule.streamName(p.stream),
              describe(schedule, a), schedule.streamName(a.stream),
              name));
      markRule(v, static_cast<int32_t>(r));
      if (v)
        v->notes.push_back(
            {{static_cast<int32_t>(r), previous},
             llvm::formatv("{0} runs on stream {1}", earlier,
                           schedule.streamName(p.stream))
                 .str()});
    }
  }
}

/// The slot of each event of `actions` (by Action::waitEvent and
/// recordEvent) and its first record: events whose spans (from the first
/// record to the last use) do not overlap share a slot, the spans coloured
/// in order of their starts, so a stream rule carries one chain per event
/// live at once rather than one per event. A wait at or before its event's
/// first record waits for nothing (CUDA) and reads no slot. Sets `slots`
/// to the number of slots.
static std::map<int16_t, std::pair<int64_t, size_t>>
eventSlots(const std::vector<Action> &actions, int64_t &slots) {
  // Per event: its first record and its last use after it.
  std::map<int16_t, std::pair<size_t, size_t>> spans;
  for (size_t i = 0; i < actions.size(); ++i) {
    const Action &a = actions[i];
    auto waited = spans.find(a.waitEvent);
    if (a.waitEvent >= 0 && waited != spans.end() && i > waited->second.first)
      waited->second.second = i;
    if (a.recordEvent >= 0)
      spans.try_emplace(a.recordEvent, i, i).first->second.second = i;
  }
  std::vector<std::tuple<size_t, size_t, int16_t>> byStart;
  for (const auto &[event, span] : spans)
    byStart.emplace_back(span.first, span.second, event);
  llvm::sort(byStart);
  std::map<int16_t, std::pair<int64_t, size_t>> result;
  // The end of the span each slot holds last.
  std::vector<size_t> ends;
  for (auto [start, end, event] : byStart) {
    size_t slot = 0;
    while (slot < ends.size() && ends[slot] >= start)
      ++slot;
    if (slot == ends.size())
      ends.push_back(end);
    else
      ends[slot] = end;
    result[event] = {static_cast<int64_t>(slot), start};
  }
  slots = static_cast<int64_t>(ends.size());
  return result;
}

std::optional<StreamRule> StreamOrder::rule(int32_t rank, std::string &whyNot,
                                            size_t limit,
                                            size_t sparseLimit) const {
  const Schedule &schedule = index.schedule;
  const RankClocks &clocks = ranks[rank];
  if (clocks.streams.empty())
    return std::nullopt;
  const std::vector<Action> &actions = schedule.ranks[rank].actions;
  StreamRule rule;
  rule.streams = static_cast<int64_t>(clocks.streams.size());
  int64_t slots = 0;
  const std::map<int16_t, std::pair<int64_t, size_t>> events =
      eventSlots(actions, slots);
  std::map<std::tuple<int, int32_t, int32_t>, int64_t> communicators;
  // Bundles renumbered from 1, in order of appearance.
  std::map<uint32_t, int64_t> bundles;
  size_t length = 0;
  // What the sparse form links beyond each action's clocks: per record,
  // its event's chain; per communicator operation, its communicator's.
  std::vector<size_t> namedLinks;
  for (size_t i = 0; i < actions.size(); ++i) {
    const Action &a = actions[i];
    StreamStep step;
    step.stream = llvm::find(clocks.streams, a.stream) - clocks.streams.begin();
    if (a.recordEvent >= 0)
      step.record = events.at(a.recordEvent).first;
    auto waited = events.find(a.waitEvent);
    if (a.waitEvent >= 0 && waited != events.end() &&
        i > waited->second.second)
      step.wait = waited->second.first;
    if (auto communicator = communicatorOf(schedule, rank, a)) {
      step.communicator =
          communicators
              .try_emplace(communicator->first,
                           static_cast<int64_t>(communicators.size()))
              .first->second;
      length = i + 1;
    }
    if (a.bundle != 0)
      step.bundle =
          bundles
              .try_emplace(a.bundle, static_cast<int64_t>(bundles.size()) + 1)
              .first->second;
    namedLinks.push_back((namedLinks.empty() ? 0 : namedLinks.back()) +
                         (step.record >= 0 ? clocks.streams.size() : 0) +
                         (step.communicator >= 0 ? 3 : 0));
    rule.program.push_back(step);
  }
  for (auto [from, to] : dependencies[rank]) {
    rule.ordered.emplace_back(from, to);
    length = std::max(length, static_cast<size_t>(to) + 1);
  }
  // Actions after the last one the rule reads change nothing in it.
  rule.program.resize(length);
  rule.events = slots;
  rule.communicators = static_cast<int64_t>(communicators.size());
  const size_t width = clocks.streams.size();
  const size_t cells = length * (5 + width * (1 + width + slots) +
                                 3 * communicators.size());
  // The sparse form: each action's attributes, clocks and stream chains,
  // and the chains its record and communicator name.
  const size_t sparseCells =
      length * (5 + width * (1 + width)) +
      (length ? namedLinks[length - 1] : 0);
  rule.sparse = cells > limit;
  if (rule.sparse && sparseCells > sparseLimit) {
    whyNot = llvm::formatv(
        "the stream rule of rank {0} would state {1} constants ({2} actions, "
        "{3} streams, {4} events live at once, {5} communicators), more "
        "than the {6} a stream rule states, and {7} in its sparse form, "
        "more than the {8} that form states",
        schedule.ranks[rank].id, cells, length, width, slots,
        communicators.size(), limit, sparseCells, sparseLimit);
    return std::nullopt;
  }
  std::string streamNames;
  for (size_t k = 0; k < width; ++k)
    streamNames += llvm::formatv("{0}{1} {2}", k ? ", " : "", k,
                                 schedule.streamName(clocks.streams[k]))
                       .str();
  rule.description = llvm::formatv(
      "along the first {0} actions of rank {1} (streams {2}; events "
      "numbered by slot, events whose spans from first record to last use "
      "do not overlap sharing one, a wait before any record of its event "
      "waiting for nothing (-1); communicators numbered in order of first "
      "use; bundle 0 for none), "
      "happens-before is the vector clocks of its streams and events: clk of "
      "an action at column k is its own position on its stream k, else the "
      "larger of the clock of its stream's previous action (cur) and that "
      "of the latest record of the event it waits for (ev; -1 for none); "
      "each of its {3} dependencies between actions on different streams "
      "(earlier, later) is ordered (the later action's clock at the earlier "
      "one's stream reaches the earlier one, or both are in one bundle), "
      "and each operation of a communicator (comm) is ordered after that "
      "communicator's previous operation on the rank (op, opst, opbd), as "
      "NCCL requires{4}",
      length, schedule.ranks[rank].id, streamNames, rule.ordered.size(),
      rule.sparse
          ? llvm::formatv(
                "; sparse form ({0} constants, where the full form would "
                "state {1}): an event's chain (communicator's) is linked "
                "only at the actions that record it (operate on it), and a "
                "wait reads the chain of the event it names, so another "
                "value of an action's wait, record or comm reads or links "
                "none",
                sparseCells, cells)
                .str()
          : std::string());
  return rule;
}
