//===- Sweep.cpp - the best layout along a cluster figure -----------------===//

#include "lib/Planner/Sweep.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace sched;

llvm::StringRef sched::sweepAxisName(SweepAxis axis) {
  return axis == SweepAxis::DomainSize ? "domain_size" : "scale_out_bandwidth";
}

std::optional<SweepAxis> sched::parseSweepAxis(llvm::StringRef name) {
  for (SweepAxis axis : {SweepAxis::DomainSize, SweepAxis::ScaleOutBandwidth})
    if (name == sweepAxisName(axis))
      return axis;
  return std::nullopt;
}

std::vector<double> sched::defaultSweepValues(SweepAxis axis,
                                              const ClusterSpec &cluster,
                                              const TrainingSpec &training) {
  std::vector<double> values;
  if (axis == SweepAxis::DomainSize) {
    const double devices = static_cast<double>(training.devices);
    for (double v : {8.0, 16.0, 32.0, 64.0, 72.0, 128.0, 256.0, 512.0})
      if (v <= devices && (v != 72.0 || cluster.topology != Topology::Torus3D))
        values.push_back(v);
    // Fewer than 8 devices: the powers of two up to them (1, 2, 4), so that
    // a small job sweeps something too.
    if (values.empty())
      for (double v = 1; v <= devices; v *= 2)
        values.push_back(v);
    return values;
  }
  for (double f : {0.25, 0.5, 1.0, 2.0, 4.0, 8.0})
    values.push_back(f * cluster.scaleOutBandwidth);
  return values;
}

llvm::Error sched::checkSweepValue(SweepAxis axis, double value) {
  if (axis == SweepAxis::DomainSize) {
    if (value >= 1 && value <= static_cast<double>(kMaxDomainSize) &&
        value == std::floor(value))
      return llvm::Error::success();
    return llvm::createStringError(
        llvm::formatv("domain size {0} is not an integer in [1, 2^24] (a "
                      "cluster's domain_size)",
                      llvm::format("%.12g", value))
            .str());
  }
  if (value >= kMinBandwidth && value <= kMaxBandwidth)
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::formatv("scale-out bandwidth {0} bytes/s is outside [1e6, 1e15] "
                    "(1 MB/s to 1 PB/s per device, a cluster's "
                    "scale_out_bandwidth: below it a step takes longer than "
                    "any training run; docs/limits.md)",
                    llvm::format("%.12g", value))
          .str());
}

ClusterSpec sched::sweptCluster(const ClusterSpec &cluster, SweepAxis axis,
                                double value) {
  ClusterSpec swept = cluster;
  if (axis == SweepAxis::DomainSize) {
    // Each domain leaves as many devices unplaced as the cluster's does
    // (8 of a 72-device rack placed 64 to a rack), at least one placed.
    const int64_t size = static_cast<int64_t>(value);
    const int64_t unplaced = cluster.domainSize - cluster.placedPerDomain();
    swept.domainSize = size;
    swept.devicesPerDomain =
        unplaced > 0 ? std::max<int64_t>(1, size - unplaced) : 0;
  } else
    swept.scaleOutBandwidth = value;
  return swept;
}

/// A torus pod can be carved into smaller slices, each a torus of its own
/// (TPU slices get their wraparound links from the optical switches), that
/// talk over the data-centre network as separate pods do: a layout found
/// for a smaller swept domain that divides a larger one runs on the larger
/// one too, at the same time. The torus model gives a group more axes on a
/// smaller pod (cost-model.md), so without this a bigger pod could look
/// slower than the slices it holds.
static void keepSmallerSlices(std::vector<SweepPoint> &points) {
  auto better = [](const std::optional<Candidate> &x,
                   const std::optional<Candidate> &y) {
    return x && (!y || x->stepTime < y->stepTime);
  };
  const std::vector<SweepPoint> own = points;
  for (size_t i = 0; i < points.size(); ++i)
    for (size_t j = 0; j < points.size(); ++j) {
      const double smaller = own[j].value, larger = points[i].value;
      if (!(smaller < larger) || std::fmod(larger, smaller) != 0)
        continue;
      if (better(own[j].withoutPipeline, points[i].withoutPipeline)) {
        points[i].withoutPipeline = own[j].withoutPipeline;
        points[i].withoutPipelineSlice = smaller;
      }
      if (better(own[j].withPipeline, points[i].withPipeline)) {
        points[i].withPipeline = own[j].withPipeline;
        points[i].withPipelineSlice = smaller;
      }
    }
}

llvm::Expected<std::vector<SweepPoint>>
sched::sweep(const ModelSpec &model, const ClusterSpec &cluster,
             const TrainingSpec &training, SweepAxis axis,
             llvm::ArrayRef<double> values, PlanOptions options) {
  if (values.empty())
    return llvm::createStringError("a sweep needs at least one value");
  for (double value : values)
    if (llvm::Error error = checkSweepValue(axis, value))
      return std::move(error);
  options.top = 1;
  options.verify = false;
  std::vector<SweepPoint> points;
  for (double value : values) {
    CostModel costs(model, sweptCluster(cluster, axis, value), training);
    llvm::Expected<PlanResult> result = plan(costs, options);
    if (!result)
      return result.takeError();
    points.push_back(
        {value, result->bestWithoutPipeline, result->bestWithPipeline});
  }
  if (axis == SweepAxis::DomainSize && cluster.topology == Topology::Torus3D)
    keepSmallerSlices(points);
  return points;
}

/// Whether the best layout without PP is as good as PP at `point`: it fits,
/// and it is within `tie` of the best with PP or nothing with PP fits.
static bool withoutPipelineTies(const SweepPoint &point, double tie) {
  if (!point.withoutPipeline)
    return false;
  return !point.withPipeline || point.withoutPipeline->stepTime <=
                                    (1 + tie) * point.withPipeline->stepTime;
}

std::optional<double>
sched::pipelineStopsPaying(llvm::ArrayRef<SweepPoint> points, double tie) {
  std::optional<double> from;
  for (const SweepPoint &point : points) {
    if (!withoutPipelineTies(point, tie))
      from.reset();
    else if (!from)
      from = point.value;
  }
  return from;
}
