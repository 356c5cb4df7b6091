//===- FewerDevices.cpp - leave devices idle when the count factors badly -===//

#include "lib/Planner/FewerDevices.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace sched;

std::vector<int64_t> sched::fewerDeviceCounts(int64_t devices) {
  std::vector<int64_t> counts;
  for (int64_t granule : {64, 128, 256, 512}) {
    const int64_t count = devices / granule * granule;
    if (count == devices || count <= 0 ||
        static_cast<double>(count) < 0.9 * static_cast<double>(devices))
      continue;
    if (!llvm::is_contained(counts, count))
      counts.push_back(count);
  }
  return counts;
}

std::optional<FewerDevices>
sched::suggestFewerDevices(const ModelSpec &model, const ClusterSpec &cluster,
                           const TrainingSpec &training, PlanOptions options,
                           double allDevicesStepTime) {
  options.top = 1;
  options.verify = false;
  options.verifyAll = false;
  options.progress = nullptr;
  std::optional<FewerDevices> suggestion;
  double bestTime = allDevicesStepTime;
  for (int64_t count : fewerDeviceCounts(training.devices)) {
    TrainingSpec fewer = training;
    fewer.devices = count;
    CostModel costs(model, cluster, fewer);
    llvm::Expected<PlanResult> result = plan(costs, options);
    if (!result) {
      // No layout of this count suits the batch: not a suggestion.
      llvm::consumeError(result.takeError());
      continue;
    }
    if (result->ranked.empty() || !(result->ranked.front().stepTime < bestTime))
      continue;
    bestTime = result->ranked.front().stepTime;
    suggestion =
        FewerDevices{count, result->ranked.front(), allDevicesStepTime};
  }
  return suggestion;
}
