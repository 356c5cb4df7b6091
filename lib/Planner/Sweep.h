//===- Sweep.h - the best layout along a cluster figure ---------*- C++ -*-===//
//
// `schedc plan --sweep` (docs/planner.md): the search repeated as one
// figure of the cluster changes (the high-bandwidth domain's size, the
// scale-out bandwidth), keeping the best layout with and without pipeline
// parallelism at each value: where PP stops paying.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_PLANNER_SWEEP_H
#define LIB_PLANNER_SWEEP_H

#include "lib/Planner/Planner.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace sched {

/// The cluster figure a sweep changes.
enum class SweepAxis { DomainSize, ScaleOutBandwidth };

/// "domain_size" or "scale_out_bandwidth".
llvm::StringRef sweepAxisName(SweepAxis axis);
std::optional<SweepAxis> parseSweepAxis(llvm::StringRef name);

/// The values swept when none are given: domain sizes 8 to 512 (at most
/// the devices; powers of two on a torus; 1, 2, 4 up to the devices when
/// fewer than 8), or 1/4x to 8x the cluster's scale-out bandwidth. Never
/// empty for a job of at least one device.
std::vector<double> defaultSweepValues(SweepAxis axis,
                                       const ClusterSpec &cluster,
                                       const TrainingSpec &training);

/// Refuses a value `axis` cannot take, with one line naming it and the
/// range: a domain size is an integer in [1, kMaxDomainSize], a scale-out
/// bandwidth a number of bytes/s in [kMinBandwidth, kMaxBandwidth] (a
/// cluster file's ranges, lib/CostModel/ClusterSpec.h). sweep() checks
/// each value with it; `schedc plan --sweep-values` too, as it reads them.
llvm::Error checkSweepValue(SweepAxis axis, double value);

/// `cluster` with its figure on `axis` set to `value`.
ClusterSpec sweptCluster(const ClusterSpec &cluster, SweepAxis axis,
                         double value);

/// The best layout with and without PP at one value of the sweep.
struct SweepPoint {
  double value = 0;
  std::optional<Candidate> withoutPipeline;
  std::optional<Candidate> withPipeline;
  /// On a torus, the slice size each best layout runs on when it is
  /// smaller than the swept domain (0: the whole domain): a pod is carved
  /// into slices of a smaller swept size that divides it, each a torus of
  /// its own (docs/planner.md, "Sweeps").
  double withoutPipelineSlice = 0;
  double withPipelineSlice = 0;
};

/// Searches at each of `values` with `options` (the report cut to the
/// best, nothing proved); on a torus, along the domain size, a value also
/// keeps the best of the smaller values that divide it, run on slices of
/// that size. Fails as plan() does, on no values, and on a value
/// checkSweepValue refuses.
llvm::Expected<std::vector<SweepPoint>>
sweep(const ModelSpec &model, const ClusterSpec &cluster,
      const TrainingSpec &training, SweepAxis axis,
      llvm::ArrayRef<double> values, PlanOptions options);

/// Where PP stops paying along `points` (in sweep order, the cluster
/// getting better): the first value from which, at every later value too,
/// the best layout without PP fits and is within `tie` of the best with PP
/// (or is faster, or nothing with PP fits). None when PP pays at the last
/// value: it pays over the whole range.
std::optional<double> pipelineStopsPaying(llvm::ArrayRef<SweepPoint> points,
                                          double tie);

} // namespace sched

#endif // LIB_PLANNER_SWEEP_H
