//===- Z3ResourceLimitTest.cpp - Z3's budget in resource units ------------===//
//
// A proof's budget in Z3's resource units (its `rlimit` count) decides the
// same way on every machine and under any load: a solve past its limit is
// unknown, every time, and one within it decides; the verifier's queries
// share one budget; the planner reports a recommendation whose proof ran
// out as unknown, never verified. No clock is involved: every solve below
// runs without a time limit.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/Strategy.h"
#include "lib/Lower/InsertTransfers.h"
#include "lib/Planner/Planner.h"
#include "lib/Verify/Verifier.h"
#include "lib/Verify/Z3/Z3Prover.h"
#include "test/unit/Z3QueryTestSupport.h"

#include "llvm/ADT/StringRef.h"
#include "gtest/gtest.h"

using namespace sched;
using namespace sched::test;

namespace {

TEST(Z3ResourceLimit, ASolvePastItsLimitIsUnknownEveryTime) {
  const Z3Outcome unlimited = solveWithZ3(cycle(500), 0);
  ASSERT_EQ(unlimited.answer, Z3Answer::Unsat);
  ASSERT_GT(unlimited.resources, 1'000u);
  // The count is the work, not the time: the same query counts about the
  // same (a reused context's tables shift it by a few units in 10^5).
  const Z3Outcome again = solveWithZ3(cycle(500), 0);
  EXPECT_LT(again.resources, unlimited.resources * 1.01);
  EXPECT_GT(again.resources, unlimited.resources * 0.99);
  const uint64_t half = unlimited.resources / 2;
  for (int run = 0; run < 3; ++run) {
    const Z3Outcome stopped = solveWithZ3(cycle(500), 0, half);
    EXPECT_EQ(stopped.answer, Z3Answer::Unknown);
    EXPECT_EQ(stopped.reason,
              "resource limit of " + std::to_string(half) + " units reached");
    const Z3Outcome tiny = solveWithZ3(cycle(500), 0, 1);
    EXPECT_EQ(tiny.answer, Z3Answer::Unknown);
    EXPECT_EQ(tiny.reason, "resource limit of 1 units reached");
    EXPECT_EQ(solveWithZ3(cycle(500), 0, 2 * unlimited.resources).answer,
              Z3Answer::Unsat);
  }
}

TEST(Z3ResourceLimit, TheSimplifiersWorkCounts) {
  // The witness check is decided by Z3's simplifier, which takes no limit
  // of its own: its work is counted once it ran.
  const Z3Outcome unlimited = solveWithZ3(chainWithWitness(20'000), 0);
  ASSERT_EQ(unlimited.answer, Z3Answer::Sat);
  ASSERT_GT(unlimited.resources, 1'000u);
  const Z3Outcome stopped = solveWithZ3(chainWithWitness(20'000), 0, 1'000);
  EXPECT_EQ(stopped.answer, Z3Answer::Unknown);
  EXPECT_EQ(stopped.reason, "resource limit of 1000 units reached");
  EXPECT_EQ(
      solveWithZ3(chainWithWitness(20'000), 0, 2 * unlimited.resources).answer,
      Z3Answer::Sat);
}

/// Node i at time i, an edge from each node to the next and from node 0 to
/// every other: the candidate check's chunks (16,384 distinct edges each)
/// meet times 0 and n - 1 again after the chunks that made their numerals
/// were freed; `backEdge` adds n - 1 -> 0, which the candidate breaks.
Z3Query fanWithWitness(uint32_t n, bool backEdge) {
  Z3Query query = chainWithWitness(n);
  for (uint32_t i = 2; i < n; ++i)
    query.edges.emplace_back(0, i);
  if (backEdge)
    query.edges.emplace_back(n - 1, 0);
  return query;
}

TEST(Z3ResourceLimit, TheWitnessCheckMakesNumeralsAgainAcrossChunks) {
  const Z3Outcome holds = solveWithZ3(fanWithWitness(40'000, false), 0);
  EXPECT_EQ(holds.answer, Z3Answer::Sat) << holds.reason;
  const Z3Outcome broken = solveWithZ3(fanWithWitness(40'000, true), 0);
  EXPECT_EQ(broken.answer, Z3Answer::Unsat) << broken.reason;
  // The count depends on the constraints alone, not on which numerals
  // were made before.
  const Z3Outcome again = solveWithZ3(fanWithWitness(40'000, false), 0);
  EXPECT_LT(again.resources, holds.resources * 1.01);
  EXPECT_GT(again.resources, holds.resources * 0.99);
}

/// Lowered 1F1B on 4 ranks with 8 microbatches.
Schedule loweredOneFOneB() {
  PipelineShape shape;
  shape.pp = 4;
  shape.microbatches = 8;
  llvm::Expected<Schedule> compute =
      generateSchedule(Strategy::OneFOneB, shape);
  EXPECT_TRUE(static_cast<bool>(compute));
  llvm::Expected<Schedule> lowered = insertTransfers(*compute);
  EXPECT_TRUE(static_cast<bool>(lowered));
  return std::move(*lowered);
}

TEST(Z3ResourceLimit, TheVerifierCountsEveryQuery) {
  const Schedule schedule = loweredOneFOneB();
  VerifyOptions options;
  const VerifyResult unlimited = verifySchedule(schedule, options);
  ASSERT_EQ(unlimited.verdict, Verdict::Verified) << unlimited.unknownReason;
  ASSERT_GT(unlimited.z3Resources, 0u);
  options.resourceLimit = 2 * unlimited.z3Resources;
  EXPECT_EQ(verifySchedule(schedule, options).verdict, Verdict::Verified);
  for (uint64_t limit : {uint64_t{1}, unlimited.z3Resources / 2}) {
    options.resourceLimit = limit;
    const VerifyResult stopped = verifySchedule(schedule, options);
    EXPECT_EQ(stopped.verdict, Verdict::Unknown);
    EXPECT_EQ(stopped.unknownReason, "Z3 could not decide: resource limit of " +
                                         std::to_string(limit) +
                                         " units reached");
  }
}

TEST(Z3ResourceLimit, ThePlannerReportsAnUnprovedRecommendation) {
  std::optional<ModelSpec> model = modelPreset("llama3-8b");
  std::optional<ClusterSpec> cluster = clusterPreset("h100-ib");
  ASSERT_TRUE(model && cluster);
  TrainingSpec training;
  training.devices = 16;
  training.seqLen = model->seqLen;
  training.globalBatchTokens = 64 * model->seqLen;
  CostModel costs(*model, *cluster, training);
  PlanOptions options;
  options.top = 1;
  Layout layout;
  layout.dp = 4;
  layout.pp = 4;
  options.layout = layout;
  options.strategy = Strategy::OneFOneB;
  llvm::Expected<PlanResult> proved = plan(costs, options);
  ASSERT_TRUE(static_cast<bool>(proved)) << llvm::toString(proved.takeError());
  ASSERT_GE(proved->recommended, 0);
  const Candidate &recommended = proved->ranked[proved->recommended];
  EXPECT_EQ(recommended.verdict, "verified");
  EXPECT_GT(recommended.proofResources, 0u);
  // The default is far above what this proof spends.
  EXPECT_GT(kProofResourceLimit, 50 * recommended.proofResources);

  options.proofResourceLimit = 1;
  for (int run = 0; run < 3; ++run) {
    llvm::Expected<PlanResult> stopped = plan(costs, options);
    ASSERT_TRUE(static_cast<bool>(stopped))
        << llvm::toString(stopped.takeError());
    ASSERT_EQ(stopped->ranked.size(), 1u);
    EXPECT_EQ(stopped->ranked.front().verdict,
              "unknown: Z3 could not decide: resource limit of 1 units "
              "reached");
  }
}

} // namespace
