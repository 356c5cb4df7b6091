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
#include "lib/CostModel/Layout.h"
#include "lib/CostModel/ModelSpec.h"
#include "lib/CostModel/Operators.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sched {

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
  /// The device waiting on the host: an MoE block launched eagerly after
  /// it read its token counts (TrainingSpec::moeHost).
  double host = 0;
};

/// What an overlap pair (Megatron-Core's combined 1F1B, DeepSeek's
/// DualPipe) sets side by side in an MoE layer, per microbatch, summed over
/// a stage's MoE layers: the MoE block's own kernels (router, permute,
/// experts, unpermute, shared experts) in F, I and W, and its four
/// exchanges (with expert tensor parallelism, its gathers go with the
/// dispatches and its reduce-scatters with the combines).
struct ExpertOverlapTerms {
  double blockForward = 0;
  double blockBackwardInput = 0;
  double blockBackwardWeight = 0;
  double dispatchForward = 0;
  double combineForward = 0;
  double dispatchBackward = 0;
  double combineBackward = 0;
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
  /// The MoE layers' blocks and exchanges, for the overlap pairs.
  ExpertOverlapTerms expertOverlap;
  /// Bytes kept from F until B (or I); weightGradBytes of them until W.
  double activationBytes = 0;
  double weightGradBytes = 0;
  /// Weights, gradients and optimizer state of this stage on one device
  /// under the layout's ZeRO stage.
  double weightBytes = 0;
  double gradientBytes = 0;
  double optimizerBytes = 0;
  /// Transient buffers the stage's backward holds on top of the kept
  /// activations: the tensors one recomputed layer makes again, and with
  /// ZeRO-3 one layer's unsharded gradient before its reduce-scatter.
  double workingSetBytes = 0;
  /// Of it, what recomputation holds (the rest is ZeRO-3's), and the
  /// parameters of the largest layer (ZeRO-3 gathers and reduces by layer).
  double recomputedBytes = 0;
  double layerParameters = 0;
  /// The last stage's output layer, loss and MTP modules: the tensors of
  /// them activationBytes keeps and their parameters. Their backward runs
  /// and frees them before the stage's last layer starts its own, so that
  /// layer's working set never sits beside them (CostModel::shard).
  double headBytes = 0;
  double headParameters = 0;
  /// An offloaded layer staged on the device (Transformer Engine's version
  /// 1 offload): activationBytes keeps the larger of it and headBytes.
  double stagedBytes = 0;
  double staticBytes() const {
    return weightBytes + gradientBytes + optimizerBytes + workingSetBytes;
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
        training(training) {
    // The stack's cuDNN release picks the attention curve it measured.
    this->cluster.efficiency.useCudnnRelease(training.cudnnRelease);
  }

  const ModelSpec &getModel() const { return model; }
  const ClusterSpec &getCluster() const { return cluster; }
  const TrainingSpec &getTraining() const { return training; }

  /// Why the training configuration cannot be planned (sequence length,
  /// batch, precision the device lacks), or success.
  llvm::Error checkTraining() const;
  /// Why `layout` is impossible for this model, cluster and batch (sets
  /// layout.microbatches when it is possible).
  llvm::Error checkLayout(Layout &layout) const;
  /// Whether `recompute` is modelled for this model (torchtitan's
  /// per-operator policy only for dense layers without MLA).
  bool modelsRecompute(Recompute recompute) const {
    return !recompute.isPerOperator() || !(model.moe || model.mla);
  }

  ParameterCounts parameters() const;
  /// Model FLOPs per token for forward and backward, as Megatron counts
  /// them (Flops.h): MFU's numerator.
  double modelFlopsPerToken() const;
  /// What the devices execute per token, recomputation included.
  double hardwareFlopsPerToken(const Layout &layout) const;
  double modelFlopsPerStep() const {
    return modelFlopsPerToken() *
           static_cast<double>(training.globalBatchTokens);
  }

  /// The pp x vpp stages of `layout` (layers split to balance forward
  /// time), each costed on one device.
  std::vector<StageEstimate> stages(const Layout &layout) const;
  /// Sets the stages' static memory (weights, gradients, optimizer state
  /// and the working set) for the layout's ZeRO stage and shard groups,
  /// the only part of a stage they change: stages() ends with it, and the
  /// search reuses one layout's stages for its other ZeRO stages.
  void shard(std::vector<StageEstimate> &stages, const Layout &layout) const;

  /// What a device keeps per parameter: the stack's weights, gradients
  /// and moments, with the run's FP8 parameters (Memory.h).
  PrecisionRecipe precisionRecipe() const;

  /// One point-to-point transfer between adjacent stages: inside a domain
  /// where the pipeline group has more than one stage on each, else across.
  double p2pTime(const Layout &layout, double bytes) const;
  /// The same per boundary, indexed by the pipeline rank that sends
  /// forward over it (the last rank's boundary leads back to rank 0): a
  /// group spanning domains crosses the scale-out link only between the
  /// stages placed on different domains (docs/cost-model.md, "Pipeline
  /// transfers across domains"). Empty without PP.
  std::vector<double> p2pBoundaryTimes(const Layout &layout,
                                       double bytes) const;

  /// The data-parallel cost of a device holding `held` stages, given the
  /// time of one microbatch's forward and backward on it.
  DataParallelCost dataParallel(const Layout &layout,
                                llvm::ArrayRef<const StageEstimate *> held,
                                double forwardPerMicrobatch,
                                double backwardPerMicrobatch) const;

  /// Usable device memory in bytes: what the reserve leaves, times the
  /// allocator's share of it (Efficiency.h).
  double memoryLimit() const {
    const Efficiency &e = cluster.efficiency;
    return std::max(0.0, cluster.hbmBytes - e.reservedMemory) *
           (training.expandableSegments ? e.usableMemoryExpandable
                                        : e.usableMemory);
  }

  /// Time of a reduce-scatter (or all-gather) of `bytes` over a group of
  /// `size` ranks `stride` apart: inside domains, then across them
  /// (hierarchical, each device sending its 1/local share over its own
  /// scale-out link). Each call moves `message` bytes (the whole tensor
  /// unless it goes in buckets), which sets the bandwidth it reaches.
  double reduceScatterTime(double bytes, int64_t size, int64_t stride,
                           double message = 0) const;
  /// An all-reduce: a reduce-scatter then an all-gather.
  double allReduceTime(double bytes, int64_t size, int64_t stride) const {
    return 2 * reduceScatterTime(bytes, size, stride);
  }
  /// The bandwidth share a collective of `message` bytes reaches on a link
  /// whose collectives reach half their large-message bandwidth at
  /// `halfBytes` (Efficiency.h).
  static double messageShare(double message, double halfBytes) {
    return message <= 0 ? 1 : message / (message + halfBytes);
  }
  /// One expert dispatch (`dispatch`) or combine of `tokens` local tokens
  /// (elements of `elementBytes`) over the layout's `ep` consecutive ranks:
  /// the copies for local experts over the domain link, one copy per
  /// remote domain reached over scale-out (deduplicated, as DeepEP
  /// forwards it). A group inside one domain of a device with a measured
  /// dispatcher (Efficiency::expertExchange) sends one copy per
  /// destination rank at the measured fraction instead.
  double expertAllToAllTime(double tokens, double elementBytes,
                            const Layout &layout, bool dispatch) const;
  /// The ranks of an `ep`-way group a token's top_k experts sit on, on
  /// average, under uniform routing (also the parts of any even split of
  /// the experts, such as the NVLink groups a dispatcher forwards in).
  double expertDestinationRanks(int64_t ep) const;
  /// The same over `ep` ranks, `local` of them on each domain, whose
  /// dispatcher forwards over NVLink inside groups of `peers` ranks (a
  /// divisor of ep, at most `local`) and crosses the NIC between groups.
  double expertAllToAllTime(double tokens, double elementBytes, int64_t ep,
                            int64_t peers, int64_t local) const;
  /// Members of a group of `size` ranks `stride` apart that share one
  /// domain: the group goes on whole domains, the same number on each (the
  /// largest divisor of `size` that the domain's placed devices hold).
  int64_t membersPerDomain(int64_t size, int64_t stride) const;
  /// One point-to-point transfer of `bytes` between ranks `stride` apart,
  /// inside a domain or across.
  double p2pLinkTime(bool inside, int64_t stride, double bytes) const;
  /// Bandwidth (bytes/s, one direction, per device) a group of `size`
  /// ranks `stride` apart gets inside a domain (the torus share).
  double domainBandwidth(int64_t size, int64_t stride) const;

  /// How many layer splits stages() has balanced and kept (for tests and
  /// benchmarks: layouts with the same forward times share one).
  size_t numKeptSplits() const;

private:
  struct LayerCost;
  struct LayerCostCache;
  /// The output layer's (and MTP modules') times, forward, I and W.
  struct HeadTerms {
    StageTerms forward, backwardInput, backwardWeight;
  };
  const HeadTerms &cachedHeadTerms(const Layout &layout) const;
  /// The memo of layer costs, output-layer terms and stage splits.
  LayerCostCache &caches() const;
  /// One layer's costs; they depend on tp, cp, ep, the microbatch size,
  /// recomputation, sequence parallelism and the layer's kind (MoE,
  /// sliding window) only, so the search's many
  /// layouts share them (layerCosts memoizes).
  LayerCost layerCost(const Layout &layout, bool moeLayer, bool windowed) const;
  const LayerCost &cachedLayerCost(const Layout &layout, bool moeLayer,
                                   bool windowed = false) const;
  /// How long an MoE layer's forward waits on the host beyond the
  /// `device` seconds its MoE block runs (kernels and all-to-all):
  /// moeHostForward less that, or 0.
  double moeHostWait(const Layout &layout, double device) const;
  /// The seconds of an operator list, by class, into `terms`; with
  /// `modules`, only the operators of those recompute modules.
  void addOperators(StageTerms &terms, const std::vector<Operator> &ops,
                    const Layout &layout, uint8_t modules = 0) const;

  ModelSpec model;
  ClusterSpec cluster;
  TrainingSpec training;
  mutable std::shared_ptr<LayerCostCache> layerCosts;
};

/// Host time of one MoE block's forward launched eagerly with
/// `localExperts` experts on the device: TrainingSpec::moeHost as the CUDA
/// graphs and the dispatcher leave it (0 when a graph holds the block).
double moeHostForward(const TrainingSpec &training, double localExperts);

/// Tokens per device per step above which data parallelism over links of
/// `bandwidth` bytes/s stays compute-bound (jax-ml scaling book: C / W),
/// times E / k for a mixture of experts and divided by the expert-parallel
/// ways. `expertRatio` is experts / top_k (1 for dense).
double dataParallelCriticalTokens(double peakFlops, double bandwidth,
                                  double expertRatio = 1,
                                  int64_t expertParallel = 1);

} // namespace sched

#endif // LIB_COSTMODEL_COSTMODEL_H
