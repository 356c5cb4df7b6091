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
#include "lib/Report/PlanReport.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
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

/// Everything a plan answers, as text: the report's search summary,
/// candidate table and recommendation, then each listed candidate's raw
/// figures at full precision.
std::string answers(const PlanResult &result) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printSearchSummary(os, result);
  printCandidateTable(os, result.ranked);
  printRecommendation(os, result, "");
  auto raw = [&](const Candidate &c) {
    os << llvm::formatv("{0} dp={1} tp={2} ep={3} cp={4} pp={5} vpp={6} "
                        "mb={7} zero={8} {9:e17} {10:e17} {11:e17} {12:e17} "
                        "{13:e17} {14} [{15}] [{16}]\n",
                        c.scheduleName(), c.layout.dp, c.layout.tp, c.layout.ep,
                        c.layout.cp, c.layout.pp, c.layout.vpp,
                        c.layout.microbatches, c.layout.zero, c.stepTime,
                        c.makespan, c.memory.peak, c.bubbleRatio, c.mfu,
                        c.proofResources, c.verdict, c.overflow);
  };
  for (const Candidate &c : result.ranked)
    raw(c);
  for (const Candidate &c : result.overflowing)
    raw(c);
  if (result.bestWithPipeline)
    raw(*result.bestWithPipeline);
  if (result.bestWithoutPipeline)
    raw(*result.bestWithoutPipeline);
  os << result.considered << " " << result.memoryChecked << " "
     << result.lowered << " " << result.verified << " " << result.recommended
     << "\n";
  return text;
}

/// The order cache saves generating orders again and nothing else: the same
/// plans, proofs included, with no cache, while the cache generates fewer
/// orders (or the comparison says nothing).
TEST(OrderCache, AnswersDoNotDependOnIt) {
  struct Setting {
    const char *model;
    const char *cluster;
    int64_t devices;
    int64_t sequences;
    bool verify;
  };
  for (const Setting &s :
       {Setting{"llama3-70b", "h100-ib", 128, 128, true},
        Setting{"deepseek-v3", "h800-ib", 256, 128, false},
        Setting{"llama3-405b", "h100-ib", 512, 256, false}}) {
    SCOPED_TRACE(s.model);
    std::optional<ModelSpec> model = modelPreset(s.model);
    std::optional<ClusterSpec> cluster = clusterPreset(s.cluster);
    ASSERT_TRUE(model && cluster);
    TrainingSpec training;
    training.devices = s.devices;
    training.seqLen = 4096;
    training.globalBatchTokens = s.sequences * training.seqLen;
    CostModel costModel(*model, *cluster, training);
    PlanOptions options;
    options.verify = s.verify;
    llvm::Expected<PlanResult> cached = plan(costModel, options);
    ASSERT_TRUE(static_cast<bool>(cached))
        << llvm::toString(cached.takeError());
    options.orderCacheBytes = 0;
    llvm::Expected<PlanResult> uncached = plan(costModel, options);
    ASSERT_TRUE(static_cast<bool>(uncached))
        << llvm::toString(uncached.takeError());
    EXPECT_LT(cached->ordersGenerated, uncached->ordersGenerated);
    cached->seconds = uncached->seconds = 0; // the one figure that differs
    EXPECT_EQ(answers(*cached), answers(*uncached));
  }
}

} // namespace
