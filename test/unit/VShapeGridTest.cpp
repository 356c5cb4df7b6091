//===- VShapeGridTest.cpp - V-shaped strategies over a grid of shapes -----===//
//
// ZB-V, V-Half, V-Min and DualPipeV (two stages per rank in a V) and no-pp
// over P in {2, 3, 4, 8, 16}, M = 1 .. 4P: every schedule is complete, runs
// to the end in the simulator (under any costs) and meets the closed forms
// and bounds of docs/schedules.md with unit stage costs
// (T_F = T_I = T_W = 1, T_B = 2), and the PyTorch 2.11 reference values of
// SCHEDULES.md.
//
//===----------------------------------------------------------------------===//

#include "test/unit/StrategyTestSupport.h"
#include "lib/Generate/Strategy.h"
#include "lib/Simulate/Simulate.h"


#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

#include <algorithm>

using namespace sched;
using sched::test::describe;
using sched::test::errorOf;

namespace {

constexpr int32_t kPipelineRanks[] = {2, 3, 4, 8, 16};
constexpr Strategy kVStrategies[] = {Strategy::ZBV, Strategy::VHalf,
                                     Strategy::VMin, Strategy::DualPipeV};

PipelineShape vShape(int32_t pp, int32_t m) {
  return test::makeShape(pp, 2, m);
}

/// V placement for vpp = 2 (loop otherwise); B or I and W.
Timeline generateAndSimulate(Strategy strategy, const PipelineShape &shape,
                             Schedule *out = nullptr) {
  const StagePlacement placement =
      shape.vpp == 2 ? StagePlacement::V : StagePlacement::Loop;
  return test::generateAndSimulate(strategy, shape, placement,
                                   test::BackwardForm::Either, out);
}

double maxPeak(const Timeline &timeline) {
  return *std::max_element(timeline.peakActivations.begin(),
                           timeline.peakActivations.end());
}

/// The least makespan of any V schedule with unit costs: the last rank
/// cannot start before step P - 1 and has 6M steps of work; microbatch 0
/// alone goes down and up the V twice (4P steps) and ends with a W.
double vLowerBound(int32_t pp, int32_t m) {
  return std::max(6.0 * m + pp - 1, 4.0 * pp + 1);
}

/// 1F1B over P ranks holding the same layers (a rank-worth is two stages):
/// makespan 6(M + P - 1), bubble 6(P - 1).
double oneFOneBMakespan(int32_t pp, int32_t m) { return 6.0 * (m + pp - 1); }

int32_t overlaps(const Schedule &schedule) {
  int32_t bundled = 0;
  for (const RankProgram &rank : schedule.ranks)
    for (const Action &action : rank.actions)
      bundled += action.bundle != 0;
  return bundled / 2;
}


//===----------------------------------------------------------------------===//
// ZB-V
//===----------------------------------------------------------------------===//

TEST(VShapeGrid, ZBVPyTorchReference) {
  // SCHEDULES.md: PyTorch 2.11's ZBVZeroBubble, P = 4, M = 8, per-stage
  // T_F = T_I = T_W = 1: makespan 51, peak 8 on every rank.
  Timeline timeline = generateAndSimulate(Strategy::ZBV, vShape(4, 8));
  ASSERT_EQ(timeline.peakActivations.size(), 4u);
  EXPECT_DOUBLE_EQ(timeline.makespan, 51);
  for (double peak : timeline.peakActivations)
    EXPECT_LE(peak, 8);
  for (double busy : timeline.busy)
    EXPECT_DOUBLE_EQ(timeline.makespan - busy, 3);
}

TEST(VShapeGrid, ZBV) {
  for (int32_t pp : kPipelineRanks)
    for (int32_t m = 1; m <= 4 * pp; ++m) {
      const PipelineShape shape = vShape(pp, m);
      SCOPED_TRACE(describe(Strategy::ZBV, shape));
      Timeline timeline = generateAndSimulate(Strategy::ZBV, shape);
      if (timeline.peakActivations.empty())
        continue;
      EXPECT_GE(timeline.makespan, vLowerBound(pp, m));
      // Optimal from 2P microbatches on: the bubble is the P - 1 steps the
      // first forward takes to reach the last rank.
      if (m >= 2 * pp) {
        EXPECT_DOUBLE_EQ(timeline.makespan, 6.0 * m + pp - 1);
      }
      // Never worse than ZB-H1 over the same layers, 2(3M + P - 1) for
      // M >= P, nor than 1F1B.
      if (m >= pp) {
        EXPECT_LE(timeline.makespan, 2.0 * (3 * m + pp - 1));
      }
      EXPECT_LE(timeline.makespan, oneFOneBMakespan(pp, m));
      // P rank-worths of activations, 2P stage activations.
      EXPECT_LE(maxPeak(timeline), std::min(2 * pp, 2 * m));
      if (m >= pp) {
        EXPECT_DOUBLE_EQ(maxPeak(timeline), 2 * pp);
      }
    }
}

//===----------------------------------------------------------------------===//
// V-Half and V-Min
//===----------------------------------------------------------------------===//

TEST(VShapeGrid, VHalf) {
  for (int32_t pp : kPipelineRanks)
    for (int32_t m = 1; m <= 4 * pp; ++m) {
      const PipelineShape shape = vShape(pp, m);
      SCOPED_TRACE(describe(Strategy::VHalf, shape));
      Timeline timeline = generateAndSimulate(Strategy::VHalf, shape);
      if (timeline.peakActivations.empty())
        continue;
      EXPECT_GE(timeline.makespan, vLowerBound(pp, m));
      EXPECT_LE(timeline.makespan, oneFOneBMakespan(pp, m));
      // At most P + 2 stage activations, (P + 2) / 2 rank-worths: about
      // half of 1F1B's P.
      for (double peak : timeline.peakActivations)
        EXPECT_LE(peak, pp + 2);
      // At most half of 1F1B's bubble, 3(P - 1), once the pipeline fills.
      if (m >= 2 * pp) {
        EXPECT_LE(timeline.makespan - 6.0 * m, 3.0 * (pp - 1));
      }
    }
}

/// V-Min's makespan: M - 1 periods of six steps after the first
/// microbatch, which takes 4P + 1 steps (down and up the V twice, then a
/// W); two more when 3 divides P > 3 and a second microbatch makes the
/// block's collisions modulo 6 count (docs/schedules.md).
double vMinMakespan(int32_t pp, int32_t m) {
  const int32_t late = pp % 3 == 0 && pp > 3 && m > 1 ? 2 : 0;
  return 6.0 * m + 4 * pp - 5 + late;
}

TEST(VShapeGrid, VMin) {
  std::vector<int32_t> ranks(std::begin(kPipelineRanks),
                             std::end(kPipelineRanks));
  // P divisible by 3 makes two actions of a block collide modulo 6.
  ranks.insert(ranks.end(), {6, 9, 12});
  for (int32_t pp : ranks)
    for (int32_t m = 1; m <= 4 * pp; ++m) {
      const PipelineShape shape = vShape(pp, m);
      SCOPED_TRACE(describe(Strategy::VMin, shape));
      Timeline timeline = generateAndSimulate(Strategy::VMin, shape);
      if (timeline.peakActivations.empty())
        continue;
      EXPECT_DOUBLE_EQ(timeline.makespan, vMinMakespan(pp, m));
      // About two thirds of 1F1B's bubble, 6(P - 1).
      EXPECT_LT(timeline.makespan - 6.0 * m, 6.0 * (pp - 1));
      EXPECT_LE(timeline.makespan - 6.0 * m, 4.0 * pp - 3);
      // About a third of 1F1B's 2P stage activations.
      const double peak = (2 * pp) / 3 + 2;
      EXPECT_LE(maxPeak(timeline), peak);
      if (m >= pp) {
        EXPECT_DOUBLE_EQ(maxPeak(timeline), peak);
      }
    }
}

TEST(VShapeGrid, MemoryOrder) {
  // Less memory costs bubble: V-Min <= V-Half <= ZB-V in peak, the other
  // way round in makespan.
  for (int32_t pp : kPipelineRanks)
    for (int32_t m : {pp, 2 * pp, 4 * pp}) {
      const PipelineShape shape = vShape(pp, m);
      SCOPED_TRACE(describe(Strategy::VHalf, shape));
      Timeline zbv = generateAndSimulate(Strategy::ZBV, shape);
      Timeline half = generateAndSimulate(Strategy::VHalf, shape);
      Timeline min = generateAndSimulate(Strategy::VMin, shape);
      EXPECT_LE(maxPeak(min), maxPeak(half));
      EXPECT_LE(maxPeak(half), maxPeak(zbv));
      EXPECT_LE(zbv.makespan, half.makespan);
      EXPECT_LE(half.makespan, min.makespan);
    }
}

//===----------------------------------------------------------------------===//
// DualPipeV
//===----------------------------------------------------------------------===//

TEST(VShapeGrid, DualPipeVPyTorchReference) {
  // SCHEDULES.md: PyTorch 2.11's DualPipeV, P = 4, M = 16: makespan 99,
  // peak 9.
  Schedule schedule;
  Timeline timeline =
      generateAndSimulate(Strategy::DualPipeV, vShape(4, 16), &schedule);
  ASSERT_EQ(timeline.peakActivations.size(), 4u);
  EXPECT_DOUBLE_EQ(timeline.makespan, 99);
  for (double peak : timeline.peakActivations)
    EXPECT_LE(peak, 9);
  EXPECT_EQ(overlaps(schedule), 84);
}

TEST(VShapeGrid, DualPipeV) {
  for (int32_t pp : kPipelineRanks)
    for (int32_t m = 1; m <= 4 * pp; ++m) {
      const PipelineShape shape = vShape(pp, m);
      SCOPED_TRACE(describe(Strategy::DualPipeV, shape));
      Schedule schedule;
      Timeline timeline =
          generateAndSimulate(Strategy::DualPipeV, shape, &schedule);
      if (timeline.peakActivations.empty())
        continue;
      EXPECT_GE(timeline.makespan, vLowerBound(pp, m));
      EXPECT_LE(timeline.makespan, oneFOneBMakespan(pp, m));
      // Optimal once every rank has work for the whole V: the overlaps cost
      // no time.
      if (m >= pp) {
        EXPECT_DOUBLE_EQ(timeline.makespan, 6.0 * m + pp - 1);
      }
      // Below P microbatches the warm-up is DeepSeek's: microbatch 0 goes
      // down and up the V twice (4P + 1 steps), each further one three
      // steps later.
      if (m < pp) {
        EXPECT_DOUBLE_EQ(timeline.makespan, 4.0 * pp + 3 * m - 2);
      }
      // One stage activation over ZB-V's 2P: P + 1/2 rank-worths, within
      // DeepSeek's P + 1.
      EXPECT_LE(maxPeak(timeline), 2 * pp + 1);
      // The steady phase runs two overlaps per microbatch beyond 2P - r - 1
      // on rank r; below P + 1 microbatches there is none.
      if (m <= pp) {
        EXPECT_EQ(overlaps(schedule), 0);
      }
      if (m >= 2 * pp) {
        EXPECT_EQ(overlaps(schedule), 2 * pp * (m - 2 * pp) + pp * (pp + 1));
      }
    }
}

//===----------------------------------------------------------------------===//
// No pipeline
//===----------------------------------------------------------------------===//

TEST(VShapeGrid, NoPipeline) {
  for (int32_t m = 1; m <= 16; ++m) {
    PipelineShape shape;
    shape.microbatches = m;
    SCOPED_TRACE(describe(Strategy::NoPipeline, shape));
    Timeline timeline = generateAndSimulate(Strategy::NoPipeline, shape);
    ASSERT_EQ(timeline.peakActivations.size(), 1u);
    // Gradient accumulation: no bubble, one activation alive.
    EXPECT_DOUBLE_EQ(timeline.makespan, 3.0 * m);
    EXPECT_DOUBLE_EQ(timeline.peakActivations[0], 1);
  }
}

//===----------------------------------------------------------------------===//
// Shape rules, placement and names
//===----------------------------------------------------------------------===//

TEST(VShapeGrid, RejectsShapesOutsideTheRules) {
  for (Strategy strategy : kVStrategies) {
    const std::string name = strategyName(strategy).str();
    for (int32_t vpp : {1, 3}) {
      PipelineShape shape = vShape(4, 8);
      shape.vpp = vpp;
      EXPECT_EQ(errorOf(strategy, shape),
                llvm::formatv("strategy {0} needs vpp = 2 (two stages per "
                              "rank in a V), got vpp = {1}",
                              name, vpp)
                    .str());
    }
  }
  PipelineShape shape;
  shape.pp = 4;
  shape.microbatches = 8;
  EXPECT_EQ(errorOf(Strategy::NoPipeline, shape),
            "strategy no-pp needs pp = 1 (a single pipeline stage), got pp = "
            "4");
  shape.pp = 1;
  shape.vpp = 2;
  EXPECT_EQ(errorOf(Strategy::NoPipeline, shape),
            "strategy no-pp needs vpp = 1 (one stage per rank), got vpp = 2");
}

TEST(VShapeGrid, StrategyImpliesVPlacement) {
  // A pipeline's placement defaults to loop; the V strategies place stages
  // in a V either way and give the same order.
  for (Strategy strategy : kVStrategies) {
    PipelineShape loop = vShape(3, 6);
    PipelineShape v = loop;
    v.placement = StagePlacement::V;
    llvm::Expected<Schedule> fromLoop = generateSchedule(strategy, loop);
    llvm::Expected<Schedule> fromV = generateSchedule(strategy, v);
    ASSERT_TRUE(fromLoop && fromV);
    test::expectComplete(*fromLoop, loop, StagePlacement::V,
                         test::BackwardForm::Either);
    ASSERT_EQ(fromLoop->ranks.size(), fromV->ranks.size());
    for (size_t r = 0; r < fromV->ranks.size(); ++r) {
      ASSERT_EQ(fromLoop->ranks[r].actions.size(),
                fromV->ranks[r].actions.size());
      for (size_t i = 0; i < fromV->ranks[r].actions.size(); ++i)
        EXPECT_EQ(actionLabel(fromLoop->ranks[r].actions[i], true),
                  actionLabel(fromV->ranks[r].actions[i], true));
    }
  }
}

TEST(VShapeGrid, OneRank) {
  // P = 1: both stages of the V on one rank.
  for (Strategy strategy : kVStrategies)
    for (int32_t m : {1, 2, 5}) {
      const PipelineShape shape = vShape(1, m);
      SCOPED_TRACE(describe(strategy, shape));
      Timeline timeline = generateAndSimulate(strategy, shape);
      if (!timeline.peakActivations.empty() && strategy != Strategy::VMin) {
        EXPECT_DOUBLE_EQ(timeline.makespan, vLowerBound(1, m));
      }
    }
}

TEST(VShapeGrid, NamesRoundTrip) {
  for (Strategy strategy : {Strategy::ZBV, Strategy::VHalf, Strategy::VMin,
                            Strategy::DualPipeV, Strategy::NoPipeline})
    EXPECT_EQ(parseStrategy(strategyName(strategy)), strategy);
  EXPECT_EQ(strategyName(Strategy::NoPipeline), "no-pp");
}

} // namespace
