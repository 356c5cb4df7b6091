//===- StrategyGridTest.cpp - strategies over a grid of pipeline shapes ---===//
//
// Interleaved 1F1B, looped BFS, ZB-H1, ZB-H2 and interleaved combined 1F1B
// over P in {2, 3, 4, 8, 16}, vpp in {2, 3, 4} where the strategy takes it,
// M = 1 .. 4P (combined 1F1B: P = 1, M = 1 .. 16): every schedule
// is complete, runs to the end in the simulator (under any costs) and hits
// the closed forms derived in docs/schedules.md, with unit stage costs
// (T_F = T_I = T_W = 1, T_B = 2).
//
//===----------------------------------------------------------------------===//

#include "test/unit/StrategyTestSupport.h"
#include "lib/Generate/Strategy.h"
#include "lib/Simulate/Simulate.h"
#include "lib/Verify/Verifier.h"

#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

#include <algorithm>

using namespace sched;
using sched::test::describe;
using sched::test::errorOf;
using sched::test::makeShape;

namespace {

constexpr int32_t kPipelineRanks[] = {2, 3, 4, 8, 16};
constexpr int32_t kStagesPerRank[] = {2, 3, 4};

/// Loop placement; `split`: I and W instead of B.
Timeline generateAndSimulate(Strategy strategy, const PipelineShape &shape,
                             bool split) {
  return test::generateAndSimulate(
      strategy, shape, StagePlacement::Loop,
      split ? test::BackwardForm::Split : test::BackwardForm::Full);
}

/// Idle time of rank `r` between its own first and last action.
double spanIdle(const Timeline &timeline, size_t r) {
  const std::vector<ActionTime> &times = timeline.times[r];
  return times.back().end - times.front().start - timeline.busy[r];
}

/// Makespan of interleaved 1F1B and looped BFS with unit stage costs:
/// 3(M v + P - 1) for M >= P (the 1F1B bubble divided by v), and
/// 3(P v + M - 1) for M < P, the first microbatch's round trip through all
/// P v stages plus 3 per further microbatch.
double loopedMakespan(int32_t pp, int32_t vpp, int32_t m) {
  return 3.0 * (std::max(m, pp) * vpp + std::min(m, pp) - 1);
}

/// The largest microbatch group of interleaved 1F1B: max(1, M/P) groups as
/// even as possible.
int32_t largestGroup(int32_t pp, int32_t m) {
  const int32_t groups = std::max(1, m / pp);
  return (m + groups - 1) / groups;
}

/// Makespan of ZB-H1 and ZB-H2 with unit costs: 3M + P - 1 for M >= P (the
/// bubble (P-1)(T_F + T_I - T_W) = P - 1), 2M + 2P - 1 for M < P (the last
/// rank's M forwards and I, then P - 1 more I down the ranks and one W).
double zeroBubbleMakespan(int32_t pp, int32_t m) {
  return m >= pp ? 3.0 * m + pp - 1 : 2.0 * m + 2 * pp - 1;
}


//===----------------------------------------------------------------------===//
// Interleaved 1F1B
//===----------------------------------------------------------------------===//

TEST(StrategyGrid, InterleavedMegatronReference) {
  // SCHEDULES.md: P = 4, v = 2, M = 8, per-stage T_F = 1, T_B = 2.
  Timeline timeline =
      generateAndSimulate(Strategy::Interleaved1F1B, makeShape(4, 2, 8), false);
  EXPECT_DOUBLE_EQ(timeline.makespan, 57);
  ASSERT_EQ(timeline.peakActivations.size(), 4u);
  EXPECT_DOUBLE_EQ(timeline.peakActivations[0], 11);
  // The bubble is (P-1)(T_F + T_B)/v with per-rank costs 2 and 4.
  for (double busy : timeline.busy)
    EXPECT_DOUBLE_EQ(timeline.makespan - busy, 9);
}

TEST(StrategyGrid, InterleavedOneFOneB) {
  for (int32_t pp : kPipelineRanks)
    for (int32_t vpp : kStagesPerRank)
      for (int32_t m = 1; m <= 4 * pp; ++m) {
        const PipelineShape shape = makeShape(pp, vpp, m);
        SCOPED_TRACE(describe(shape));
        Timeline timeline =
            generateAndSimulate(Strategy::Interleaved1F1B, shape, false);
        if (timeline.peakActivations.empty())
          continue;
        EXPECT_DOUBLE_EQ(timeline.makespan, loopedMakespan(pp, vpp, m));
        // Never worse than 1F1B over P stages v times as large.
        EXPECT_LE(timeline.makespan, 3.0 * vpp * (m + pp - 1));
        const int32_t group = largestGroup(pp, m);
        for (int32_t r = 0; r < pp; ++r)
          EXPECT_DOUBLE_EQ(
              timeline.peakActivations[r],
              std::min(m * vpp, 2 * (pp - 1 - r) + (vpp - 1) * group + 1))
              << "rank " << r;
        // Megatron's groups of P when P divides M: its closed form.
        if (m % pp == 0) {
          EXPECT_DOUBLE_EQ(
              timeline.peakActivations[0],
              std::min(m * vpp, 2 * (pp - 1) + (vpp - 1) * pp + 1));
        }
      }
}

//===----------------------------------------------------------------------===//
// Looped BFS
//===----------------------------------------------------------------------===//

TEST(StrategyGrid, LoopedBFS) {
  for (int32_t pp : kPipelineRanks)
    for (int32_t vpp : kStagesPerRank)
      for (int32_t m = 1; m <= 4 * pp; ++m) {
        const PipelineShape shape = makeShape(pp, vpp, m);
        SCOPED_TRACE(describe(shape));
        Timeline timeline =
            generateAndSimulate(Strategy::LoopedBFS, shape, false);
        if (timeline.peakActivations.empty())
          continue;
        EXPECT_DOUBLE_EQ(timeline.makespan, loopedMakespan(pp, vpp, m));
        llvm::Expected<Schedule> interleaved =
            generateSchedule(Strategy::Interleaved1F1B, shape);
        ASSERT_TRUE(static_cast<bool>(interleaved));
        llvm::Expected<Timeline> reference = simulate(*interleaved, {});
        ASSERT_TRUE(static_cast<bool>(reference));
        EXPECT_LE(timeline.makespan, reference->makespan);
        for (double peak : timeline.peakActivations)
          EXPECT_DOUBLE_EQ(peak, m * vpp);
      }
}

//===----------------------------------------------------------------------===//
// ZB-H1 and ZB-H2
//===----------------------------------------------------------------------===//

TEST(StrategyGrid, ZBH1) {
  for (int32_t pp : kPipelineRanks)
    for (int32_t m = 1; m <= 4 * pp; ++m) {
      const PipelineShape shape = makeShape(pp, 1, m);
      SCOPED_TRACE(describe(shape));
      Timeline timeline = generateAndSimulate(Strategy::ZBH1, shape, true);
      if (timeline.peakActivations.empty())
        continue;
      EXPECT_DOUBLE_EQ(timeline.makespan, zeroBubbleMakespan(pp, m));
      EXPECT_DOUBLE_EQ(timeline.peakActivations[0], std::min(pp, m));
      for (int32_t r = 0; r < pp; ++r) {
        EXPECT_LE(timeline.peakActivations[r], std::min(pp, m));
        if (m < pp)
          continue;
        // (P-1)(T_F + T_I - T_W) idle on every rank.
        EXPECT_DOUBLE_EQ(timeline.makespan - timeline.busy[r], pp - 1);
        // P - r forwards in flight and r waiting W at half an activation.
        EXPECT_DOUBLE_EQ(timeline.peakActivations[r], pp - 0.5 * r);
      }
    }
}

TEST(StrategyGrid, ZBH2) {
  for (int32_t pp : kPipelineRanks)
    for (int32_t m = 1; m <= 4 * pp; ++m) {
      const PipelineShape shape = makeShape(pp, 1, m);
      SCOPED_TRACE(describe(shape));
      Timeline timeline = generateAndSimulate(Strategy::ZBH2, shape, true);
      if (timeline.peakActivations.empty())
        continue;
      // The same makespan as ZB-H1: P - 1 is the least any schedule can
      // have, the time the first forward takes to reach the last rank.
      EXPECT_DOUBLE_EQ(timeline.makespan, zeroBubbleMakespan(pp, m));
      EXPECT_DOUBLE_EQ(timeline.peakActivations[0], std::min(2 * pp - 1, m));
      for (int32_t r = 0; r < pp; ++r) {
        EXPECT_LE(timeline.peakActivations[r], std::min(2 * pp - 1, m));
        if (m < 2 * pp - 1)
          continue;
        // Zero bubble: no rank idles between its first and last action.
        EXPECT_DOUBLE_EQ(spanIdle(timeline, r), 0) << "rank " << r;
        // 2(P-1-r)+1 forwards in flight and 2r waiting W at half an
        // activation.
        EXPECT_DOUBLE_EQ(timeline.peakActivations[r], 2 * pp - 1 - r);
      }
    }
}

TEST(StrategyGrid, ZeroBubbleFormulasUnderOtherCosts) {
  struct Costs {
    double f, i, w;
  };
  for (Costs c :
       {Costs{1, 2, 1}, Costs{1, 1, 0.5}, Costs{2, 1, 1}, Costs{1, 1.5, 0.5}})
    for (int32_t pp : {2, 4, 8}) {
      PipelineShape shape = makeShape(pp, 1, 4 * pp);
      shape.stageCosts.assign(pp, StageCost{c.f, c.i, c.w});
      SCOPED_TRACE(llvm::formatv("{0} T_F={1} T_I={2} T_W={3}", describe(shape),
                                 c.f, c.i, c.w)
                       .str());
      const double work = shape.microbatches * (c.f + c.i + c.w);
      llvm::Expected<Schedule> h1 = generateSchedule(Strategy::ZBH1, shape);
      llvm::Expected<Schedule> h2 = generateSchedule(Strategy::ZBH2, shape);
      ASSERT_TRUE(h1 && h2);
      llvm::Expected<Timeline> t1 = simulate(*h1, {});
      llvm::Expected<Timeline> t2 = simulate(*h2, {});
      ASSERT_TRUE(t1 && t2);
      EXPECT_DOUBLE_EQ(t1->makespan - work, (pp - 1) * (c.f + c.i - c.w));
      // ZB-H2's formula is the idle inside each rank's own span; the
      // makespan adds the skew of at least (P-1) T_F.
      double worstSpan = 0;
      for (size_t r = 0; r < t2->times.size(); ++r)
        worstSpan = std::max(worstSpan, spanIdle(*t2, r));
      EXPECT_DOUBLE_EQ(worstSpan, (pp - 1) * (c.f + c.i - 2 * c.w));
      EXPECT_LE(t2->makespan, t1->makespan);
      EXPECT_GE(t2->makespan - work, (pp - 1) * c.f);
    }
}

//===----------------------------------------------------------------------===//
// Combined 1F1B
//===----------------------------------------------------------------------===//

/// The compute actions of `actions` of `kind`, as (stage, microbatch), in
/// order.
std::vector<std::pair<int32_t, int32_t>>
unitsOf(const std::vector<Action> &actions, ActionKind kind) {
  std::vector<std::pair<int32_t, int32_t>> units;
  for (const Action &action : actions)
    if (action.kind == kind)
      units.emplace_back(action.stage, action.microbatch);
  return units;
}

TEST(StrategyGrid, CombinedOneFOneB) {
  for (int32_t m = 1; m <= 16; ++m) {
    const PipelineShape shape = makeShape(1, 1, m);
    SCOPED_TRACE(describe(shape));
    Schedule schedule;
    Timeline timeline = test::generateAndSimulate(
        Strategy::Combined1F1B, shape, StagePlacement::Loop,
        test::BackwardForm::Full, &schedule);
    ASSERT_EQ(timeline.peakActivations.size(), 1u);
    // No bubble; microbatch i + 1 is alive beside microbatch i.
    EXPECT_DOUBLE_EQ(timeline.makespan, 3.0 * m);
    EXPECT_DOUBLE_EQ(timeline.peakActivations[0], std::min(m, 2));
    // F(0) alone, F(i + 1) beside B(i), B(M - 1) alone.
    const std::vector<Action> &actions = schedule.ranks[0].actions;
    ASSERT_EQ(actions.size(), size_t(2 * m));
    EXPECT_EQ(actions.front().bundle, 0u);
    EXPECT_EQ(actions.back().bundle, 0u);
    const std::vector<size_t> overlaps = test::overlapStarts(actions);
    ASSERT_EQ(overlaps.size(), size_t(m - 1));
    for (int32_t i = 0; i + 1 < m; ++i) {
      const Action &forward = actions[overlaps[i]];
      const Action &backward = actions[overlaps[i] + 1];
      EXPECT_EQ(overlaps[i], size_t(2 * i + 1));
      EXPECT_EQ(forward.microbatch, i + 1);
      EXPECT_EQ(backward.microbatch, i);
    }
  }
}

TEST(StrategyGrid, InterleavedCombinedOneFOneB) {
  for (int32_t pp : kPipelineRanks)
    for (int32_t vpp : kStagesPerRank)
      for (int32_t m = 1; m <= 4 * pp; ++m) {
        const PipelineShape shape = makeShape(pp, vpp, m);
        SCOPED_TRACE(describe(shape));
        Schedule combined;
        Timeline timeline = test::generateAndSimulate(
            Strategy::InterleavedCombined1F1B, shape, StagePlacement::Loop,
            test::BackwardForm::Full, &combined);
        if (timeline.peakActivations.empty())
          continue;
        // The list simulation charges an overlap F + B and has no
        // all-to-all to hide: the extra warm-up forward fills the wait for
        // the first backward, and the makespan is interleaved 1F1B's.
        EXPECT_DOUBLE_EQ(timeline.makespan, loopedMakespan(pp, vpp, m));
        llvm::Expected<Schedule> interleaved =
            generateSchedule(Strategy::Interleaved1F1B, shape);
        ASSERT_TRUE(static_cast<bool>(interleaved));
        const int32_t group = largestGroup(pp, m);
        for (int32_t r = 0; r < pp; ++r) {
          SCOPED_TRACE(llvm::formatv("rank {0}", r).str());
          // One warm-up forward more than interleaved 1F1B, one stage
          // activation more at the peak.
          const int32_t warmup =
              std::min(m * vpp, 2 * (pp - 1 - r) + (vpp - 1) * group + 1);
          EXPECT_DOUBLE_EQ(timeline.peakActivations[r],
                           std::min(m * vpp, warmup + 1));
          // The same forwards and backwards in the same order ...
          const std::vector<Action> &actions = combined.ranks[r].actions;
          const std::vector<Action> &reference = interleaved->ranks[r].actions;
          EXPECT_EQ(unitsOf(actions, ActionKind::Forward),
                    unitsOf(reference, ActionKind::Forward));
          EXPECT_EQ(unitsOf(actions, ActionKind::Backward),
                    unitsOf(reference, ActionKind::Backward));
          // ... the warm-up alone, then every remaining forward beside a
          // backward, then the remaining backwards alone.
          const std::vector<size_t> overlaps = test::overlapStarts(actions);
          ASSERT_EQ(overlaps.size(), size_t(m * vpp - warmup));
          for (size_t k = 0; k < overlaps.size(); ++k)
            EXPECT_EQ(overlaps[k], warmup + 2 * k);
        }
      }
}

TEST(StrategyGrid, CombinedPairsNeedTheExtraWarmupForward) {
  // Interleaved 1F1B's own steady pairs, each made an overlap: on the last
  // rank the first pair is F and B of stage 7 microbatch 0, the backward
  // needing the forward beside it. Megatron-Core's extra warm-up forward
  // is what interleaved-combined-1f1b adds against that.
  llvm::Expected<Schedule> schedule =
      generateSchedule(Strategy::Interleaved1F1B, makeShape(4, 2, 8));
  ASSERT_TRUE(static_cast<bool>(schedule));
  for (int32_t r = 0; r < 4; ++r) {
    std::vector<Action> &actions = schedule->ranks[r].actions;
    // 2(P-1-r) + (v-1)P warm-up forwards, then F, B pairs until the
    // M v = 16 forwards are out.
    const uint32_t warmup = 2 * (3 - r) + 4;
    for (uint32_t k = 0; warmup + k < 16; ++k) {
      Action &forward = actions[warmup + 2 * k];
      Action &backward = actions[warmup + 2 * k + 1];
      ASSERT_EQ(forward.kind, ActionKind::Forward);
      ASSERT_EQ(backward.kind, ActionKind::Backward);
      forward.bundle = backward.bundle = k + 1;
    }
  }
  VerifyResult result = verifySchedule(*schedule, {});
  ASSERT_EQ(result.verdict, Verdict::Violated);
  EXPECT_EQ(result.violations.front().message,
            "B(stage 7, mb 0) runs together with F(stage 7, mb 0) on rank 3, "
            "but needs its output");
}

//===----------------------------------------------------------------------===//
// Shape rules and names
//===----------------------------------------------------------------------===//

TEST(StrategyGrid, RejectsShapesOutsideTheRules) {
  for (Strategy strategy : {Strategy::Interleaved1F1B, Strategy::LoopedBFS}) {
    const std::string name = strategyName(strategy).str();
    EXPECT_EQ(errorOf(strategy, makeShape(4, 1, 8)),
              "strategy " + name + " needs vpp >= 2, got vpp = 1");
    PipelineShape vShape = makeShape(4, 2, 8);
    vShape.placement = StagePlacement::V;
    EXPECT_EQ(errorOf(strategy, vShape),
              "strategy " + name +
                  " needs loop placement (stage s on rank s mod pp), got "
                  "placement v");
  }
  for (Strategy strategy : {Strategy::ZBH1, Strategy::ZBH2})
    EXPECT_EQ(errorOf(strategy, makeShape(4, 2, 8)),
              "strategy " + strategyName(strategy).str() +
                  " needs vpp = 1 (one stage per rank), got vpp = 2");
  EXPECT_EQ(errorOf(Strategy::Combined1F1B, makeShape(2, 1, 8)),
            "strategy combined-1f1b needs pp = 1 (a single pipeline stage), "
            "got pp = 2");
  EXPECT_EQ(errorOf(Strategy::Combined1F1B, makeShape(1, 2, 8)),
            "strategy combined-1f1b needs vpp = 1 (one stage per rank), got "
            "vpp = 2");
  EXPECT_EQ(errorOf(Strategy::InterleavedCombined1F1B, makeShape(4, 1, 8)),
            "strategy interleaved-combined-1f1b needs vpp >= 2, got vpp = 1");
  PipelineShape vShape = makeShape(4, 2, 8);
  vShape.placement = StagePlacement::V;
  EXPECT_EQ(errorOf(Strategy::InterleavedCombined1F1B, vShape),
            "strategy interleaved-combined-1f1b needs loop placement (stage s "
            "on rank s mod pp), got placement v");
}

TEST(StrategyGrid, NamesRoundTrip) {
  EXPECT_EQ(strategyNames(),
            "gpipe, 1f1b, interleaved-1f1b, looped-bfs, zb-h1, zb-h2, "
            "interleaved-zb, zb-v, v-half, v-min, dualpipe-v, dualpipe, "
            "no-pp, combined-1f1b, interleaved-combined-1f1b");
  for (Strategy strategy :
       {Strategy::GPipe, Strategy::OneFOneB, Strategy::Interleaved1F1B,
        Strategy::LoopedBFS, Strategy::ZBH1, Strategy::ZBH2,
        Strategy::Combined1F1B, Strategy::InterleavedCombined1F1B})
    EXPECT_EQ(parseStrategy(strategyName(strategy)), strategy);
}

} // namespace
