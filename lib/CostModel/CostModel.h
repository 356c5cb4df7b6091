//===- CostModel.h - times, sizes and traffic of a training step -*- C++ -*-===//
//
// From a model, a cluster, a training configuration and a parallel layout,
// the cost model gives what the planner needs (docs/cost-model.md states
// every formula with its source):
//   - parameter counts and model FLOPs (MFU's numerator);
//   - per pipeline stage and microbatch: F, I and W times on one device
//     (matmuls, attention, memory-bound work, tensor-, context- and
//     expert-parallel communication), the activation bytes it keeps, the
//     bytes it sends to the next stage, and the static bytes (weights,
//     gradients, optimizer state) it pins;
//   - the data-parallel traffic of the step and how much of it hides.
// What the pipeline schedule keeps in flight is not here: the planner
// lowers a real schedule and the verifier and simulator measure it.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_COSTMODEL_COSTMODEL_H
#define LIB_COSTMODEL_COSTMODEL_H

#include "lib/CostModel/ClusterSpec.h"
#include "lib/CostModel/ModelSpec.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sched {

/// What the backward pass recomputes: nothing, the attention core and the
/// MLP's activation function (Korthikanti et al. 2022, "selective"), or
/// the whole layer from its input.
enum class Recompute : uint8_t { None, Selective, Full };

llvm::StringRef recomputeName(Recompute recompute);
std::optional<Recompute> parseRecompute(llvm::StringRef name);

struct TrainingSpec {
  int64_t devices = 1;
  int64_t seqLen = 4096;
  int64_t globalBatchTokens = 0;
  Precision precision = Precision::BF16;

  int64_t globalBatchSequences() const { return globalBatchTokens / seqLen; }
};

/// How the devices are split. Ranks are laid out tp fastest, then cp, then
/// dp, then pp (Megatron's order); expert parallelism takes `ep`
/// consecutive ranks of the tp x cp x dp block.
struct Layout {
  int64_t dp = 1;
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t vpp = 1;
  int64_t ep = 1;
  int64_t cp = 1;
  /// ZeRO stage: 0 replicated, 1 optimizer state sharded, 2 also
  /// gradients, 3 also parameters (FSDP).
  int zero = 1;
  Recompute recompute = Recompute::None;
  int64_t microbatchSize = 1;
  /// Set by checkLayout: global batch / (dp x microbatchSize).
  int64_t microbatches = 0;

  int64_t devices() const { return dp * tp * pp * cp; }
  /// Expert-data-parallel ranks: the tp x cp x dp block over ep.
  int64_t expertDataParallel() const { return dp * cp * tp / ep; }
  /// "dp=64,tp=8,pp=16,vpp=2,ep=8,cp=1".
  std::string str() const;
};

/// Parses "dp=64,tp=8,pp=16,vpp=2,ep=1,cp=1" (any subset; others 1).
llvm::Expected<Layout> parseLayout(llvm::StringRef text);

/// Parameter counts of the main model (multi-token-prediction modules are
/// extra, as DeepSeek-V3 reports 671B without them).
struct ParameterCounts {
  double total = 0;
  /// Used per token: routed experts count top_k of experts.
  double active = 0;
  /// Input embedding table (not a matmul; MFU leaves it out).
  double embedding = 0;
};

/// Time of one part of a stage's work, in seconds per microbatch.
struct StageTerms {
  double matmul = 0;
  double attention = 0;
  double memoryBound = 0;
  double tensorParallel = 0;
  double contextParallel = 0;
  double expertParallel = 0;
  double recompute = 0;
};

/// One pipeline stage on one device, per microbatch.
struct StageEstimate {
  /// Layers [firstLayer, firstLayer + numLayers); the first stage holds
  /// the embedding, the last the output head and MTP modules.
  int64_t firstLayer = 0;
  int64_t numLayers = 0;
  double forward = 0;
  double backwardInput = 0;
  double backwardWeight = 0;
  StageTerms forwardTerms;
  StageTerms backwardTerms;
  /// Bytes kept from F until B (or I); weightGradBytes of them until W.
  double activationBytes = 0;
  double weightGradBytes = 0;
  /// Weights, gradients and optimizer state of this stage on one device
  /// under the layout's ZeRO stage.
  double weightBytes = 0;
  double gradientBytes = 0;
  double optimizerBytes = 0;
  double staticBytes() const {
    return weightBytes + gradientBytes + optimizerBytes;
  }
  /// Parameters on one device, split by the group their gradients are
  /// reduced over: dense over dp x cp, routed experts over expert-dp.
  double denseParameters = 0;
  double expertParameters = 0;
  /// Bytes of the activation sent to the next stage (and of the gradient
  /// that comes back).
  double outputBytes = 0;
};

/// Data-parallel (and FSDP) traffic of one device for the step.
struct DataParallelCost {
  /// Total time of the collectives, and what does not hide under compute.
  double total = 0;
  double exposed = 0;
  /// The optimizer's update (memory-bound).
  double optimizer = 0;
};

class CostModel {
public:
  CostModel(ModelSpec model, ClusterSpec cluster, TrainingSpec training)
      : model(std::move(model)), cluster(std::move(cluster)),
        training(training) {}

  const ModelSpec &getModel() const { return model; }
  const ClusterSpec &getCluster() const { return cluster; }
  const TrainingSpec &getTraining() const { return training; }

  /// Why the training configuration cannot be planned (sequence length,
  /// batch, precision the device lacks), or success.
  llvm::Error checkTraining() const;
  /// Why `layout` is impossible for this model, cluster and batch (sets
  /// layout.microbatches when it is possible).
  llvm::Error checkLayout(Layout &layout) const;

  ParameterCounts parameters() const;
  /// Model FLOPs per token for forward and backward: 6 x the matmul
  /// parameters a token passes through (active experts, the output head,
  /// MTP modules; not the input embedding or norms) plus attention's
  /// 6 x layers x heads x (d_qk + d_v) x seq_len (PaLM, appendix B).
  double modelFlopsPerToken() const;
  double modelFlopsPerStep() const {
    return modelFlopsPerToken() * static_cast<double>(training.globalBatchTokens);
  }

  /// The pp x vpp stages of `layout` (layers split to balance forward
  /// time), each costed on one device.
  std::vector<StageEstimate> stages(const Layout &layout) const;

  /// One point-to-point transfer between adjacent stages.
  double p2pTime(const Layout &layout, double bytes) const;

  /// The data-parallel cost of a device holding `held` stages, given the
  /// time of one microbatch's forward and backward on it.
  DataParallelCost dataParallel(const Layout &layout,
                                const std::vector<const StageEstimate *> &held,
                                double forwardPerMicrobatch,
                                double backwardPerMicrobatch) const;

  /// Usable device memory in bytes.
  double memoryLimit() const {
    return cluster.hbmBytes * cluster.efficiency.usableMemory;
  }

  /// Time of a reduce-scatter (or all-gather) of `bytes` over a group of
  /// `size` ranks `stride` apart: inside domains, then across them
  /// (hierarchical, each device sending its 1/local share over its own
  /// scale-out link).
  double reduceScatterTime(double bytes, int64_t size, int64_t stride) const;
  /// An all-reduce: a reduce-scatter then an all-gather.
  double allReduceTime(double bytes, int64_t size, int64_t stride) const {
    return 2 * reduceScatterTime(bytes, size, stride);
  }
  /// An all-to-all in which every member sends `bytes` spread evenly over
  /// the `size` members (ranks `stride` apart).
  double allToAllTime(double bytes, int64_t size, int64_t stride) const;
  /// Members of a group of `size` ranks `stride` apart that share one
  /// domain.
  int64_t membersPerDomain(int64_t size, int64_t stride) const;
  /// Bandwidth (bytes/s, one direction, per device) a group of `size`
  /// ranks `stride` apart gets inside a domain (the torus share).
  double domainBandwidth(int64_t size, int64_t stride) const;

private:
  struct LayerCost;
  LayerCost layerCost(const Layout &layout, bool moeLayer) const;

  ModelSpec model;
  ClusterSpec cluster;
  TrainingSpec training;
};

/// Tokens per device per step above which data parallelism over links of
/// `bandwidth` bytes/s stays compute-bound (jax-ml scaling book: C / W),
/// times E / k for a mixture of experts and divided by the expert-parallel
/// ways. `expertRatio` is experts / top_k (1 for dense).
double dataParallelCriticalTokens(double peakFlops, double bandwidth,
                                  double expertRatio = 1,
                                  int64_t expertParallel = 1);

} // namespace sched

#endif // LIB_COSTMODEL_COSTMODEL_H
