//===- InterleavedZBGridTest.cpp - interleaved zero bubble over a grid ----===//
//
// interleaved-zb over P in {2, 3, 4, 8, 16}, vpp in {1, 2, 3, 4}, M = 1 ..
// 4P: every schedule is complete (F, I and W for every stage and
// microbatch), runs to the end in the simulator (under any costs), and
// meets the closed forms of docs/schedules.md with unit stage costs
// (T_F = T_I = T_W = 1); and the values of PyTorch's own
// ScheduleInterleavedZeroBubble order are never beaten by it.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/Strategy.h"
#include "lib/Simulate/Simulate.h"
#include "test/unit/StrategyTestSupport.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace sched;
using sched::test::describe;
using sched::test::errorOf;
using sched::test::makeShape;

namespace {

constexpr int32_t kPipelineRanks[] = {2, 3, 4, 8, 16};
constexpr int32_t kStagesPerRank[] = {1, 2, 3, 4};

Timeline generateAndSimulate(const PipelineShape &shape,
                             Schedule *out = nullptr) {
  return test::generateAndSimulate(Strategy::InterleavedZB, shape,
                                   StagePlacement::Loop,
                                   test::BackwardForm::Split, out);
}

/// The least makespan any schedule of P ranks, v chunks each in loop
/// placement and M microbatches can have with unit costs (S = P v stages).
/// Each of three bounds:
///  - 3Mv + P - 1: rank P-1 cannot start before the first forward went
///    through stages 0 .. P-2 (P - 1 steps), and then has 3Mv steps of work.
///  - 2Mv + Pv + P - 1: no I can run on rank 0 before microbatch 0's forward
///    went through all S stages and its I came back through the P - 1
///    stages of the last chunk above stage (v-1)P, step S + P - 1; rank 0
///    then still has all its Mv I and Mv W to run.
///  - 2Pv + 2M - 1: stage S-1 starts no earlier than step S - 1 and runs an
///    F and an I for each microbatch on one rank; the microbatch whose I
///    there ends last (at least S - 1 + 2M) still needs S - 1 more I and
///    its W at stage 0.
/// The schedule reaches the largest of the three on the whole grid. For
/// M >= P it is the first (the P - 1 of ZB-H1, not divided by v); below P
/// the other two take over.
double lowerBound(int32_t pp, int32_t vpp, int32_t m) {
  const double mv = double(m) * vpp;
  return std::max({3 * mv + pp - 1, 2 * mv + double(pp) * vpp + pp - 1,
                   2.0 * pp * vpp + 2 * m - 1});
}

/// The largest microbatch group: max(1, M/P) groups as even as possible.
int32_t largestGroup(int32_t pp, int32_t m) {
  const int32_t groups = std::max(1, m / pp);
  return (m + groups - 1) / groups;
}

/// Peak stage activations of rank r, read off its program: w_r forwards
/// (w_r = min(Mv, (v-1)G + P-1-r)) put w_r alive. Each later step is a
/// forward (+1, while any remain), an I (-1/2) and, from the (r+1)-th step
/// on, a W (-1/2): the first r steps add 1/2 each, later ones nothing, and
/// the peak comes right after a step's forward. With K = Mv - w_r steps
/// that have a forward, the last of them peaks at w_r + 1 + min(r, K-1)/2;
/// with none (w_r = Mv) the peak is Mv, which the min gives too. For
/// M >= P, K - 1 >= r and the peak is (v-1)G + P - r/2: (v-1)G + P on rank
/// 0, vP when P divides M (G = P), ZB-H1's P - r/2 for v = 1.
double peakOfRank(int32_t pp, int32_t vpp, int32_t m, int32_t r) {
  const int32_t total = m * vpp;
  const int32_t warmup =
      std::min(total, (vpp - 1) * largestGroup(pp, m) + pp - 1 - r);
  return std::min<double>(total,
                          warmup + 1 + 0.5 * std::min(r, total - warmup - 1));
}

TEST(InterleavedZBGrid, ClosedForms) {
  for (int32_t pp : kPipelineRanks)
    for (int32_t vpp : kStagesPerRank)
      for (int32_t m = 1; m <= 4 * pp; ++m) {
        const PipelineShape shape = makeShape(pp, vpp, m);
        SCOPED_TRACE(describe(shape));
        Timeline timeline = generateAndSimulate(shape);
        if (timeline.peakActivations.empty())
          continue;
        EXPECT_DOUBLE_EQ(timeline.makespan, lowerBound(pp, vpp, m));
        for (int32_t r = 0; r < pp; ++r)
          EXPECT_DOUBLE_EQ(timeline.peakActivations[r],
                           peakOfRank(pp, vpp, m, r))
              << "rank " << r;
        // P rank-worths (vP stage activations) on rank 0 in Megatron's
        // groups of P.
        if (m % pp == 0) {
          EXPECT_DOUBLE_EQ(timeline.peakActivations[0], vpp * pp);
        }
        if (vpp < 2)
          continue;
        // Never slower than interleaved 1F1B on the same layers, whose
        // bubble 3(P - 1) the split backward cuts to P - 1.
        llvm::Expected<Schedule> interleaved =
            generateSchedule(Strategy::Interleaved1F1B, shape);
        ASSERT_TRUE(static_cast<bool>(interleaved));
        llvm::Expected<Timeline> reference = simulate(*interleaved, {});
        ASSERT_TRUE(static_cast<bool>(reference));
        EXPECT_LE(timeline.makespan, reference->makespan);
      }
}

TEST(InterleavedZBGrid, BubbleUnderOtherCosts) {
  // ZB-H1's bubble (P-1)(T_F + T_I - T_W) with per-stage costs, whatever v:
  // over the same layers v times the ZB-H1 stage, the bubble is divided by
  // v. All four profiles have T_I >= T_W, as for ZB-H1 (docs/schedules.md).
  struct Costs {
    double f, i, w;
  };
  for (Costs c :
       {Costs{1, 2, 1}, Costs{1, 1, 0.5}, Costs{2, 1, 1}, Costs{1, 1.5, 0.5}})
    for (int32_t pp : {2, 4, 8})
      for (int32_t vpp : {1, 2, 4}) {
        PipelineShape shape = makeShape(pp, vpp, 4 * pp);
        shape.stageCosts.assign(pp * vpp, StageCost{c.f, c.i, c.w});
        SCOPED_TRACE(describe(shape));
        llvm::Expected<Schedule> schedule =
            generateSchedule(Strategy::InterleavedZB, shape);
        ASSERT_TRUE(static_cast<bool>(schedule));
        llvm::Expected<Timeline> timeline = simulate(*schedule, {});
        ASSERT_TRUE(static_cast<bool>(timeline));
        const double work = shape.microbatches * vpp * (c.f + c.i + c.w);
        EXPECT_DOUBLE_EQ(timeline->makespan - work,
                         (pp - 1) * (c.f + c.i - c.w));
      }
}

TEST(InterleavedZBGrid, OneChunkIsZBH1) {
  for (int32_t pp : kPipelineRanks)
    for (int32_t m = 1; m <= 4 * pp; ++m) {
      const PipelineShape shape = makeShape(pp, 1, m);
      SCOPED_TRACE(describe(shape));
      llvm::Expected<Schedule> zb = generateSchedule(Strategy::ZBH1, shape);
      llvm::Expected<Schedule> izb =
          generateSchedule(Strategy::InterleavedZB, shape);
      ASSERT_TRUE(zb && izb);
      ASSERT_EQ(zb->ranks.size(), izb->ranks.size());
      for (size_t r = 0; r < zb->ranks.size(); ++r) {
        const std::vector<Action> &expected = zb->ranks[r].actions;
        const std::vector<Action> &actual = izb->ranks[r].actions;
        ASSERT_EQ(actual.size(), expected.size()) << "rank " << r;
        for (size_t i = 0; i < actual.size(); ++i) {
          EXPECT_EQ(actual[i].kind, expected[i].kind) << "rank " << r;
          EXPECT_EQ(actual[i].stage, expected[i].stage) << "rank " << r;
          EXPECT_EQ(actual[i].microbatch, expected[i].microbatch)
              << "rank " << r;
        }
      }
    }
}

TEST(InterleavedZBGrid, PyTorchReference) {
  // Makespan and peak stage activations (rank 0, every rank) of PyTorch's
  // ScheduleInterleavedZeroBubble order with unit costs; at vpp = 1 it is
  // ZB-H1.
  struct Reference {
    int32_t pp, vpp, m;
    double makespan, peakRank0, peakMax;
  };
  const Reference references[] = {
      {2, 2, 2, 13, 4, 4},     {2, 2, 3, 19, 5, 5},     {2, 2, 4, 25, 4, 4},
      {2, 2, 6, 37, 4, 4},     {2, 2, 8, 49, 4, 4},     {2, 4, 2, 25, 8, 8},
      {2, 4, 3, 37, 11, 11},   {2, 4, 4, 49, 8, 8},     {2, 4, 6, 73, 8, 8},
      {2, 4, 8, 97, 8, 8},     {4, 2, 4, 27, 8, 8},     {4, 2, 5, 33, 9, 9},
      {4, 2, 8, 51, 8, 8},     {4, 2, 10, 63, 9, 9},    {4, 2, 12, 75, 8, 8},
      {4, 2, 16, 99, 8, 8},    {4, 4, 4, 51, 16, 16},   {4, 4, 5, 63, 19, 19},
      {4, 4, 8, 99, 16, 16},   {4, 4, 10, 123, 19, 19}, {4, 4, 12, 147, 16, 16},
      {4, 4, 16, 195, 16, 16}, {8, 2, 8, 55, 16, 16},   {8, 2, 9, 61, 17, 17},
      {8, 2, 16, 103, 16, 16}, {8, 2, 18, 115, 17, 17}, {8, 2, 24, 151, 16, 16},
      {8, 2, 32, 199, 16, 16}, {8, 4, 8, 103, 32, 32},  {8, 4, 9, 115, 35, 35},
      {8, 4, 16, 199, 32, 32}, {8, 4, 18, 223, 35, 35}, {8, 4, 24, 295, 32, 32},
      {8, 4, 32, 391, 32, 32}, {2, 1, 8, 25, 2, 2},     {4, 1, 8, 27, 4, 4},
      {8, 1, 16, 55, 8, 8},
  };
  for (const Reference &ref : references) {
    const PipelineShape shape = makeShape(ref.pp, ref.vpp, ref.m);
    SCOPED_TRACE(describe(shape));
    Timeline timeline = generateAndSimulate(shape);
    ASSERT_FALSE(timeline.peakActivations.empty());
    EXPECT_LE(timeline.makespan, ref.makespan);
    EXPECT_LE(timeline.peakActivations[0], ref.peakRank0);
    EXPECT_LE(*std::max_element(timeline.peakActivations.begin(),
                                timeline.peakActivations.end()),
              ref.peakMax);
  }
}

TEST(InterleavedZBGrid, RejectsVPlacement) {
  PipelineShape shape = makeShape(4, 2, 8);
  shape.placement = StagePlacement::V;
  EXPECT_EQ(errorOf(Strategy::InterleavedZB, shape),
            "strategy interleaved-zb needs loop placement (stage s on rank "
            "s mod pp), got placement v");
  EXPECT_EQ(errorOf(Strategy::InterleavedZB, makeShape(4, 1, 8)), "");
  EXPECT_EQ(parseStrategy("interleaved-zb"), Strategy::InterleavedZB);
}

} // namespace
