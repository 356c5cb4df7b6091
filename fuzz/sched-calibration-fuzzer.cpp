//===- sched-calibration-fuzzer.cpp - fuzzes a cluster's calibration ------===//
//
// Feeds arbitrary bytes as the `efficiency` object of a cluster file, what
// integrations/torch/calibrate.py and merge_calibrations.py write (measured
// GEMM and attention tables, collective fits, the memory reserve, the
// stack record), behind a valid device, so the input reaches the readers
// of those fields rather than the device's. A file that reads is used: the
// cost model builds a small model's stages from it, whose times and sizes
// must be finite and non-negative (a denormal efficiency once made a
// recommendation at 1,296,368% MFU).
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/ClusterSpec.h"
#include "lib/CostModel/CostModel.h"
#include "lib/CostModel/ModelSpec.h"

#include "llvm/Support/Error.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace sched;

namespace {
constexpr llvm::StringLiteral kDevice =
    R"({"name": "c", "device": {"name": "H100", "peak_flops": {"bf16": 989e12,
 "fp8": 1979e12}, "hbm_bytes": 85520809984, "hbm_bandwidth": 3.35e12},
 "domain_size": 8, "domain_bandwidth": 450e9, "scale_out_bandwidth": 50e9,
 "efficiency": )";

bool finiteAndNonNegative(double value) {
  return std::isfinite(value) && value >= 0;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text = kDevice.str();
  text.append(reinterpret_cast<const char *>(data), size);
  text += "}";
  llvm::Expected<ClusterSpec> cluster = parseClusterSpec(text);
  if (!cluster) {
    llvm::consumeError(cluster.takeError());
    return 0;
  }
  for (double figure :
       {cluster->efficiency.matmul, cluster->efficiency.usableMemory})
    if (!std::isnormal(figure))
      abort();
  std::optional<ModelSpec> model = modelPreset("llama3-8b");
  model->layers = 4;
  TrainingSpec training;
  training.devices = 8;
  training.seqLen = 4096;
  training.globalBatchTokens = 8 * 4096;
  CostModel costs(*model, *cluster, training);
  Layout layout;
  layout.dp = 4;
  layout.tp = 2;
  if (llvm::Error error = costs.checkLayout(layout)) {
    llvm::consumeError(std::move(error));
    return 0;
  }
  for (const StageEstimate &stage : costs.stages(layout))
    for (double figure : {stage.forward, stage.backwardInput,
                          stage.backwardWeight, stage.activationBytes,
                          stage.weightBytes, stage.outputBytes})
      if (!finiteAndNonNegative(figure))
        abort();
  return 0;
}
