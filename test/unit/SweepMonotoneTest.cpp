//===- SweepMonotoneTest.cpp - a better cluster is never slower -----------===//
//
// `schedc plan --sweep` must be monotone where physics is: a bigger
// high-bandwidth domain or more scale-out bandwidth never makes the best
// layout slower, with or without pipeline parallelism. Sweeps both figures
// over a grid (domains that are not powers of two, NVL72's 72, included) for
// dense and MoE models on switched clusters, and a 64-of-72 rack placement;
// a torus along its scale-out bandwidth, and along its domain size over
// pods that each divide the next (a pod runs the layouts of the slices it
// can be carved into: docs/planner.md, "Sweeps"); and checks the best step
// times never increase.
//
//===----------------------------------------------------------------------===//

#include "lib/Planner/Sweep.h"

#include "gtest/gtest.h"

using namespace sched;

namespace {

struct Case {
  const char *model;
  const char *cluster;
  int64_t devices;
  Precision precision;
  /// Devices of each domain placed (0: all).
  int64_t placedPerDomain = 0;
};

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.model << " on " << c.devices << " " << c.cluster;
}

class MonotoneSweep : public ::testing::TestWithParam<Case> {};

/// Checks that the best step time on one side (with or without PP) never
/// increases along `points`, and that once something fits it keeps fitting.
void expectNonIncreasing(llvm::ArrayRef<SweepPoint> points, bool pipelined,
                         const std::string &axis) {
  std::optional<double> previous;
  double previousValue = 0;
  for (const SweepPoint &point : points) {
    const std::optional<Candidate> &best =
        pipelined ? point.withPipeline : point.withoutPipeline;
    if (!best) {
      EXPECT_FALSE(previous) << axis << " " << point.value << ": nothing "
                             << (pipelined ? "with" : "without")
                             << " PP fits, but it did at " << previousValue;
      continue;
    }
    if (previous) {
      EXPECT_LE(best->stepTime, *previous)
          << axis << " " << previousValue << " -> " << point.value << ", "
          << (pipelined ? "with" : "without") << " PP: " << best->layout.str();
    }
    previous = best->stepTime;
    previousValue = point.value;
  }
}

TEST_P(MonotoneSweep, BetterClusterIsNeverSlower) {
  const Case &c = GetParam();
  std::optional<ModelSpec> model = modelPreset(c.model);
  std::optional<ClusterSpec> cluster = clusterPreset(c.cluster);
  ASSERT_TRUE(model && cluster);
  cluster->devicesPerDomain = c.placedPerDomain;
  TrainingSpec training;
  training.devices = c.devices;
  training.seqLen = model->seqLen;
  training.globalBatchTokens = model->globalBatchTokens;
  training.precision = c.precision;
  const std::vector<double> domains = {4, 8, 12, 16, 32, 64, 72, 96, 128, 256};
  std::vector<double> bandwidths;
  for (double f : {0.25, 0.5, 1.0, 2.0, 4.0})
    bandwidths.push_back(f * cluster->scaleOutBandwidth);
  std::vector<std::pair<SweepAxis, std::vector<double>>> axes = {
      {SweepAxis::ScaleOutBandwidth, bandwidths}};
  if (cluster->topology == Topology::Switch)
    axes.push_back({SweepAxis::DomainSize, domains});
  else
    axes.push_back({SweepAxis::DomainSize, {8, 16, 32, 64, 128, 256}});
  for (const auto &[axis, values] : axes) {
    llvm::Expected<std::vector<SweepPoint>> points =
        sweep(*model, *cluster, training, axis, values, PlanOptions());
    ASSERT_TRUE(static_cast<bool>(points))
        << llvm::toString(points.takeError());
    for (bool pipelined : {false, true})
      expectNonIncreasing(*points, pipelined, sweepAxisName(axis).str());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Grid, MonotoneSweep,
    ::testing::Values(Case{"llama3-8b", "h100-ib", 256, Precision::BF16},
                      Case{"llama3-70b", "gb200-nvl72", 512, Precision::FP8},
                      Case{"llama3-70b", "gb200-nvl72", 512, Precision::FP8,
                           64},
                      Case{"llama3-70b", "tpu-v5p", 256, Precision::BF16},
                      Case{"llama3-405b", "h800-ib", 1024, Precision::FP8},
                      Case{"deepseek-v3", "h800-ib", 256, Precision::FP8},
                      Case{"deepseek-v3", "gb200-nvl72", 256, Precision::FP8}));

} // namespace
