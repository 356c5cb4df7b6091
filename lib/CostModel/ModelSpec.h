//===- ModelSpec.h - transformer descriptions for the cost model -*- C++ -*-===//
//
// A transformer as the cost model sees it (docs/cost-model.md, "Model"):
// dense or mixture-of-experts, multi-head, grouped-query or multi-head
// latent attention, multi-token prediction. Read from JSON (the field names
// of docs/cost-model.md) or taken from a built-in preset.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_COSTMODEL_MODELSPEC_H
#define LIB_COSTMODEL_MODELSPEC_H

#include "lib/Schedule/Schedule.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sched {

/// The feed-forward block: `gated` has three matrices (SwiGLU), `plain`
/// two (GELU).
enum class MlpKind : uint8_t { Gated, Plain };

struct MoeSpec {
  int64_t experts = 0;
  int64_t topK = 0;
  int64_t sharedExperts = 0;
  int64_t expertFfnHidden = 0;
  /// The first `denseLayers` layers have a dense MLP.
  int64_t denseLayers = 0;
  /// Most domains (nodes) a token's experts may sit on (DeepSeek-V3's
  /// node-limited routing); 0 for no limit.
  int64_t nodeLimit = 0;
};

/// Multi-head latent attention (DeepSeek-V2/V3). qLoraRank 0 means the
/// query is projected without compression.
struct MlaSpec {
  int64_t qLoraRank = 0;
  int64_t kvLoraRank = 0;
  int64_t qkNopeHeadDim = 0;
  int64_t qkRopeHeadDim = 0;
  int64_t vHeadDim = 0;
};

struct ModelSpec {
  std::string name;
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t ffnHidden = 0;
  int64_t heads = 0;
  int64_t kvHeads = 0;
  int64_t headDim = 0;
  int64_t vocab = 0;
  bool tiedEmbeddings = false;
  MlpKind mlp = MlpKind::Gated;
  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;
  int64_t mtpLayers = 0;
  /// Sliding-window attention: a windowed layer's query attends to at
  /// most `slidingWindow` keys (itself and the ones before it); 0 for none.
  /// With `fullAttentionEvery` N > 0 every N-th layer (1-based: layers N,
  /// 2N, ...) attends to the whole causal context instead (Megatron-Core's
  /// window_attn_skip_freq; GPT-OSS alternates, N = 2); 0: every layer is
  /// windowed.
  int64_t slidingWindow = 0;
  int64_t fullAttentionEvery = 0;
  /// Learned per-head attention sinks (GPT-OSS): a logit each head adds to
  /// its softmax's denominator. Heads parameters per layer; no GEMM.
  bool attentionSinks = false;
  /// GPT-OSS's extra elementwise work: its experts' linear layers carry
  /// biases (the second one weighted by each copy's routing probability),
  /// its gated activation clamps its input (`swiglu_limit`, 7; 0: no
  /// clamp), and its rotary embedding is YaRN-scaled (mscale != 1). What
  /// they cost depends on the stack (StackFacts::eagerExpertBias, ...).
  bool expertBias = false;
  double activationClamp = 0;
  bool yarnRope = false;
  /// The auxiliary (load-balancing) loss, if the model has one.
  std::optional<AuxLossScope> auxLoss;
  /// The sequence length and global batch (tokens) the model was trained
  /// with, used when `schedc plan` is not given them; 0 when unknown.
  int64_t seqLen = 0;
  int64_t globalBatchTokens = 0;
  /// For a model read from a HuggingFace config.json: which of its fields
  /// were used and which the cost model cannot use (schedc plan prints it);
  /// empty otherwise.
  std::string importNote;

  /// Whether layer `layer` (0-based) has a mixture-of-experts MLP.
  bool isMoeLayer(int64_t layer) const {
    return moe && layer >= moe->denseLayers;
  }

  /// Whether layer `layer` (0-based) attends within the sliding window.
  bool isWindowedLayer(int64_t layer) const {
    return slidingWindow > 0 &&
           (fullAttentionEvery == 0 || (layer + 1) % fullAttentionEvery != 0);
  }

  /// How many of the layers [from, to) attend within the sliding window.
  int64_t windowedLayersIn(int64_t from, int64_t to) const {
    if (slidingWindow <= 0 || to <= from)
      return 0;
    if (fullAttentionEvery == 0)
      return to - from;
    // Full layers are those with (layer + 1) a multiple of N.
    auto fullBefore = [&](int64_t end) { return end / fullAttentionEvery; };
    return (to - from) - (fullBefore(to) - fullBefore(from));
  }
};

/// The names of the built-in model presets.
std::vector<llvm::StringRef> modelPresetNames();

/// The preset called `name`, if any.
std::optional<ModelSpec> modelPreset(llvm::StringRef name);

/// Parses a model description from JSON text; errors name the field
/// ("layers: expected a positive integer").
llvm::Expected<ModelSpec> parseModelSpec(llvm::StringRef jsonText);

/// A preset name, or the path of a JSON file.
llvm::Expected<ModelSpec> loadModelSpec(llvm::StringRef nameOrPath);

} // namespace sched

#endif // LIB_COSTMODEL_MODELSPEC_H
