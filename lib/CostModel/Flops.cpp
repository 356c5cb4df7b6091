//===- Flops.cpp - model and hardware FLOPs, as Megatron counts them -------===//
//
// Megatron-LM megatron/training/training.py, num_floating_point_operations
// (transformer_flops): the same terms, in the same grouping, so that MFU
// here and MFU in a Megatron log mean one thing.
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/Flops.h"

#include <vector>

using namespace sched;

namespace {
/// Per-token, per-layer forward multiply-adds of the attention block
/// (projections and the causal core), as Megatron's self_attn_term / 6.
struct AttentionTerms {
  double projections = 0;
  double core = 0;
};
} // namespace

double sched::meanKeysPerQuery(double seqLen, int64_t window) {
  const double w = static_cast<double>(window);
  if (window <= 0 || w >= seqLen)
    return seqLen / 2;
  return w - w * w / (2 * seqLen);
}

/// The attention terms of one layer whose queries meet `keys` keys on
/// average (meanKeysPerQuery).
static AttentionTerms attentionTerms(const ModelSpec &model, double keys) {
  const double h = static_cast<double>(model.hidden);
  const double heads = static_cast<double>(model.heads);
  AttentionTerms t;
  if (model.mla) {
    const MlaSpec &mla = *model.mla;
    const double nope = static_cast<double>(mla.qkNopeHeadDim);
    const double rope = static_cast<double>(mla.qkRopeHeadDim);
    const double v = static_cast<double>(mla.vHeadDim);
    const double qLora = static_cast<double>(mla.qLoraRank);
    const double kvLora = static_cast<double>(mla.kvLoraRank);
    const double query = qLora > 0 ? qLora * (h + heads * (nope + rope) + 1)
                                   : h * heads * (nope + rope);
    t.projections = query + kvLora * (h + heads * (nope + v) + 1) +
                    h * rope + heads * v * h;
    t.core = keys * heads * (nope + rope) + keys * heads * v;
    return t;
  }
  const double d = static_cast<double>(model.headDim);
  const double q = heads * d;
  const double kv = static_cast<double>(model.kvHeads) * d;
  t.projections = h * (q + 2 * kv) + q * h;
  t.core = q * keys * 2;
  return t;
}

/// The vocabulary as Megatron pads it: to a multiple of 128 (its default
/// make-vocab-size-divisible-by).
static double paddedVocab(const ModelSpec &model) {
  return static_cast<double>((model.vocab + 127) / 128 * 128);
}

/// The attention multiply-adds of one token over every layer and MTP
/// module (which repeat the last layer's kind), the windowed layers' core
/// over their band, `core` alone when `coreOnly`.
static double attentionPerToken(const ModelSpec &model, int64_t seqLen,
                                double layers, bool coreOnly = false) {
  const double seq = static_cast<double>(seqLen);
  const AttentionTerms full = attentionTerms(model, meanKeysPerQuery(seq, 0));
  const AttentionTerms band =
      attentionTerms(model, meanKeysPerQuery(seq, model.slidingWindow));
  const double windowed =
      static_cast<double>(model.windowedLayersIn(0, model.layers)) +
      (model.isWindowedLayer(model.layers - 1)
           ? layers - static_cast<double>(model.layers)
           : 0);
  const double projections = coreOnly ? 0 : full.projections * layers;
  return projections + full.core * (layers - windowed) + band.core * windowed;
}

double sched::megatronFlopsPerToken(const ModelSpec &model, int64_t seqLen) {
  const double h = static_cast<double>(model.hidden);
  const double mtp = static_cast<double>(model.mtpLayers);
  const double gated = model.mlp == MlpKind::Gated ? 3 : 2;
  // MTP modules repeat the last layer's kind (Megatron adds them to the
  // dense or MoE count by the last layer).
  double moeLayers = 0, denseLayers = 0;
  for (int64_t layer = 0; layer < model.layers; ++layer)
    (model.isMoeLayer(layer) ? moeLayers : denseLayers) += 1;
  (model.isMoeLayer(model.layers - 1) ? moeLayers : denseLayers) += mtp;
  const double layers = static_cast<double>(model.layers) + mtp;

  double mlp = static_cast<double>(model.ffnHidden) * gated * denseLayers;
  if (model.moe) {
    const MoeSpec &moe = *model.moe;
    const double expert = static_cast<double>(moe.expertFfnHidden);
    mlp += expert * static_cast<double>(moe.topK) * gated * moeLayers;
    mlp += expert * static_cast<double>(moe.sharedExperts) * gated * moeLayers;
  }
  const double vocab = paddedVocab(model);
  return 6 * (h * mlp + attentionPerToken(model, seqLen, layers) +
              mtp * (3 * h + 2 * h * h) + h * vocab * (mtp + 1));
}

/// The weight GEMMs' multiply-adds per token of a dense layer that
/// torchtitan's per-operator policy runs again: every second GEMM in call
/// order (Q, K, V, output, gate, up, down with separate projections; QKV,
/// output, fc1, fc2 fused).
static double evenCallMacs(const ModelSpec &model, bool separate) {
  const double h = static_cast<double>(model.hidden);
  const double d = static_cast<double>(model.headDim);
  const double q = static_cast<double>(model.heads) * d * h;
  const double kv = static_cast<double>(model.kvHeads) * d * h;
  const double f = static_cast<double>(model.ffnHidden) * h;
  const bool gated = model.mlp == MlpKind::Gated;
  std::vector<double> calls;
  if (separate)
    calls = {q, kv, kv, q};
  else
    calls = {q + 2 * kv, q};
  if (gated && separate)
    calls.insert(calls.end(), {f, f, f});
  else
    calls.insert(calls.end(), {(gated ? 2 : 1) * f, f});
  double macs = 0;
  for (size_t i = 1; i < calls.size(); i += 2)
    macs += calls[i];
  return macs;
}

double sched::hardwareFlopsPerToken(const ModelSpec &model, int64_t seqLen,
                                    Recompute recompute,
                                    bool separateProjections) {
  const double flops = megatronFlopsPerToken(model, seqLen);
  if (recompute.isNone())
    return flops;
  const double h = static_cast<double>(model.hidden);
  if (recompute.isPerOperator())
    return flops + 2 * static_cast<double>(model.layers) *
                       evenCallMacs(model, separateProjections);
  if (recompute.isFull()) {
    // Every layer's forward again (a third of its three passes); the
    // output layer is not recomputed.
    const double vocab = paddedVocab(model);
    const double head =
        6 * h * vocab * static_cast<double>(model.mtpLayers + 1);
    return flops + (flops - head) / 3;
  }
  // A module's forward again: 2 FLOPs per multiply-add of its matmuls,
  // per token, in every layer that has it (MTP modules repeat the last
  // layer's kind). Norms and activation functions add no matmul FLOPs.
  double dense = 0, moeLayers = 0;
  for (int64_t layer = 0; layer < model.layers; ++layer)
    (model.isMoeLayer(layer) ? moeLayers : dense) += 1;
  (model.isMoeLayer(model.layers - 1) ? moeLayers : dense) +=
      static_cast<double>(model.mtpLayers);
  const double layers = dense + moeLayers;
  const double gated = model.mlp == MlpKind::Gated ? 3 : 2;
  double again = 0;
  if (recompute.recomputes(Recompute::CoreAttention))
    again += 2 * attentionPerToken(model, seqLen, layers, /*coreOnly=*/true);
  if (model.mla && recompute.recomputes(Recompute::MlaUpProjection)) {
    const MlaSpec &mla = *model.mla;
    const double heads = static_cast<double>(model.heads);
    const double q = static_cast<double>(mla.qkNopeHeadDim + mla.qkRopeHeadDim);
    const double up =
        (mla.qLoraRank > 0 ? static_cast<double>(mla.qLoraRank) * heads * q
                           : 0) +
        static_cast<double>(mla.kvLoraRank) * heads *
            static_cast<double>(mla.qkNopeHeadDim + mla.vHeadDim);
    again += 2 * layers * up;
  }
  // A saved-name policy does not run fc2 again: no gradient needs its
  // output.
  if (recompute.recomputes(Recompute::Mlp))
    again += 2 * dense * h * static_cast<double>(model.ffnHidden) *
             (recompute.isNamed() ? gated - 1 : gated);
  if (recompute.isNamed()) {
    // The projections whose outputs it drops: Q, K and V (one GEMM) unless
    // all three are named, MLA's down-projections (unnamed latents), the
    // output projection unless out_proj is named.
    const uint16_t saved = recompute.savedNames();
    const uint16_t qkv =
        Recompute::QueryProj | Recompute::KeyProj | Recompute::ValueProj;
    const double heads = static_cast<double>(model.heads);
    double out = 0;
    if (model.mla) {
      const MlaSpec &mla = *model.mla;
      out = heads * static_cast<double>(mla.vHeadDim) * h;
      again += 2 * layers * h *
               static_cast<double>(mla.qLoraRank + mla.kvLoraRank +
                                   mla.qkRopeHeadDim);
      if (mla.qLoraRank == 0 && (saved & qkv) != qkv)
        again += 2 * layers * h * heads *
                 static_cast<double>(mla.qkNopeHeadDim + mla.qkRopeHeadDim);
    } else {
      const double d = static_cast<double>(model.headDim);
      out = heads * d * h;
      if ((saved & qkv) != qkv)
        again += 2 * layers * h * d *
                 (heads + 2 * static_cast<double>(model.kvHeads));
    }
    if (!(saved & Recompute::OutProj))
      again += 2 * layers * out;
  }
  if (model.moe) {
    const MoeSpec &moe = *model.moe;
    const double expert = h * static_cast<double>(moe.expertFfnHidden) * gated;
    const double shared = static_cast<double>(moe.sharedExperts) * expert;
    if (recompute.recomputes(Recompute::Moe))
      again += 2 * moeLayers *
               (h * static_cast<double>(moe.experts) +
                static_cast<double>(moe.topK) * expert + shared);
    else if (recompute.recomputes(Recompute::SharedExperts))
      again += 2 * moeLayers * shared;
  }
  return flops + again;
}
