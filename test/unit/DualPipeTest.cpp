//===- DualPipeTest.cpp - the bidirectional DualPipe over a grid ----------===//
//
// DeepSeek's DualPipe: two replicas on P ranks, replica A's stage k on rank
// k, replica B's (schedule stage P + k) on rank P-1-k, each replica running
// half of the microbatches. Over P in {2, 4, 6, 8, 16} and every even M
// from 2P to 4P + 2: every (stage, microbatch) of a replica runs exactly
// once, the order runs under uneven costs, and with unit costs the
// makespan, bubble, peak and overlap count equal the closed forms derived
// in docs/schedules.md. Shapes outside DeepSeek's rules are refused with
// the rule named.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/Strategy.h"
#include "lib/Simulate/Simulate.h"
#include "test/unit/StrategyTestSupport.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

#include <algorithm>

using namespace sched;
using sched::test::describe;
using sched::test::errorOf;
using sched::test::makeShape;

namespace {

/// The rank that holds schedule stage `stage` of DualPipe over `pp` ranks.
int32_t dualPipeRank(int32_t pp, int32_t stage) {
  return stage < pp ? stage : 2 * pp - 1 - stage;
}

/// Checks that each microbatch of each replica runs one F and one backward
/// (a B, or an I and a W) at every stage of its replica and nowhere else,
/// on the rank that holds the stage.
void expectReplicasComplete(const Schedule &schedule, int32_t pp, int32_t m) {
  ASSERT_EQ(schedule.numStages, 2 * pp);
  ASSERT_EQ(schedule.replicas, 2);
  ASSERT_EQ(schedule.numMicrobatches, m);
  ASSERT_EQ(static_cast<int32_t>(schedule.ranks.size()), pp);
  llvm::DenseMap<std::pair<int32_t, int32_t>, int32_t> forwards, inputs,
      weights;
  for (const RankProgram &rank : schedule.ranks)
    for (const Action &a : rank.actions) {
      ASSERT_TRUE(isCompute(a.kind));
      ASSERT_EQ(dualPipeRank(pp, a.stage), rank.id)
          << actionLabel(a, /*withStage=*/true);
      // Replica A (stages below P) runs the first half of the microbatches.
      ASSERT_EQ(a.stage < pp, a.microbatch < m / 2)
          << actionLabel(a, /*withStage=*/true);
      const std::pair<int32_t, int32_t> key{a.stage, a.microbatch};
      if (a.kind == ActionKind::Forward)
        ++forwards[key];
      if (a.kind != ActionKind::Forward && a.kind != ActionKind::BackwardWeight)
        ++inputs[key];
      if (a.kind == ActionKind::Backward ||
          a.kind == ActionKind::BackwardWeight)
        ++weights[key];
    }
  for (int32_t stage = 0; stage < 2 * pp; ++stage)
    for (int32_t k = 0; k < m / 2; ++k) {
      const int32_t mb = (stage < pp ? 0 : m / 2) + k;
      SCOPED_TRACE(llvm::formatv("stage {0} mb {1}", stage, mb).str());
      EXPECT_EQ(forwards.lookup({stage, mb}), 1);
      EXPECT_EQ(inputs.lookup({stage, mb}), 1);
      EXPECT_EQ(weights.lookup({stage, mb}), 1);
    }
}

int32_t overlaps(const Schedule &schedule) {
  int32_t count = 0;
  for (const RankProgram &rank : schedule.ranks)
    count += static_cast<int32_t>(test::overlapStarts(rank.actions).size());
  return count;
}

TEST(DualPipe, ShapeRules) {
  EXPECT_EQ(errorOf(Strategy::DualPipe, makeShape(3, 1, 6)),
            "strategy dualpipe needs an even pp (half the ranks feed each "
            "replica), got pp = 3");
  EXPECT_EQ(errorOf(Strategy::DualPipe, makeShape(4, 1, 9)),
            "strategy dualpipe needs an even number of microbatches, at least "
            "2 pp = 8 (half go down each replica), got 9");
  EXPECT_EQ(errorOf(Strategy::DualPipe, makeShape(4, 1, 6)),
            "strategy dualpipe needs an even number of microbatches, at least "
            "2 pp = 8 (half go down each replica), got 6");
  EXPECT_EQ(
      errorOf(Strategy::DualPipe, makeShape(4, 2, 8)),
      "strategy dualpipe needs vpp = 1 (one stage per rank), got vpp = 2");
  EXPECT_EQ(errorOf(Strategy::DualPipe, makeShape(2, 1, 4)), "");
}

TEST(DualPipe, Grid) {
  for (int32_t pp : {2, 4, 6, 8, 16})
    for (int32_t m = 2 * pp; m <= 4 * pp + 2; m += 2) {
      const PipelineShape shape = makeShape(pp, 1, m);
      SCOPED_TRACE(describe(Strategy::DualPipe, shape));
      llvm::Expected<Schedule> schedule =
          generateSchedule(Strategy::DualPipe, shape);
      ASSERT_TRUE(static_cast<bool>(schedule))
          << llvm::toString(schedule.takeError());
      expectReplicasComplete(*schedule, pp, m);

      Schedule uneven = *schedule;
      for (int32_t s = 0; s < 2 * pp; ++s)
        uneven.stageCosts.push_back({/*forward=*/1.0 + s % 3,
                                     /*backwardInput=*/2.0,
                                     /*backwardWeight=*/0.5});
      llvm::Expected<Timeline> skewed = simulate(uneven, {});
      EXPECT_TRUE(static_cast<bool>(skewed))
          << llvm::toString(skewed.takeError());

      llvm::Expected<Timeline> timeline = simulate(*schedule, {});
      ASSERT_TRUE(static_cast<bool>(timeline))
          << llvm::toString(timeline.takeError());
      // Each rank computes M/2 microbatches at each of its two stages, 3M
      // in all; DeepSeek's bubble (P/2 - 1)(T_F&B + T_B - 3 T_W) with an
      // overlap costing T_F + T_B = 3, T_B = 2 and T_W = 1 is P - 2 on
      // every rank.
      const double bubble = pp - 2;
      EXPECT_DOUBLE_EQ(timeline->makespan, 3.0 * m + bubble);
      for (double busy : timeline->busy)
        EXPECT_DOUBLE_EQ(busy, 3.0 * m);
      // DeepSeek's peak: P + 1 rank-worths of activations (a stage is one).
      for (double peak : timeline->peakActivations)
        EXPECT_DOUBLE_EQ(peak, pp + 1);
      // Rank r (h = min(r, P-1-r)) overlaps twice per step of phase 4
      // (M/2 - P + h + 1 of them), less one on the two middle ranks, and
      // once per step of phase 5 (P/2 - h - 1): summed over both ranks of
      // each h, P (M - 3P/2 + 1) + (P/2)(P/2 - 1) - 2.
      EXPECT_EQ(overlaps(*schedule),
                pp * (m - 3 * pp / 2 + 1) + (pp / 2) * (pp / 2 - 1) - 2);
    }
}

} // namespace
