//===- StreamOrderTest.cpp - hand-built cases of streams and events -------===//
//
// The happens-before that lib/Verify/StreamOrder computes from a rank's
// streams and CUDA events, and the two rules it checks (every dependency of
// a rank, every two operations of one communicator), on schedules built by
// hand: one stream, streams without events, an event chain across three
// streams, a wait before its record, a re-recorded event, and the
// violations each rule reports, with the verifier's verdict beside them;
// and the Z3 encoding of the stream rule against the clocks.
//
//===----------------------------------------------------------------------===//

#include "lib/Verify/StreamOrder.h"
#include "lib/Verify/Verifier.h"
#include "lib/Verify/WaitGraph.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace sched;

namespace {

/// A one-stage, one-rank schedule of F and B per microbatch, each action
/// placed on the stream named in `streams` (one per action; "" for the
/// rank's default stream), with the events `waits` and `records` name
/// ("" for none).
struct RankBuilder {
  Schedule schedule;

  explicit RankBuilder(int32_t microbatches) {
    schedule.numStages = 1;
    schedule.numMicrobatches = microbatches;
    schedule.ranks.resize(1);
  }

  int16_t intern(std::vector<std::string> &names, const std::string &name) {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == name)
        return static_cast<int16_t>(i);
    names.push_back(name);
    return static_cast<int16_t>(names.size() - 1);
  }

  /// Appends `action` on `stream`, waiting for `wait` and recording
  /// `record` (empty: none); returns its position.
  int32_t add(Action action, const std::string &stream = "default",
              const std::string &wait = "", const std::string &record = "") {
    if (schedule.streams.empty())
      schedule.streams.push_back("default");
    action.stream = static_cast<uint16_t>(intern(schedule.streams, stream));
    if (!wait.empty())
      action.waitEvent = intern(schedule.events, wait);
    if (!record.empty())
      action.recordEvent = intern(schedule.events, record);
    schedule.ranks[0].actions.push_back(action);
    return static_cast<int32_t>(schedule.ranks[0].actions.size() - 1);
  }
};

Action forward(int32_t mb) {
  return Action::compute(ActionKind::Forward, 0, mb);
}
Action backward(int32_t mb) {
  return Action::compute(ActionKind::Backward, 0, mb);
}

/// The order of `schedule`'s streams and events as verifySchedule checks
/// it (its index, wait graph and StreamOrder::check), for its stream rule.
struct CheckedOrder {
  ScheduleIndex index;
  StreamOrder order;
  /// Whether check() found every dependency and communicator ordered.
  bool clean = false;
  /// What it reported otherwise.
  std::vector<Violation> violations;

  explicit CheckedOrder(const Schedule &schedule)
      : index(schedule), order(index) {
    ViolationSink sink;
    EXPECT_TRUE(index.check(sink));
    VerifyOptions options;
    options.useZ3 = false;
    WaitGraph graph(index, options);
    graph.build();
    clean = order.check(graph, sink);
    violations = sink.take();
  }
};

/// The violations StreamOrder reports for `schedule` (which must pass the
/// structural checks), after building its wait graph.
std::vector<Violation> streamViolations(const Schedule &schedule) {
  return CheckedOrder(schedule).violations;
}

Verdict verdictOf(const Schedule &schedule) {
  VerifyOptions options;
  return verifySchedule(schedule, options).verdict;
}

} // namespace

TEST(StreamOrder, OneStreamIsProgramOrder) {
  RankBuilder b(2);
  b.add(forward(0));
  b.add(forward(1));
  b.add(backward(0));
  b.add(backward(1));
  ScheduleIndex index(b.schedule);
  StreamOrder order(index);
  EXPECT_TRUE(order.ordered(0, 0, 3));
  EXPECT_TRUE(order.ordered(0, 1, 2));
  EXPECT_FALSE(order.ordered(0, 2, 1));
  EXPECT_FALSE(order.ordered(0, 1, 1));
  EXPECT_TRUE(streamViolations(b.schedule).empty());
  EXPECT_EQ(verdictOf(b.schedule), Verdict::Verified);
}

TEST(StreamOrder, TwoStreamsWithoutEventsAreConcurrent) {
  RankBuilder b(2);
  const int32_t f0 = b.add(forward(0), "a");
  const int32_t f1 = b.add(forward(1), "b");
  const int32_t b0 = b.add(backward(0), "a");
  const int32_t b1 = b.add(backward(1), "b");
  ScheduleIndex index(b.schedule);
  StreamOrder order(index);
  EXPECT_TRUE(order.ordered(0, f0, b0));
  EXPECT_TRUE(order.ordered(0, f1, b1));
  // Listed earlier, but on another stream and with no event.
  EXPECT_FALSE(order.ordered(0, f0, f1));
  EXPECT_FALSE(order.ordered(0, f0, b1));
  EXPECT_FALSE(order.ordered(0, f1, b0));
  // Each backward follows its own forward on its stream: nothing to report.
  EXPECT_TRUE(streamViolations(b.schedule).empty());
}

TEST(StreamOrder, BackwardOnAnotherStreamRaces) {
  RankBuilder b(1);
  b.add(forward(0), "compute");
  const int32_t b0 = b.add(backward(0), "side");
  std::vector<Violation> violations = streamViolations(b.schedule);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].kind, ViolationKind::Dependency);
  EXPECT_EQ(violations[0].at.index, b0);
  EXPECT_NE(violations[0].message.find("on stream side of rank 0 must wait "
                                       "for F(stage 0, mb 0) on stream "
                                       "compute"),
            std::string::npos)
      << violations[0].message;
  ASSERT_EQ(violations[0].notes.size(), 1u);
  EXPECT_EQ(violations[0].notes[0].at.index, 0);
  EXPECT_EQ(verdictOf(b.schedule), Verdict::Violated);
}

TEST(StreamOrder, EventOrdersStreamsAndIsTransitive) {
  RankBuilder b(2);
  // Stream a: F0 (records e1). Stream b waits e1, F1 (records e2). Stream
  // c waits e2, then B0 and B1.
  const int32_t f0 = b.add(forward(0), "a", "", "e1");
  const int32_t f1 = b.add(forward(1), "b", "e1", "e2");
  const int32_t b0 = b.add(backward(0), "c", "e2");
  const int32_t b1 = b.add(backward(1), "c");
  ScheduleIndex index(b.schedule);
  StreamOrder order(index);
  EXPECT_TRUE(order.ordered(0, f0, f1));
  EXPECT_TRUE(order.ordered(0, f1, b0));
  // Through both events, and on along stream c.
  EXPECT_TRUE(order.ordered(0, f0, b0));
  EXPECT_TRUE(order.ordered(0, f0, b1));
  EXPECT_FALSE(order.ordered(0, b0, f1));
  EXPECT_TRUE(streamViolations(b.schedule).empty());
  EXPECT_EQ(verdictOf(b.schedule), Verdict::Verified);
}

TEST(StreamOrder, WaitBeforeRecordWaitsForNothing) {
  // CUDA: before its first record an event is an empty set of work, so B0
  // waits for nothing and may run before F0.
  RankBuilder b(2);
  const int32_t f0 = b.add(forward(0), "a");
  const int32_t b0 = b.add(backward(0), "b", "e");
  const int32_t f1 = b.add(forward(1), "a", "", "e");
  b.add(backward(1), "a");
  ScheduleIndex index(b.schedule);
  StreamOrder order(index);
  EXPECT_FALSE(order.ordered(0, f0, b0));
  EXPECT_FALSE(order.ordered(0, f1, b0));
  std::vector<Violation> violations = streamViolations(b.schedule);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].kind, ViolationKind::Dependency);
  EXPECT_EQ(violations[0].at.index, b0);
}

TEST(StreamOrder, WaitSeesTheLatestRecordBeforeIt) {
  RankBuilder b(2);
  // e is recorded after F0 on a, then again after F1 on a; the wait on b
  // comes between the two records, so it orders F0 but not F1.
  const int32_t f0 = b.add(forward(0), "a", "", "e");
  const int32_t b0 = b.add(backward(0), "b", "e");
  const int32_t f1 = b.add(forward(1), "a", "", "e");
  const int32_t b1 = b.add(backward(1), "b");
  ScheduleIndex index(b.schedule);
  StreamOrder order(index);
  EXPECT_TRUE(order.ordered(0, f0, b0));
  EXPECT_TRUE(order.ordered(0, f0, b1));
  EXPECT_FALSE(order.ordered(0, f1, b1));
  std::vector<Violation> violations = streamViolations(b.schedule);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].kind, ViolationKind::Dependency);
  EXPECT_EQ(violations[0].at.index, b1);
  // A second wait after the second record fixes it.
  b.schedule.ranks[0].actions[b1].waitEvent =
      b.schedule.ranks[0].actions[b0].waitEvent;
  EXPECT_TRUE(streamViolations(b.schedule).empty());
  EXPECT_EQ(verdictOf(b.schedule), Verdict::Verified);
}

TEST(StreamOrder, CollectivesOfOneCommunicatorOnTwoStreams) {
  // Megatron-LM #1810's shape: two all-to-alls of one group from two
  // streams that nothing orders.
  RankBuilder b(1);
  b.schedule.groups.push_back({"ep", {{0}}, false});
  b.add(forward(0), "compute");
  Action first;
  first.kind = ActionKind::AllToAll;
  first.group = 0;
  first.stage = 0;
  first.bytes = 1024;
  Action second = first;
  second.bytes = 2048;
  b.add(first, "comm_a");
  const int32_t later = b.add(second, "comm_b");
  b.add(backward(0), "compute");
  std::vector<Violation> violations = streamViolations(b.schedule);
  ASSERT_FALSE(violations.empty());
  const Violation &v = violations[0];
  EXPECT_EQ(v.kind, ViolationKind::Collective);
  EXPECT_EQ(v.at.index, later);
  EXPECT_NE(v.message.find("all_to_all @ep (stage 0) of 1024 bytes on stream "
                           "comm_a and all_to_all @ep (stage 0) of 2048 bytes "
                           "on stream comm_b, two operations of one "
                           "communicator (@ep)"),
            std::string::npos)
      << v.message;
}

TEST(StreamOrder, TransfersToOnePeerOnTwoStreams) {
  // Two ranks, two stages: rank 0 computes and sends the activation on
  // stream x and receives the gradient (and runs the backward) on stream
  // y, with nothing between the two streams.
  Schedule schedule;
  schedule.numStages = 2;
  schedule.numMicrobatches = 1;
  schedule.streams = {"default", "x", "y"};
  schedule.ranks.resize(2);
  schedule.ranks[0].id = 0;
  schedule.ranks[1].id = 1;
  auto transfer = [](ActionKind kind, bool gradient, int32_t stage,
                     int32_t peer, uint16_t stream) {
    Action a = Action::compute(kind, stage, 0);
    a.gradient = gradient;
    a.peer = peer;
    a.stream = stream;
    return a;
  };
  std::vector<Action> &zero = schedule.ranks[0].actions;
  zero.push_back(forward(0));
  zero.back().stream = 1;
  zero.push_back(transfer(ActionKind::Send, false, 0, 1, 1));
  zero.push_back(transfer(ActionKind::Recv, true, 0, 1, 2));
  zero.push_back(backward(0));
  zero.back().stream = 2;
  std::vector<Action> &one = schedule.ranks[1].actions;
  one.push_back(transfer(ActionKind::Recv, false, 1, 0, 0));
  one.push_back(Action::compute(ActionKind::Forward, 1, 0));
  one.push_back(Action::compute(ActionKind::Backward, 1, 0));
  one.push_back(transfer(ActionKind::Send, true, 1, 0, 0));
  std::vector<Violation> violations = streamViolations(schedule);
  ASSERT_FALSE(violations.empty());
  EXPECT_EQ(violations[0].kind, ViolationKind::Transfer);
  EXPECT_EQ(violations[0].at.rank, 0);
  EXPECT_EQ(violations[0].at.index, 2);
  EXPECT_NE(violations[0].message.find(
                "the point-to-point communicator of ranks 0 and 1"),
            std::string::npos)
      << violations[0].message;
  EXPECT_EQ(verdictOf(schedule), Verdict::Violated);
  // Recording an event after the send and waiting for it before the
  // receive orders the two, and the backward's input too.
  schedule.events = {"sent"};
  zero[1].recordEvent = 0;
  zero[2].waitEvent = 0;
  EXPECT_TRUE(streamViolations(schedule).empty());
  EXPECT_EQ(verdictOf(schedule), Verdict::Verified);
}

namespace {

/// The stream rule of rank 0 of `schedule` with the single dependency
/// (`before`, `after`), its streams and events numbered as the schedule
/// numbers them.
StreamRule pairRule(const Schedule &schedule, int32_t before, int32_t after) {
  StreamRule rule;
  rule.streams = static_cast<int64_t>(schedule.streams.size());
  rule.events = static_cast<int64_t>(schedule.events.size());
  for (int32_t i = 0; i <= after; ++i) {
    const Action &a = schedule.ranks[0].actions[i];
    StreamStep step;
    step.stream = a.stream;
    step.wait = a.waitEvent;
    step.record = a.recordEvent;
    rule.program.push_back(step);
  }
  rule.ordered.emplace_back(before, after);
  return rule;
}

/// Z3's answer on `rule` alone: solved (constants and links) or, with
/// `ground`, evaluated on the schedule's values as the witness check does.
Z3Answer answer(const StreamRule &rule, bool ground) {
  Z3Query query;
  query.streams.push_back(rule);
  if (ground) {
    query.numNodes = 1;
    query.witness = {0};
  }
  return solveWithZ3(query, 0).answer;
}

/// Expects Z3's answer on `rule`, solved and evaluated, to be sat exactly
/// when `ordered` (the clocks' answer for the pair it states); counts the
/// pair in `pairs` and, if ordered, in `orderedPairs`.
void expectAgrees(const StreamRule &rule, bool ordered, int program,
                  int32_t before, int32_t after, int &pairs,
                  int &orderedPairs) {
  const Z3Answer want = ordered ? Z3Answer::Sat : Z3Answer::Unsat;
  EXPECT_EQ(answer(rule, /*ground=*/false), want)
      << "program " << program << ", actions " << before << " and " << after;
  EXPECT_EQ(answer(rule, /*ground=*/true), want)
      << "program " << program << ", actions " << before << " and " << after
      << " (evaluated)";
  StreamRule sparse = rule;
  sparse.sparse = true;
  EXPECT_EQ(answer(sparse, /*ground=*/false), want)
      << "program " << program << ", actions " << before << " and " << after
      << " (sparse form)";
  ++pairs;
  orderedPairs += ordered;
}

/// A seeded linear congruential sequence: next(bound) draws in [0, bound),
/// the same numbers on every machine.
class Draws {
public:
  explicit Draws(uint32_t seed) : seed(seed) {}
  uint32_t operator()(uint32_t bound) {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 16) % bound;
  }

private:
  uint32_t seed;
};

} // namespace

/// The encoding's vector clocks against the graph path's, on random
/// programs of three streams and three events (records overwritten, waits
/// before any record): for every pair of actions, Z3 finds the rule
/// "the earlier happens before the later" sat exactly when
/// StreamOrder::ordered says so, solving it and evaluating it alike.
TEST(StreamOrderTest, EncodingAgreesWithTheClocksOnRandomPrograms) {
  Draws next(12345);
  const std::vector<std::string> streams = {"default", "a", "b"};
  const std::vector<std::string> events = {"", "", "e0", "e1", "e2"};
  int pairs = 0, orderedPairs = 0;
  for (int program = 0; program < 6; ++program) {
    RankBuilder rank(4);
    for (int32_t mb = 0; mb < 4; ++mb) {
      rank.add(forward(mb), streams[next(3)], events[next(5)], events[next(5)]);
      rank.add(backward(mb), streams[next(3)], events[next(5)],
               events[next(5)]);
    }
    ScheduleIndex index(rank.schedule);
    StreamOrder order(index);
    const int32_t n =
        static_cast<int32_t>(rank.schedule.ranks[0].actions.size());
    for (int32_t after = 1; after < n; ++after)
      for (int32_t before = 0; before < after; ++before) {
        expectAgrees(pairRule(rank.schedule, before, after),
                     order.ordered(0, before, after), program, before, after,
                     pairs, orderedPairs);
      }
  }
  // Both answers occur, so the comparison can fail either way.
  EXPECT_EQ(pairs, 6 * 28);
  EXPECT_GT(orderedPairs, 0);
  EXPECT_LT(orderedPairs, pairs);
}

/// The rule StreamOrder::rule states, events numbered by slot (events
/// whose spans do not overlap share one, a wait before any record of its
/// event reads none), against the graph path's clocks: on random programs
/// of three streams and twelve events, each recorded and waited for a
/// few times, for every pair of actions Z3 finds "the earlier happens
/// before the later" sat exactly when StreamOrder::ordered says so, and
/// the rule holds fewer slots than events.
TEST(StreamOrderTest, EventSlotsAgreeWithTheClocks) {
  Draws next(777);
  const std::vector<std::string> streams = {"default", "a", "b"};
  int pairs = 0, orderedPairs = 0;
  bool fewerSlots = false;
  for (int program = 0; program < 4; ++program) {
    RankBuilder rank(8);
    // Event k is used around position 2k (records and waits drawn from a
    // window of three events), so spans overlap a little and slots are
    // reused; now and then a wait comes before any record.
    for (int32_t mb = 0; mb < 8; ++mb)
      for (Action a : {forward(mb), backward(mb)}) {
        const int32_t base = static_cast<int32_t>(
            rank.schedule.ranks[0].actions.size() / 2);
        auto event = [&](uint32_t none) {
          const uint32_t pick = next(none + 3);
          return pick < none ? std::string()
                             : "e" + std::to_string(base + pick - none);
        };
        rank.add(a, streams[next(3)], event(2), event(1));
      }
    CheckedOrder checked(rank.schedule);
    const StreamOrder &order = checked.order;
    std::string whyNot;
    const std::optional<StreamRule> stated = order.rule(0, whyNot);
    ASSERT_TRUE(stated) << whyNot;
    fewerSlots |= stated->events <
                  static_cast<int64_t>(rank.schedule.events.size());
    const int32_t n =
        static_cast<int32_t>(rank.schedule.ranks[0].actions.size());
    for (int32_t after = 1; after < n; ++after)
      for (int32_t before = 0; before < after; ++before) {
        // Pairs past the last action the rule reads are not stated.
        if (static_cast<size_t>(after) >= stated->program.size())
          continue;
        StreamRule rule = *stated;
        rule.ordered.assign(1, {before, after});
        expectAgrees(rule, order.ordered(0, before, after), program, before,
                     after, pairs, orderedPairs);
      }
  }
  EXPECT_GT(pairs, 100);
  EXPECT_GT(orderedPairs, 0);
  EXPECT_LT(orderedPairs, pairs);
  EXPECT_TRUE(fewerSlots);
}

/// The sparse form (StreamRule::sparse, what StreamOrder::rule states past
/// kMaxStreamCells) against the full form and the graph path, with
/// communicators: on random programs of three streams, six events and
/// all-to-alls on two groups, the rule check() decided (every dependency
/// and every communicator's order) is sat in either form, solved or
/// evaluated, exactly when check() found no violation; and forced past
/// the full form's limit, StreamOrder::rule states the sparse form with
/// fewer constants.
TEST(StreamOrderTest, SparseFormAgreesWithTheFullForm) {
  Draws next(4242);
  const std::vector<std::string> streams = {"default", "a", "b"};
  int clean = 0, violated = 0;
  for (int program = 0; program < 24; ++program) {
    RankBuilder rank(4);
    rank.schedule.groups.push_back({"ep", {{0}}, false});
    rank.schedule.groups.push_back({"tp", {{0}}, false});
    // Each action records one of six events (so several are live at once)
    // and mostly waits for the one an earlier action recorded: most
    // programs are ordered, and a skipped wait races.
    auto add = [&](Action a) {
      const size_t at = rank.schedule.ranks[0].actions.size();
      const uint32_t back = 1 + next(2);
      const std::string wait =
          at >= back && next(5) != 0
              ? "e" + std::to_string((at - back) % 6)
              : std::string();
      rank.add(a, streams[next(3)], wait, "e" + std::to_string(at % 6));
    };
    for (int32_t mb = 0; mb < 4; ++mb)
      for (Action a : {forward(mb), backward(mb)}) {
        add(a);
        if (next(2) == 0)
          continue;
        Action collective;
        collective.kind = ActionKind::AllToAll;
        collective.group = static_cast<int32_t>(next(2));
        collective.stage = 0;
        add(collective);
      }
    CheckedOrder checked(rank.schedule);
    const StreamOrder &order = checked.order;
    const bool ordered = checked.clean;
    (ordered ? clean : violated) += 1;
    const Z3Answer want = ordered ? Z3Answer::Sat : Z3Answer::Unsat;
    std::string whyNot;
    const std::optional<StreamRule> full = order.rule(0, whyNot);
    ASSERT_TRUE(full) << whyNot;
    ASSERT_FALSE(full->sparse);
    const std::optional<StreamRule> sparse =
        order.rule(0, whyNot, /*limit=*/0);
    ASSERT_TRUE(sparse) << whyNot;
    ASSERT_TRUE(sparse->sparse);
    EXPECT_NE(sparse->description.find("sparse form"), std::string::npos);
    EXPECT_EQ(answer(*full, /*ground=*/false), want) << "program " << program;
    EXPECT_EQ(answer(*sparse, /*ground=*/false), want)
        << "program " << program << " (sparse form)";
    EXPECT_EQ(answer(*sparse, /*ground=*/true), want)
        << "program " << program << " (sparse form, evaluated)";
    // Past both limits: no rule, and why.
    EXPECT_FALSE(order.rule(0, whyNot, 0, 0));
    EXPECT_NE(whyNot.find("in its sparse form, more than the 0 that form "
                          "states"),
              std::string::npos)
        << whyNot;
  }
  // Both answers occur, so the comparison can fail either way.
  EXPECT_GT(clean, 0);
  EXPECT_GT(violated, 0);
}
