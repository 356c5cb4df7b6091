//===- Z3WitnessCheckTest.cpp - the ground check of a candidate -----------===//
//
// The witness check states each constraint over the candidate's numerals:
// memory steps that repeat the numerals of another are given to Z3 once,
// and a structural rule's attributes are the numerals themselves. Neither
// may change a verdict: each query below is answered by the ground check
// and by Z3's search over the open encoding (the witness cleared), and a
// candidate broken at one repeated step, one value over the limit, or one
// attribute is refused by both.
//
//===----------------------------------------------------------------------===//

#include "lib/Verify/Z3/Z3Prover.h"
#include "test/unit/Z3QueryTestSupport.h"

#include "gtest/gtest.h"

using namespace sched;
using namespace sched::test;

namespace {

/// One rank whose memory rises by 3 and falls by 3, `cycles` times
/// (values 3, 0, 3, 0, ...): 2 * cycles steps over two distinct levels,
/// with a chain of as many nodes and its times as the witness.
Z3Query oscillation(size_t cycles) {
  Z3Query query = chainWithWitness(static_cast<uint32_t>(2 * cycles));
  MemoryChain chain;
  for (size_t k = 0; k < cycles; ++k) {
    chain.steps.push_back(3);
    chain.values.push_back(3);
    chain.positions.push_back(static_cast<int32_t>(2 * k));
    chain.steps.push_back(-3);
    chain.values.push_back(0);
    chain.positions.push_back(static_cast<int32_t>(2 * k + 1));
  }
  query.chains.push_back(chain);
  query.limit = 3;
  return query;
}

/// Z3's search over `query`'s open encoding.
Z3Answer searched(Z3Query query) {
  query.witness.clear();
  return solveWithZ3(query, 0).answer;
}

TEST(Z3WitnessCheck, RepeatedMemoryStepsDecideAsEveryStep) {
  const Z3Query holds = oscillation(1'000);
  const Z3Outcome checked = solveWithZ3(holds, 0);
  EXPECT_EQ(checked.answer, Z3Answer::Sat) << checked.reason;
  EXPECT_EQ(searched(holds), Z3Answer::Sat);
  // Two distinct steps, (0, 3, +3) and (3, 0, -3), and two distinct
  // values: four memory constraints besides the distinct edges (each edge
  // i -> i + 1 has its own pair of times). 2,000 steps used to state
  // 4,000.
  EXPECT_EQ(checked.constraints, holds.edges.size() + 4);
  // Every step counts as an unknown the check decides.
  EXPECT_EQ(checked.variables, holds.numNodes + 2'000);
}

TEST(Z3WitnessCheck, OneWrongRepeatedStepIsRefused) {
  // The 600th fall claims 0 after a step of -2: a candidate value that
  // is not the sum of its steps, among 999 right ones of the same
  // numerals.
  Z3Query wrong = oscillation(1'000);
  wrong.chains[0].steps[1'199] = -2;
  EXPECT_EQ(solveWithZ3(wrong, 0).answer, Z3Answer::Unsat);
  // The open encoding takes the steps, not the values: -2 leaves 1 after
  // that step, and the next rise passes the limit.
  EXPECT_EQ(searched(wrong), Z3Answer::Unsat);
}

TEST(Z3WitnessCheck, OneValueOverTheLimitIsRefused) {
  // The last rise goes to 4 (steps and values agree) against a limit of 3.
  Z3Query over = oscillation(1'000);
  over.chains[0].steps[1'998] = 4;
  over.chains[0].values[1'998] = 4;
  over.chains[0].steps[1'999] = -4;
  EXPECT_EQ(solveWithZ3(over, 0).answer, Z3Answer::Unsat);
  EXPECT_EQ(searched(over), Z3Answer::Unsat);
  over.limit = 4;
  EXPECT_EQ(solveWithZ3(over, 0).answer, Z3Answer::Sat);
  EXPECT_EQ(searched(over), Z3Answer::Sat);
}

/// Three forwards of stage 1 and a backward, counted: exactly
/// `required` forwards of stage 1.
Z3Query forwardsOfStageOne(int64_t required) {
  Z3Query query = oscillation(2);
  CountRule rule;
  rule.description = "forwards of stage 1";
  rule.kind = 0;
  rule.stage = 1;
  rule.required = required;
  rule.actions = {{0, 1, 0, -1}, {0, 1, 1, -1}, {0, 1, 2, -1}, {1, 1, 0, -1}};
  query.counts.push_back(rule);
  RangeRule range;
  range.description = "stage and microbatch in range";
  range.stage = 1;
  range.microbatch = 2;
  range.hasMicrobatch = true;
  range.stages = 2;
  range.microbatches = 3;
  query.ranges.push_back(range);
  return query;
}

TEST(Z3WitnessCheck, RulesOverNumeralsDecideAsOverConstants) {
  for (int64_t required : {2, 3, 4}) {
    const Z3Query query = forwardsOfStageOne(required);
    const Z3Answer expected = required == 3 ? Z3Answer::Sat : Z3Answer::Unsat;
    EXPECT_EQ(solveWithZ3(query, 0).answer, expected) << required;
    EXPECT_EQ(searched(query), expected) << required;
  }
  // A microbatch out of its range.
  Z3Query outside = forwardsOfStageOne(3);
  outside.ranges[0].microbatch = 3;
  EXPECT_EQ(solveWithZ3(outside, 0).answer, Z3Answer::Unsat);
  EXPECT_EQ(searched(outside), Z3Answer::Unsat);
}

} // namespace
