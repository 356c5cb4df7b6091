//===- sched-description-fuzzer.cpp - fuzzes the description readers ------===//
//
// Feeds arbitrary bytes to the model and the cluster description readers
// (lib/CostModel: `schedc plan --model x.json --cluster y.json` and
// schedc.plan read them so). Bad input must end in an error naming the
// field, never in a crash or an allocation the input sized; a description
// that reads must hold only the figures the readers promise.
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/ClusterSpec.h"
#include "lib/CostModel/ModelSpec.h"

#include "llvm/Support/Error.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>

using namespace sched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (llvm::Expected<ModelSpec> model = parseModelSpec(text)) {
    // mtp_layers of 2^24 took 17 GB in the cost model's head operators.
    if (model->layers < 1 || model->layers > (int64_t(1) << 24) ||
        model->seqLen > (int64_t(1) << 24) || model->mtpLayers > 1024)
      abort();
  } else {
    llvm::consumeError(model.takeError());
  }
  if (llvm::Expected<ClusterSpec> cluster = parseClusterSpec(text)) {
    // Every figure finite and normal: a denormal efficiency once made a
    // recommendation at 1,296,368% MFU.
    for (double figure :
         {cluster->peakBf16, cluster->hbmBytes, cluster->hbmBandwidth,
          cluster->domainBandwidth, cluster->scaleOutBandwidth,
          cluster->efficiency.matmul, cluster->efficiency.usableMemory})
      if (!std::isnormal(figure))
        abort();
  } else {
    llvm::consumeError(cluster.takeError());
  }
  return 0;
}
