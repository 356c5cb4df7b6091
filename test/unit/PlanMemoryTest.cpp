//===- PlanMemoryTest.cpp - the working memory of a runtime plan ----------===//
//
// countPlanInstructions counts, on the compute-only schedule, the
// transfers that lib/Lower's transfer insertion (sched-insert-p2p) gives
// it, and the estimate refuses exactly past the budget.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/PlanMemory.h"
#include "lib/Lower/InsertTransfers.h"

#include "llvm/Support/FormatVariadic.h"

#include "gtest/gtest.h"

using namespace sched;

namespace {

TEST(PlanMemory, CountsTheTransfersInsertTransfersAdds) {
  int checked = 0;
  for (Strategy strategy : allStrategies())
    for (int32_t pp : {1, 2, 4})
      for (int32_t vpp : {1, 2})
        for (int32_t m : {2, 8, 16}) {
          PipelineShape shape;
          shape.pp = pp;
          shape.vpp = vpp;
          shape.microbatches = m;
          llvm::Expected<Schedule> compute = generateSchedule(strategy, shape);
          if (!compute) {
            llvm::consumeError(compute.takeError());
            continue;
          }
          llvm::Expected<Schedule> lowered = insertTransfers(*compute);
          ASSERT_TRUE(static_cast<bool>(lowered))
              << llvm::toString(lowered.takeError());
          int64_t computes = 0, transfers = 0, longest = 0;
          for (const RankProgram &rank : lowered->ranks) {
            int64_t own = 1; // the optimizer step
            for (const Action &action : rank.actions) {
              computes += isCompute(action.kind);
              transfers += action.kind == ActionKind::Send ||
                           action.kind == ActionKind::Recv;
              ++own;
            }
            longest = std::max(longest, own);
          }
          const PlanInstructionCount count = countPlanInstructions(*compute);
          const std::string where =
              llvm::formatv("{0} pp {1} vpp {2} M {3}", strategyName(strategy),
                            pp, vpp, m)
                  .str();
          EXPECT_EQ(count.compute, computes) << where;
          EXPECT_EQ(count.transfers, transfers) << where;
          EXPECT_EQ(count.collectives,
                    int64_t(lowered->ranks.size()) +
                        (compute->replicas > 1 ? compute->numStages : 0))
              << where;
          // DualPipe's replica sums add their stages to each rank.
          EXPECT_LE(count.longestRank, longest) << where;
          EXPECT_GE(count.longestRank + 2 * compute->numStages, longest)
              << where;
          ++checked;
        }
  EXPECT_GT(checked, 40);
}

TEST(PlanMemory, RefusesExactlyPastTheBudget) {
  PipelineShape shape;
  shape.pp = 4;
  shape.microbatches = 8;
  Schedule compute = cantFail(generateSchedule(Strategy::OneFOneB, shape));
  const PlanInstructionCount count = countPlanInstructions(compute);
  // 64 computes, 2 x 2 x 3 x 8 transfers, 4 optimizer steps; ranks 1 and 2
  // hold 16 computes, 32 transfers and a step.
  EXPECT_EQ(count.total(), 64 + 96 + 4);
  EXPECT_EQ(count.longestRank, 49);
  const auto need =
      static_cast<int64_t>(estimatePlanMemory(Strategy::OneFOneB, count));
  const PlanMemoryCost cost = planMemoryCost(Strategy::OneFOneB);
  EXPECT_EQ(need,
            164 * cost.perInstruction + std::min<int64_t>(49, 164 / 4) *
                                            cost.perLongestRankInstruction);
  EXPECT_FALSE(static_cast<bool>(
      checkPlanMemory(Strategy::OneFOneB, compute, need, "x", "--y")));
  llvm::Error refused =
      checkPlanMemory(Strategy::OneFOneB, compute, need - 1, "x", "--y");
  ASSERT_TRUE(static_cast<bool>(refused));
  const std::string message = llvm::toString(std::move(refused));
  EXPECT_NE(message.find("(164 plan instructions at "), std::string::npos)
      << message;
  EXPECT_NE(message.find("49 on the longest rank"), std::string::npos)
      << message;
  EXPECT_NE(message.find("raise it with --y"), std::string::npos);
}

TEST(PlanMemory, EveryStrategyHasMeasuredCosts) {
  for (Strategy strategy : allStrategies()) {
    const PlanMemoryCost cost = planMemoryCost(strategy);
    EXPECT_GT(cost.perInstruction, 100) << strategyName(strategy).str();
    EXPECT_GE(cost.perLongestRankInstruction, 0);
  }
}

TEST(PlanMemory, TwoRanksHaveOneFigurePerStrategy) {
  // The proof is in it: above either term of more ranks.
  for (Strategy strategy : allStrategies()) {
    const PlanMemoryCost two = planMemoryCost(strategy, 2);
    EXPECT_EQ(two.perLongestRankInstruction, 0) << strategyName(strategy).str();
    EXPECT_GE(two.perInstruction, planMemoryCost(strategy, 4).perInstruction)
        << strategyName(strategy).str();
  }
  PipelineShape shape;
  shape.pp = 2;
  shape.microbatches = 8;
  const Schedule compute =
      cantFail(generateSchedule(Strategy::OneFOneB, shape));
  const PlanInstructionCount count = countPlanInstructions(compute);
  EXPECT_EQ(count.ranks, 2);
  EXPECT_EQ(estimatePlanMemory(Strategy::OneFOneB, count),
            uint64_t(count.total()) *
                planMemoryCost(Strategy::OneFOneB, 2).perInstruction);
}

TEST(PlanMemory, InterleavedZBOnOneStagePerRankIsZBH1) {
  // The same program, so the same estimate: interleaved ZB's own figures
  // (vpp 2) put it at 1.65 to 1.73 times its peak on two ranks.
  for (int32_t pp : {2, 4}) {
    PipelineShape shape;
    shape.pp = pp;
    shape.microbatches = 16;
    const PlanInstructionCount zb = countPlanInstructions(
        cantFail(generateSchedule(Strategy::InterleavedZB, shape)));
    const PlanInstructionCount h1 = countPlanInstructions(
        cantFail(generateSchedule(Strategy::ZBH1, shape)));
    EXPECT_EQ(zb.total(), h1.total());
    EXPECT_EQ(estimatePlanMemory(Strategy::InterleavedZB, zb),
              estimatePlanMemory(Strategy::ZBH1, h1))
        << "pp " << pp;
    // With two stages per rank it keeps its own.
    shape.vpp = 2;
    const PlanInstructionCount two = countPlanInstructions(
        cantFail(generateSchedule(Strategy::InterleavedZB, shape)));
    const PlanMemoryCost own = planMemoryCost(Strategy::InterleavedZB, pp);
    EXPECT_EQ(estimatePlanMemory(Strategy::InterleavedZB, two),
              uint64_t(two.total()) * own.perInstruction +
                  uint64_t(std::min(two.longestRank, two.total() / 4)) *
                      own.perLongestRankInstruction)
        << "pp " << pp;
  }
}

} // namespace
