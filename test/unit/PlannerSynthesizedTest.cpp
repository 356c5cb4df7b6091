//===- PlannerSynthesizedTest.cpp - the planner's synthesized schedule ----===//
//
// A synthesized candidate (lib/Planner/Synthesized.h) takes the layout's
// stage costs, transfer time and the device's memory; the zoo strategies of
// its placement that fit are among its list scheduler's seeds, and a layout
// with two stages per rank gets one on the loop and one on the V, so on
// every layout the faster is no slower than a strategy without overlap
// pairs, its gap is a number in [0, 1),
// and the order the planner simulated is the one it proves (solved again,
// the same order).
//
//===----------------------------------------------------------------------===//

#include "lib/Planner/Planner.h"
#include "lib/Planner/Synthesized.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace sched;

namespace {

struct Case {
  const char *model;
  int64_t devices;
  int64_t sequences;
  const char *layout;
  Recompute recompute;
};

class PlannerSynthesized : public ::testing::TestWithParam<Case> {};

TEST_P(PlannerSynthesized, NoSlowerThanTheZooOfItsPlacement) {
  const Case &c = GetParam();
  std::optional<ModelSpec> model = modelPreset(c.model);
  std::optional<ClusterSpec> cluster = clusterPreset("h100-ib");
  ASSERT_TRUE(model && cluster);
  TrainingSpec training;
  training.devices = c.devices;
  training.seqLen = 8192;
  training.globalBatchTokens = c.sequences * training.seqLen;
  CostModel costModel(*model, *cluster, training);
  llvm::Expected<Layout> layout = parseLayout(c.layout);
  ASSERT_TRUE(static_cast<bool>(layout)) << llvm::toString(layout.takeError());
  PlanOptions options;
  options.layout = *layout;
  options.microbatchSize = 1;
  options.zero = 1;
  options.recompute = c.recompute;
  options.synthesize = true;
  options.verify = false;
  options.top = 32;
  llvm::Expected<PlanResult> result = plan(costModel, options);
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  std::optional<Candidate> synthesized;
  double zoo = INFINITY;
  for (const Candidate &candidate : result->ranked) {
    // The fastest synthesized candidate, of the loop or the V.
    if (candidate.synthesized) {
      if (!synthesized || candidate.stepTime < synthesized->stepTime)
        synthesized = candidate;
      continue;
    }
    // The zoo strategies among the seeds: no overlap pairs.
    const bool seed = candidate.strategy != Strategy::DualPipe &&
                      candidate.strategy != Strategy::DualPipeV &&
                      candidate.strategy != Strategy::InterleavedCombined1F1B;
    if (seed)
      zoo = std::min(zoo, candidate.stepTime);
  }
  ASSERT_TRUE(synthesized.has_value());
  ASSERT_TRUE(std::isfinite(zoo));
  EXPECT_LE(synthesized->stepTime, zoo * (1 + 1e-12));
  EXPECT_GE(synthesized->synthesisGap, 0);
  EXPECT_LT(synthesized->synthesisGap, 1);
  EXPECT_LE(synthesized->memory.peak, costModel.memoryLimit());

  // Solved again for its proof and its plan: the same order.
  const std::vector<StageEstimate> stages =
      costModel.stages(synthesized->layout);
  llvm::Expected<SynthesizedOrder> first =
      synthesizeOrder(costModel, *synthesized, stages);
  llvm::Expected<SynthesizedOrder> second =
      synthesizeOrder(costModel, *synthesized, stages);
  ASSERT_TRUE(first && second);
  ASSERT_EQ(first->schedule.ranks.size(), second->schedule.ranks.size());
  for (size_t r = 0; r < first->schedule.ranks.size(); ++r) {
    const std::vector<Action> &a = first->schedule.ranks[r].actions;
    const std::vector<Action> &b = second->schedule.ranks[r].actions;
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_TRUE(a[i].kind == b[i].kind && a[i].stage == b[i].stage &&
                  a[i].microbatch == b[i].microbatch);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, PlannerSynthesized,
    ::testing::Values(
        Case{"llama3-8b", 16, 32, "dp=2,tp=2,pp=4", Recompute::None},
        Case{"llama3-8b", 16, 32, "dp=2,tp=2,pp=4,vpp=2", Recompute::None},
        Case{"llama3-8b", 16, 32, "dp=2,tp=2,pp=4,vpp=4", Recompute::None},
        Case{"llama3-70b", 64, 64, "dp=2,tp=4,pp=8", Recompute::Full}));

} // namespace
