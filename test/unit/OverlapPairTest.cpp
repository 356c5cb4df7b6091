//===- OverlapPairTest.cpp - the expert exchanges an overlap pair hides ---===//
//
// docs/cost-model.md, "Step time": an overlap pair (combined 1F1B,
// DualPipe) runs each expert exchange beside the compute Megatron-Core's
// schedule sets next to it, and waits for what it needs. Timelines drawn
// by hand.
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/ClusterSpec.h"
#include "lib/CostModel/ModelSpec.h"
#include "lib/Planner/Evaluation.h"

#include "gtest/gtest.h"

using namespace sched;

namespace {

/// Attention side 3 (forward) + 4 (data gradient) + 1 (weight gradient),
/// MoE block 2 + 2 + 1: 13 of compute.
OverlapPairTimes pair(double combineBackward, double dispatchForward,
                      double dispatchBackward, double combineForward) {
  OverlapPairTimes t;
  t.attentionForward = 3;
  t.attentionInput = 4;
  t.attentionWeight = 1;
  t.blockForward = 2;
  t.blockBackwardInput = 2;
  t.blockBackwardWeight = 1;
  t.combineBackward = combineBackward;
  t.dispatchForward = dispatchForward;
  t.dispatchBackward = dispatchBackward;
  t.combineForward = combineForward;
  return t;
}

TEST(OverlapPair, ExchangesHideBesideTheComputeTheScheduleSetsNextToThem) {
  // Compute stream: attention weight gradient and forward [0, 4], block
  // data gradient [4, 6], weight gradient [6, 7], forward [7, 9], attention
  // data gradient [9, 13]. Communication: combine_bwd [0, 2], dispatch_fwd
  // [4, 5] (after the router), dispatch_bwd [6, 7] (after the block's data
  // gradient), combine_fwd [9, 10] (after the block's forward): all hidden.
  EXPECT_DOUBLE_EQ(overlapPairExposed(pair(2, 1, 1, 1)), 0);
  // The backward's combine hides under the attention side's 4 only: the
  // block's data gradient waits for it until 5, and everything after moves
  // by 1.
  EXPECT_DOUBLE_EQ(overlapPairExposed(pair(5, 1, 1, 1)), 1);
  // The forward's dispatch [4, 7] hides under the block's data and weight
  // gradients (3); at 4 ([4, 8]) the block's forward waits until 8.
  EXPECT_DOUBLE_EQ(overlapPairExposed(pair(2, 3, 1, 1)), 0);
  EXPECT_DOUBLE_EQ(overlapPairExposed(pair(2, 4, 1, 1)), 1);
  // The forward's combine [9, 14] outlasts the attention data gradient
  // [9, 13] by 1, however long the rest of the pair.
  EXPECT_DOUBLE_EQ(overlapPairExposed(pair(2, 1, 1, 5)), 1);
}

TEST(OverlapPair, StagesHideWhatTheirPairDoesNotExpose) {
  ClusterSpec cluster = *clusterPreset("h100-ib");
  cluster.efficiency.multiprocessors = 100;
  cluster.efficiency.allToAllMultiprocessors = 20;
  CostModel model(*modelPreset("deepseek-v3"), cluster, TrainingSpec());
  // A stage with the pair above: forward 5 of compute (3 + 2) and 4 + 1 of
  // exchanges, data gradient 6 (4 + 2) and 5 + 1, weight gradient 2.
  StageEstimate s;
  s.forwardTerms.matmul = 5;
  s.forwardTerms.expertParallel = 5;
  s.forward = 10;
  s.backwardTerms.matmul = 6;
  s.backwardTerms.expertParallel = 6;
  s.backwardInput = 12;
  s.backwardWeight = 2;
  ExpertOverlapTerms &x = s.expertOverlap;
  x.blockForward = 2;
  x.blockBackwardInput = 2;
  x.blockBackwardWeight = 1;
  x.combineBackward = 5;
  x.dispatchForward = 4;
  x.dispatchBackward = 1;
  x.combineForward = 1;
  // By hand: the combine_bwd [0, 5] holds the block's data gradient to
  // [5, 7]; dispatch_fwd [5, 9] holds the block's forward to [9, 11] and
  // the attention data gradient to [11, 15]: 15 against 13 of compute, 2 of
  // the 11 exposed, 9 hidden, 5/11 of it the forward's. The hidden part
  // runs beside compute on 80 of 100 SMs: 1/0.8 - 1 = 0.25 of it longer.
  const double forwardHidden = 9.0 * 5 / 11, inputHidden = 9.0 * 6 / 11;
  const StageEstimate run =
      stagesAsRun(model, {s}, Strategy::Combined1F1B, 1).front();
  EXPECT_DOUBLE_EQ(run.forwardTerms.expertParallel, 5 - forwardHidden);
  EXPECT_DOUBLE_EQ(run.forwardTerms.matmul, 5 + 0.25 * forwardHidden);
  EXPECT_DOUBLE_EQ(run.forward, 10 - 0.75 * forwardHidden);
  EXPECT_DOUBLE_EQ(run.backwardTerms.expertParallel, 6 - inputHidden);
  EXPECT_DOUBLE_EQ(run.backwardInput, 12 - 0.75 * inputHidden);
  EXPECT_DOUBLE_EQ(run.backwardWeight, 2);
  // Half the actions in pairs: half of it hides.
  const StageEstimate half =
      stagesAsRun(model, {s}, Strategy::InterleavedCombined1F1B, 0.5).front();
  EXPECT_DOUBLE_EQ(half.forward, 10 - 0.75 * forwardHidden / 2);
  // Schedules without pairs run the stage as estimated.
  const StageEstimate alone =
      stagesAsRun(model, {s}, Strategy::Interleaved1F1B, 1).front();
  EXPECT_DOUBLE_EQ(alone.forward, 10);
  EXPECT_DOUBLE_EQ(alone.backwardInput, 12);
}

} // namespace
