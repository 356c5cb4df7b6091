//===- LayerwiseOverlapTest.cpp - layerwise overlaps' memory by hand ------===//
//
// Megatron-Core's combined 1F1B runs the forward of one microbatch beside
// the backward of another layer by layer (forward layer i beside backward
// layer n-1-i), so the pair holds one layer of the forward above what was
// live. The verifier, the simulator and the planner's walk count it with
// layerwiseOverlapPeak; these cases are computed by hand.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/Strategy.h"
#include "lib/Simulate/Simulate.h"
#include "lib/Verify/Verifier.h"

#include "gtest/gtest.h"

using namespace sched;

namespace {

TEST(LayerwiseOverlap, PeakByHand) {
  // One layer each: the whole forward, as an overlap that is not layerwise.
  EXPECT_EQ(layerwiseOverlapPeak(100, 1, 100, 1), 100);
  // Equal stages of 4 layers: one forward layer, 25.
  EXPECT_EQ(layerwiseOverlapPeak(100, 4, 100, 4), 25);
  // Rounded up: 100 / 48 = 2.08 -> 3.
  EXPECT_EQ(layerwiseOverlapPeak(100, 48, 100, 48), 3);
  // A larger forward (100 in 4 pieces of 25) beside a smaller backward (40
  // in 2 pieces of 20): after F1 B1 F2 B2 F3 F4 the backward is spent:
  // 25 - 20 + 25 - 20 + 25 + 25 = 60.
  EXPECT_EQ(layerwiseOverlapPeak(100, 4, 40, 2), 60);
  // A larger backward: the first forward piece is the peak.
  EXPECT_EQ(layerwiseOverlapPeak(100, 4, 200, 4), 25);
  // Layer counts under 1 count as 1; nothing to allocate, nothing held.
  EXPECT_EQ(layerwiseOverlapPeak(100, 0, 100, -3), 100);
  EXPECT_EQ(layerwiseOverlapPeak(0, 8, 100, 8), 0);
}

/// Combined 1F1B on one stage of `layers` layers keeping 400 bytes per
/// microbatch, three microbatches.
Schedule combined(int64_t layers) {
  PipelineShape shape;
  shape.pp = 1;
  shape.vpp = 1;
  shape.microbatches = 3;
  StageCost cost;
  cost.activation = 400;
  cost.weightGrad = 0;
  cost.layers = layers;
  shape.stageCosts = {cost};
  llvm::Expected<Schedule> schedule =
      generateSchedule(Strategy::Combined1F1B, shape);
  EXPECT_TRUE(static_cast<bool>(schedule));
  return schedule ? std::move(*schedule) : Schedule();
}

Verdict verdictAt(const Schedule &schedule, uint64_t limit) {
  VerifyOptions options;
  options.memoryLimit = MemoryLimit::fromInteger(limit);
  return verifySchedule(schedule, options).verdict;
}

TEST(LayerwiseOverlap, VerifierAndSimulatorAgree) {
  // F0 keeps 400; each overlap adds one layer (100) before the backward
  // frees its microbatch: 500 at the peak, where two whole microbatches
  // (800) were counted before.
  Schedule layered = combined(4);
  for (const Action &a : layered.ranks[0].actions)
    EXPECT_EQ(a.layerwise, a.bundle != 0);
  EXPECT_EQ(verdictAt(layered, 500), Verdict::Verified);
  EXPECT_EQ(verdictAt(layered, 499), Verdict::Violated);
  SimulationOptions options;
  llvm::Expected<Timeline> timeline = simulate(layered, options);
  ASSERT_TRUE(static_cast<bool>(timeline));
  EXPECT_EQ(timeline->peakActivationBytes[0], 500);
  EXPECT_DOUBLE_EQ(timeline->peakActivations[0], 1.25);

  // One layer: the pair holds both microbatches.
  Schedule whole = combined(1);
  EXPECT_EQ(verdictAt(whole, 800), Verdict::Verified);
  EXPECT_EQ(verdictAt(whole, 799), Verdict::Violated);
  timeline = simulate(whole, options);
  ASSERT_TRUE(static_cast<bool>(timeline));
  EXPECT_EQ(timeline->peakActivationBytes[0], 800);
}

} // namespace
