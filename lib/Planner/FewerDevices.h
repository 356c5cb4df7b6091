//===- FewerDevices.h - suggesting fewer devices ----------------*- C++ -*-===//
//
// A device count that factors badly (2,000 = 2^4 x 5^3) forces layouts
// with odd pipeline depths or data-parallel widths. `schedc plan` also
// searches the largest counts below it that are multiples of 64, 128, 256
// and 512, down to 90% of the devices, and suggests one when the same
// global batch then runs in a shorter step (docs/planner.md).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_PLANNER_FEWERDEVICES_H
#define LIB_PLANNER_FEWERDEVICES_H

#include "lib/Planner/Planner.h"

#include <optional>
#include <vector>

namespace sched {

/// The device counts tried below `devices`: for g in 64, 128, 256, 512 the
/// largest multiple of g below `devices` and at least 90% of it, largest
/// first, without repeats.
std::vector<int64_t> fewerDeviceCounts(int64_t devices);

/// A smaller device count whose best layout beats the best on all devices.
struct FewerDevices {
  int64_t devices = 0;
  Candidate best;
  /// The best step time on all the devices (infinite when none fit).
  double allDevicesStepTime = 0;
};

/// Searches each of fewerDeviceCounts(training.devices) with `options` (cut
/// to the best, nothing proved) and returns the count whose best step time
/// is shortest, if it is shorter than `allDevicesStepTime`. Counts that
/// leave no layout (the batch does not split) are skipped.
std::optional<FewerDevices> suggestFewerDevices(const ModelSpec &model,
                                                const ClusterSpec &cluster,
                                                const TrainingSpec &training,
                                                PlanOptions options,
                                                double allDevicesStepTime);

} // namespace sched

#endif // LIB_PLANNER_FEWERDEVICES_H
