//===- PlannerSearchTest.cpp - the default search is exact ----------------===//
//
// The planner's default search prunes candidates by lower bounds on time
// and memory. On a spread of models, clusters and device counts, it must
// find the same best step time (overall, without PP and with PP) as an
// exhaustive search that simulates every candidate that fits. The device
// counts tried below a count that factors badly, by hand.
//
//===----------------------------------------------------------------------===//

#include "lib/Planner/FewerDevices.h"
#include "lib/Planner/Planner.h"

#include "gtest/gtest.h"

using namespace sched;

namespace {

struct Case {
  const char *model;
  const char *cluster;
  int64_t devices;
  int64_t sequences;
  int64_t seqLen;
  Precision precision;
};

class ExactSearch : public ::testing::TestWithParam<Case> {};

std::optional<double> best(const std::optional<Candidate> &c) {
  if (!c)
    return std::nullopt;
  return c->stepTime;
}

TEST_P(ExactSearch, DefaultFindsWhatExhaustiveFinds) {
  const Case &c = GetParam();
  std::optional<ModelSpec> model = modelPreset(c.model);
  std::optional<ClusterSpec> cluster = clusterPreset(c.cluster);
  ASSERT_TRUE(model && cluster);
  TrainingSpec training;
  training.devices = c.devices;
  training.seqLen = c.seqLen;
  training.globalBatchTokens = c.sequences * c.seqLen;
  training.precision = c.precision;
  CostModel costModel(*model, *cluster, training);
  PlanOptions options;
  options.verify = false;
  options.top = 1;
  llvm::Expected<PlanResult> fast = plan(costModel, options);
  ASSERT_TRUE(static_cast<bool>(fast)) << llvm::toString(fast.takeError());
  options.exhaustive = true;
  llvm::Expected<PlanResult> all = plan(costModel, options);
  ASSERT_TRUE(static_cast<bool>(all)) << llvm::toString(all.takeError());
  EXPECT_FALSE(fast->truncated);
  ASSERT_FALSE(all->ranked.empty());
  ASSERT_FALSE(fast->ranked.empty());
  EXPECT_EQ(fast->ranked.front().stepTime, all->ranked.front().stepTime);
  EXPECT_EQ(best(fast->bestWithoutPipeline), best(all->bestWithoutPipeline));
  EXPECT_EQ(best(fast->bestWithPipeline), best(all->bestWithPipeline));
  // The bounds pruned something, or the check says nothing.
  EXPECT_LT(fast->lowered, all->lowered);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ExactSearch,
    ::testing::Values(
        Case{"llama3-8b", "h100-ib", 64, 128, 8192, Precision::BF16},
        Case{"llama3-8b", "gb200-nvl72", 144, 144, 8192, Precision::BF16},
        Case{"llama3-70b", "h100-ib", 128, 128, 4096, Precision::FP8},
        Case{"llama3-70b", "tpu-v5p", 256, 256, 4096, Precision::BF16},
        Case{"llama3-405b", "h100-ib", 512, 256, 4096, Precision::BF16},
        Case{"llama3-405b", "gb200-nvl72", 512, 256, 4096, Precision::BF16},
        Case{"gpt3-175b", "a100-ib", 256, 256, 2048, Precision::BF16},
        Case{"deepseek-v3", "h800-ib", 256, 128, 4096, Precision::FP8},
        Case{"deepseek-v3", "gb200-nvl72", 256, 128, 4096, Precision::FP8},
        Case{"kimi-k2", "b200-ib", 512, 256, 4096, Precision::FP8},
        Case{"deepseek-v3", "tpu-v5p", 512, 256, 4096, Precision::BF16}),
    [](const ::testing::TestParamInfo<Case> &info) {
      return std::to_string(info.index) + "_" +
             std::string(info.param.cluster).substr(0, 3);
    });

/// The largest multiples of 64, 128, 256 and 512 below the count, at least
/// 90% of it: 2,000 gives 1,984 (64 x 31) and 1,920 (128 x 15); 1,792
/// (256 x 7) is under 1,800.
TEST(FewerDevices, CountsByHand) {
  EXPECT_EQ(fewerDeviceCounts(2000), (std::vector<int64_t>{1984, 1920}));
  EXPECT_EQ(fewerDeviceCounts(200), (std::vector<int64_t>{192}));
  // A multiple of 512 has none; nor does a count whose multiples of 64
  // below it are under 90% of it.
  EXPECT_TRUE(fewerDeviceCounts(2048).empty());
  EXPECT_TRUE(fewerDeviceCounts(100).empty());
  EXPECT_TRUE(fewerDeviceCounts(8).empty());
  // 1,000 gives 960 (64 x 15); 896 (128 x 7) is under 900.
  EXPECT_EQ(fewerDeviceCounts(1000), (std::vector<int64_t>{960}));
}

} // namespace
