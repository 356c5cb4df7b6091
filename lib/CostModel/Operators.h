//===- Operators.h - a layer's forward and backward as kernels --*- C++ -*-===//
//
// Each layer, forward and backward, as the list of operators one device
// runs for one microbatch (docs/cost-model.md, "Operators"): dense GEMMs
// with their shapes, grouped expert GEMMs (tokens per expert from top_k and
// ep), the attention core, and every memory-bound kernel with its bytes
// (norms and residual adds, rotary, activation functions, the router, MoE
// permute and unpermute, cross-entropy over the vocabulary, the FP8
// recipe's casts). Communication is not here (CostModel prices it on the
// links it crosses); Roofline.h times each operator on a device.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_COSTMODEL_OPERATORS_H
#define LIB_COSTMODEL_OPERATORS_H

#include "lib/CostModel/Layout.h"
#include "lib/CostModel/ModelSpec.h"

#include <vector>

namespace sched {

enum class OperatorClass : uint8_t {
  /// A GEMM (or `groups` GEMMs of one shape, grouped experts); in the
  /// attention class when it is the unfused attention core.
  Gemm,
  /// The fused attention core (flash attention).
  Attention,
  /// A kernel bounded by HBM bandwidth.
  MemoryBound,
};

struct Operator {
  const char *name = "";
  OperatorClass kind = OperatorClass::Gemm;
  /// GEMM: (m x k) times (k x n), `groups` times.
  double m = 0, n = 0, k = 0, groups = 1;
  /// The GEMM's precision (the precision recipe decides which GEMMs run
  /// below BF16).
  Precision precision = Precision::BF16;
  /// The GEMM accumulates into FP32 main gradients (weight gradients:
  /// read and written at 4 bytes).
  bool accumulates = false;
  /// Counted as attention time (the unfused core's batched GEMMs).
  bool attentionCore = false;
  /// One grouped GEMM over several experts' rows (not a batched GEMM of
  /// the unfused attention core): runs at the grouped ceiling.
  bool grouped = false;
  /// Attention: FLOPs, and whether it is latent attention (MLA heads).
  double flops = 0;
  bool latent = false;
  /// Attention or a weight GEMM's gradient (data or, with `accumulates`,
  /// weight): the backward.
  bool backward = false;
  /// Attention: the kernel's work per FLOP counted beyond what the causal
  /// curve measures (a sliding window's band visits whole key tiles, a
  /// larger share of them masked than a causal diagonal's); 1 otherwise.
  double workRatio = 1;
  /// Memory-bound: bytes read plus written.
  double bytes = 0;
  /// The recompute modules this operator belongs to (a Recompute::Module
  /// set; 0: only a full recomputation runs it again). A backward operator
  /// carries its forward's (what the overlap pairs set beside an
  /// exchange: ExpertOverlapTerms).
  uint8_t modules = 0;
  /// The tensors it makes (a Recompute::Checkpoint set): a saved-name
  /// policy runs it again when it drops one of them.
  uint16_t makes = 0;
  /// An even-numbered weight GEMM in the layer's call order: torchtitan's
  /// per-operator policy drops its output and runs it again.
  bool evenCall = false;
};

/// A tensor the forward keeps for the backward, per microbatch on one
/// device, and the recompute modules that drop it (the backward makes it
/// again). docs/cost-model.md, "Activations", lists them with their
/// sources.
struct SavedTensor {
  const char *name = "";
  double bytes = 0;
  /// Recompute::Module set whose recomputation drops it; 0: only a full
  /// recomputation does.
  uint8_t droppedBy = 0;
  /// The layer's input, what a full recomputation keeps.
  bool layerInput = false;
  /// Which tensor it is to a saved-name policy (a Recompute::Checkpoint
  /// set): kept when the policy names every one of them.
  uint16_t checkpoint = 0;
  /// Kept in host memory (a saved-name policy's `=offload`).
  bool onHost = false;
};

/// One layer (or the output head) per microbatch on one device, split as
/// the schedule splits the work: forward, backward for inputs (I, with any
/// recomputation), backward for weights (W).
struct LayerOperators {
  std::vector<Operator> forward;
  std::vector<Operator> backwardInput;
  std::vector<Operator> backwardWeight;
  /// The forward again, as recomputation runs it before I.
  std::vector<Operator> recompute;
  /// What the forward keeps for the backward under the layout's
  /// recomputation (the dropped tensors are left out).
  std::vector<SavedTensor> saved;

  /// Bytes kept on the device, and in host memory.
  double savedBytes() const;
  double hostBytes() const;
};

/// The operators of layer kind `moeLayer` (attending within the sliding
/// window when `windowed`) for one microbatch of `layout` on one device.
LayerOperators layerOperators(const ModelSpec &model,
                              const TrainingSpec &training,
                              const Layout &layout, bool moeLayer,
                              bool windowed = false);

/// The output layer and its loss (and each MTP module's projection and
/// second output layer) for one microbatch on one device.
LayerOperators headOperators(const ModelSpec &model,
                             const TrainingSpec &training,
                             const Layout &layout);

} // namespace sched

#endif // LIB_COSTMODEL_OPERATORS_H
