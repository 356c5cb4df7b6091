//===- Layout.h - training configuration and parallel layout ----*- C++ -*-===//
//
// What the cost model is asked about besides the model and the cluster: the
// training run (devices, sequence, batch, precision, attention kernel) and
// the parallel layout (dp/tp/pp/vpp/ep/cp, sequence parallelism, ZeRO
// stage, recomputation, microbatch size). docs/cost-model.md and
// docs/planner.md describe each field.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_COSTMODEL_LAYOUT_H
#define LIB_COSTMODEL_LAYOUT_H

#include "lib/CostModel/ClusterSpec.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace sched {

/// What the backward pass recomputes: nothing, the attention core and the
/// MLP's activation function (Korthikanti et al. 2022, "selective"), or
/// the whole layer from its input.
enum class Recompute : uint8_t { None, Selective, Full };

llvm::StringRef recomputeName(Recompute recompute);
std::optional<Recompute> parseRecompute(llvm::StringRef name);

/// How the attention core runs: fused (FlashAttention / cuDNN SDPA, the
/// scores never reach HBM) or unfused (two batched GEMMs around a softmax
/// over the materialized scores, as Megatron-LM ran before flash attention:
/// Korthikanti et al. 2022 keep the 5·a·s/h score term).
enum class AttentionKernel : uint8_t { Flash, Unfused };

llvm::StringRef attentionKernelName(AttentionKernel kernel);
std::optional<AttentionKernel> parseAttentionKernel(llvm::StringRef name);

struct TrainingSpec {
  int64_t devices = 1;
  int64_t seqLen = 4096;
  int64_t globalBatchTokens = 0;
  Precision precision = Precision::BF16;
  AttentionKernel attention = AttentionKernel::Flash;
  /// Tensor-parallel collectives pipelined with the GEMMs beside them
  /// (Transformer Engine's userbuffers, Megatron's --tp-comm-overlap): on
  /// by default, as modern Megatron, NeMo and torchtitan stacks run.
  bool tensorParallelOverlap = true;

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
  /// Sequence parallelism with tensor parallelism (Korthikanti et al.
  /// 2022): norms and dropout on a 1/tp slice of the tokens, all-gathers
  /// and reduce-scatters in place of all-reduces.
  bool sequenceParallel = true;
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
  /// "dp=64,tp=8,pp=16,vpp=2,ep=8,cp=1" (and ",sp=0" without sequence
  /// parallelism).
  std::string str() const;
};

/// Parses "dp=64,tp=8,pp=16,vpp=2,ep=1,cp=1,sp=1" (any subset; others 1).
llvm::Expected<Layout> parseLayout(llvm::StringRef text);

} // namespace sched

#endif // LIB_COSTMODEL_LAYOUT_H
