//===- Operators.cpp - a layer's forward and backward as kernels ----------===//
//
// docs/cost-model.md, "Operators", lists each operator with its shape and
// bytes. Shapes are per device: tensor parallelism splits the columns of
// column-parallel GEMMs and the rows of row-parallel ones over `tp`;
// sequence parallelism runs the norms and residual adds on 1/tp of the
// tokens; context parallelism splits the sequence over `cp`.
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/Operators.h"

using namespace sched;

/// Bytes of a BF16 element.
static constexpr double kBf16 = 2;

namespace {
/// Appends operators and their backward counterparts to a LayerOperators.
class LayerBuilder {
public:
  LayerBuilder(LayerOperators &ops, bool fp8) : ops(ops), fp8(fp8) {}

  /// A weight GEMM (m x k)(k x n): the data gradient (m x n)(n x k) goes to
  /// I, the weight gradient (k x m)(m x n) to W, accumulated into FP32 main
  /// gradients. FP8 GEMMs quantize their input in the forward (a row-wise
  /// and a transposed copy: read 2 bytes, write 1 + 1) and the incoming
  /// gradient in the backward.
  void gemm(const char *name, double m, double n, double k,
            bool lowPrecision = true, double groups = 1) {
    const bool f = fp8 && lowPrecision;
    Operator forward = gemmOp(name, m, n, k, groups, f);
    ops.forward.push_back(forward);
    ops.backwardInput.push_back(gemmOp(name, m, k, n, groups, f));
    Operator weight = gemmOp(name, k, n, m, groups, f);
    weight.accumulates = true;
    ops.backwardWeight.push_back(weight);
    if (f) {
      memory("fp8 cast", groups * m * k * 4, groups * m * n * 4);
    }
  }

  /// A GEMM of the unfused attention core (no weights): both gradients go
  /// to I.
  void coreGemm(const char *name, double m, double n, double k,
                double groups) {
    Operator forward = gemmOp(name, m, n, k, groups, false);
    forward.attentionCore = true;
    ops.forward.push_back(forward);
    Operator a = gemmOp(name, m, k, n, groups, false);
    Operator b = gemmOp(name, k, n, m, groups, false);
    a.attentionCore = b.attentionCore = true;
    ops.backwardInput.push_back(a);
    ops.backwardInput.push_back(b);
  }

  /// The fused attention core: its backward does 2.5x the forward's FLOPs
  /// (5 batched matmuls against 2; cudnn-frontend's FLOP convention).
  void attention(double flops, bool latent) {
    Operator op;
    op.name = "attention";
    op.kind = OperatorClass::Attention;
    op.flops = flops;
    op.latent = latent;
    ops.forward.push_back(op);
    op.flops = 2.5 * flops;
    op.backward = true;
    ops.backwardInput.push_back(op);
  }

  /// A memory-bound kernel moving `bytes` forward and `backwardBytes`
  /// backward (by default twice as many: it reads the saved input and the
  /// incoming gradient and writes the outgoing one).
  void memory(const char *name, double bytes, double backwardBytes = -1) {
    Operator op;
    op.name = name;
    op.kind = OperatorClass::MemoryBound;
    op.bytes = bytes;
    ops.forward.push_back(op);
    op.bytes = backwardBytes < 0 ? 2 * bytes : backwardBytes;
    ops.backwardInput.push_back(op);
  }

  /// Marks the operators added since `mark` as the ones selective
  /// recomputation runs again.
  size_t mark() const { return ops.forward.size(); }
  void recomputeSince(size_t mark) {
    ops.recompute.insert(ops.recompute.end(), ops.forward.begin() + mark,
                         ops.forward.end());
  }

private:
  static Operator gemmOp(const char *name, double m, double n, double k,
                         double groups, bool fp8) {
    Operator op;
    op.name = name;
    op.kind = OperatorClass::Gemm;
    op.m = m;
    op.n = n;
    op.k = k;
    op.groups = groups;
    op.fp8 = fp8;
    return op;
  }

  LayerOperators &ops;
  bool fp8;
};

/// Token counts of one microbatch on one device.
struct Tokens {
  /// Sequence length and the tokens of the context-parallel chunk.
  double seq = 0;
  double full = 0;
  /// Those one tensor-parallel rank normalizes (sequence parallelism).
  double local = 0;
  /// Those one tensor-parallel rank routes to experts.
  double routed = 0;
  double tp = 1;
  double sequences = 1;
};
} // namespace

static Tokens tokensOf(const TrainingSpec &training, const Layout &layout) {
  Tokens t;
  t.seq = static_cast<double>(training.seqLen);
  t.sequences = static_cast<double>(layout.microbatchSize);
  t.tp = static_cast<double>(layout.tp);
  t.full = t.sequences * t.seq / static_cast<double>(layout.cp);
  t.local = layout.sequenceParallel ? t.full / t.tp : t.full;
  t.routed = t.full / t.tp;
  return t;
}

static void attentionBlock(LayerBuilder &b, const ModelSpec &model,
                           const TrainingSpec &training, const Layout &layout,
                           const Tokens &t) {
  const double h = static_cast<double>(model.hidden);
  const double heads = static_cast<double>(model.heads) / t.tp;
  // Pre-norm and the residual add: read h, write h; read 2h, write h.
  b.memory("norm+residual", t.local * h * kBf16 * 5);
  double qkDim = 0, vDim = 0, ropeDim = 0;
  if (model.mla) {
    const MlaSpec &mla = *model.mla;
    qkDim = static_cast<double>(mla.qkNopeHeadDim + mla.qkRopeHeadDim);
    vDim = static_cast<double>(mla.vHeadDim);
    ropeDim = static_cast<double>(mla.qkRopeHeadDim);
    const double qLora = static_cast<double>(mla.qLoraRank);
    const double kvLora = static_cast<double>(mla.kvLoraRank);
    if (qLora > 0) {
      b.gemm("q down", t.full, qLora, h);
      b.memory("q norm", t.full * qLora * kBf16 * 2);
      b.gemm("q up", t.full, heads * qkDim, qLora);
    } else {
      b.gemm("q", t.full, heads * qkDim, h);
    }
    b.gemm("kv down", t.full, kvLora + ropeDim, h);
    b.memory("kv norm", t.full * kvLora * kBf16 * 2);
    b.gemm("kv up", t.full,
           heads * static_cast<double>(mla.qkNopeHeadDim + mla.vHeadDim),
           kvLora);
    b.memory("rotary", t.full * (heads + 1) * ropeDim * kBf16 * 2);
  } else {
    const double d = static_cast<double>(model.headDim);
    const double kvHeads =
        std::max(1.0, static_cast<double>(model.kvHeads) / t.tp);
    qkDim = vDim = ropeDim = d;
    b.gemm("qkv", t.full, (heads + 2 * kvHeads) * d, h);
    b.memory("rotary", t.full * (heads + kvHeads) * d * kBf16 * 2);
  }
  const size_t core = b.mark();
  if (training.attention == AttentionKernel::Flash) {
    // Causal: each query meets seq/2 keys on average (Megatron counts it
    // so); two matmuls of 2 FLOPs per multiply-add.
    const double flops =
        t.full * heads * 2 * (qkDim + vDim) * t.seq / 2;
    b.attention(flops, model.mla.has_value());
  } else {
    // Megatron-LM before flash attention: QK^T and (QK^T)V as batched
    // GEMMs over the whole (masked) score matrix, with scale, mask,
    // softmax and dropout over the scores in between: forward read 2 +
    // write 2 bytes (fused softmax), dropout read 2, write 2 + a 1-byte
    // mask; backward 11 bytes per score.
    const double queries = t.full / t.sequences;
    const double groups = t.sequences * heads;
    b.coreGemm("scores", queries, t.seq, qkDim, groups);
    b.memory("softmax+dropout", groups * queries * t.seq * 9,
             groups * queries * t.seq * 11);
    b.coreGemm("context", queries, vDim, t.seq, groups);
  }
  b.recomputeSince(core);
  b.gemm("attention out", t.full, h, heads * vDim);
}

static void denseMlp(LayerBuilder &b, const ModelSpec &model, const Tokens &t,
                     double width, const char *fc1, const char *fc2) {
  const double h = static_cast<double>(model.hidden);
  if (model.mlp == MlpKind::Gated) {
    b.gemm(fc1, t.full, 2 * width, h);
    // SwiGLU: read gate and up, write their product.
    b.memory("swiglu", t.full * 3 * width * kBf16);
  } else {
    b.gemm(fc1, t.full, width, h);
    b.memory("gelu", t.full * 2 * width * kBf16);
  }
  b.gemm(fc2, t.full, h, width);
}

static void moeMlp(LayerBuilder &b, const ModelSpec &model,
                   const TrainingSpec &training, const Layout &layout,
                   const Tokens &t) {
  const MoeSpec &moe = *model.moe;
  const double h = static_cast<double>(model.hidden);
  const double experts = static_cast<double>(moe.experts);
  const double topK = static_cast<double>(moe.topK);
  const double width = static_cast<double>(moe.expertFfnHidden);
  const double ep = static_cast<double>(layout.ep);
  const bool fp8 = training.precision == Precision::FP8;
  // The router (kept in higher precision by Megatron/TE and DeepSeek), its
  // softmax and top-k over the experts' FP32 scores.
  b.gemm("router", t.routed, experts, h, /*lowPrecision=*/false);
  b.memory("top-k", t.routed * experts * 4 * 3);
  // Permute each token's top_k copies into expert order (FP8 when the
  // dispatch is FP8), unpermute and sum them back (BF16).
  b.memory("permute", t.routed * h * (1 + topK) * (fp8 ? 1 : kBf16));
  // Each device receives as many copies as it sends (balanced routing):
  // routed x top_k rows over its experts / ep experts.
  const double groups = experts / ep;
  const double rows = t.routed * topK / groups;
  const double gated = model.mlp == MlpKind::Gated ? 2 : 1;
  b.gemm("experts fc1", rows, gated * width, h, true, groups);
  b.memory(model.mlp == MlpKind::Gated ? "swiglu" : "gelu",
           t.routed * topK * (gated + 1) * width * kBf16);
  b.gemm("experts fc2", rows, h, width, true, groups);
  b.memory("unpermute", t.routed * h * (topK + 1) * kBf16);
  if (moe.sharedExperts > 0)
    denseMlp(b, model, t,
             width * static_cast<double>(moe.sharedExperts) / t.tp,
             "shared fc1", "shared fc2");
}

LayerOperators sched::layerOperators(const ModelSpec &model,
                                     const TrainingSpec &training,
                                     const Layout &layout, bool moeLayer) {
  LayerOperators ops;
  LayerBuilder b(ops, training.precision == Precision::FP8);
  const Tokens t = tokensOf(training, layout);
  const double h = static_cast<double>(model.hidden);
  attentionBlock(b, model, training, layout, t);
  b.memory("norm+residual", t.local * h * kBf16 * 5);
  if (moeLayer)
    moeMlp(b, model, training, layout, t);
  else
    denseMlp(b, model, t, static_cast<double>(model.ffnHidden) / t.tp, "fc1",
             "fc2");
  if (layout.recompute == Recompute::Full)
    ops.recompute = ops.forward;
  else if (layout.recompute == Recompute::None)
    ops.recompute.clear();
  return ops;
}

LayerOperators sched::headOperators(const ModelSpec &model,
                                    const TrainingSpec &training,
                                    const Layout &layout) {
  LayerOperators ops;
  LayerBuilder b(ops, training.precision == Precision::FP8);
  const Tokens t = tokensOf(training, layout);
  const double h = static_cast<double>(model.hidden);
  const double vocab = static_cast<double>(model.vocab) / t.tp;
  auto outputLayer = [&] {
    b.memory("final norm", t.local * h * kBf16 * 2);
    // The output layer stays in BF16 under FP8 recipes (Transformer
    // Engine / Megatron, DeepSeek-V3 section 3.3.1).
    b.gemm("output", t.full, vocab, h, /*lowPrecision=*/false);
    // Vocabulary-parallel cross-entropy: read the BF16 logits, write and
    // read back FP32 exponentials (10 bytes); backward reads them and
    // writes BF16 gradients (6 bytes).
    b.memory("cross-entropy", t.full * vocab * 10, t.full * vocab * 6);
  };
  outputLayer();
  for (int64_t i = 0; i < model.mtpLayers; ++i) {
    b.memory("mtp norms", 2 * t.local * h * kBf16 * 2);
    b.gemm("mtp projection", t.full, h / t.tp, 2 * h);
    outputLayer();
  }
  ops.recompute.clear();
  return ops;
}
