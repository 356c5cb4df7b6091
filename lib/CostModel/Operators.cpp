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
#include "lib/CostModel/Flops.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>

using namespace sched;

/// Bytes of a BF16 element.
static constexpr double kBf16 = 2;
/// Bytes of an E5M6 element (DeepSeek-V3's 12-bit format for the attention
/// output it keeps: report section 3.3.2).
static constexpr double kE5m6 = 1.5;

/// Whether the forward keeps the attention output once, in E5M6, as
/// DeepSeek-V3 does (TrainingSpec::activationCaching).
static bool e5m6AttentionOutput(const TrainingSpec &training) {
  return training.precision == Precision::FP8 &&
         training.activationCaching == ActivationCaching::DeepSeekV3;
}

/// Whether the forward keeps the experts' SwiGLU input in FP8 and makes
/// its output again in the backward, as DeepSeek-V3 and Kimi K2 do.
static bool fp8SwigluInput(const TrainingSpec &training) {
  return training.precision == Precision::FP8 &&
         (training.activationCaching == ActivationCaching::DeepSeekV3 ||
          training.activationCaching == ActivationCaching::KimiK2);
}

/// Bytes-equivalent of one element's quantization (docs/cost-model.md,
/// "FP8 and NVFP4 casts"), priced like any memory-bound kernel at the
/// device's HBM bandwidth times Efficiency::hbm. The bytes a cast moves
/// (read 2, write an FP8 copy and its transpose, 4; current scaling reads
/// the tensor twice, its amax first) undercount what Transformer Engine's
/// quantize kernels take: its GEMM profile of one B300 layer (hidden 4,096,
/// FFN 16,384, 15,872 tokens; KERNELS.md 1c) runs each of the layer's 12
/// GEMM shapes as a te.Linear forward that quantizes its input and its
/// weight, 2,483,027,968 elements (benchmarks/gemm/benchmark_gemm.py), and
/// its autocast less its pre-quantized times, 2.335 ms (FP8 current
/// scaling), 1.823 (MXFP8) and 2.689 (NVFP4), are 0.940, 0.734 and 1.083 ps
/// an element: 6.02, 4.70 and 6.93 bytes at the B300's 8 TB/s times 0.8.
/// The model has one FP8 switch: the mean of the two FP8 recipes, 5.36
/// (the H200 NVL's current scaling, 3.500 ms over the same elements at 4.8
/// TB/s, is 5.41).
static double castBytes(Precision precision) {
  constexpr double kElements = 2483027968, kBytesPerSecond = 8e12 * 0.8;
  auto bytes = [&](double overheadMs) {
    return overheadMs * 1e-3 / kElements * kBytesPerSecond;
  };
  return precision == Precision::FP4 ? bytes(2.689)
                                     : (bytes(2.335) + bytes(1.823)) / 2;
}

/// Bytes per BF16 element that GPT-OSS's eager pieces move, kernel by
/// kernel as PyTorch runs them (docs/cost-model.md, "GPT-OSS's eager
/// pieces"; each kernel reads and writes 2 bytes an element unless noted).
/// YaRN's _apply_rotary_pos_emb_bshd over Q and K: t * cos (4), -x2 over
/// half (2), the cat of rotate_half (4), * sin (4), the add (read 4, write
/// 2), the cat with the empty pass-through (4); backward: * sin (4), the
/// neg (2), chunk's cat (4), * cos (4), the sum of the two gradients (6),
/// the slice's zero-filled copy (6).
static constexpr double kEagerRopeForward = 24, kEagerRopeBackward = 26;
/// The clamp before the fused GEGLU, per element of fc1's output (both
/// halves): two clamps (4) and the cat that joins them (4); backward: each
/// clamp's mask (read the gradient and the input, write: 6) and chunk's
/// cat (4).
static constexpr double kEagerClampForward = 8, kEagerClampBackward = 10;
/// fc2's bias times each copy's probability, per element of fc2's output:
/// the bias-times-probability product (write 2), the add (read 4, write 2)
/// and the cat of the local experts (4); backward: the product's two
/// gradients, each a mul and a sum (6 + 6), and split's cat (4).
static constexpr double kEagerBiasForward = 12, kEagerBiasBackward = 16;

namespace {
/// Appends operators and their backward counterparts to a LayerOperators.
class LayerBuilder {
public:
  /// `low`: the precision of the GEMMs the recipe runs below BF16 (BF16
  /// for none).
  LayerBuilder(LayerOperators &ops, Precision low) : ops(ops), low(low) {}

  /// The recompute modules the operators added next belong to.
  void inModules(uint8_t modules) { current = modules; }
  /// The tensors (Recompute::Checkpoint) the operators added next make.
  void making(uint16_t checkpoints) { makes = checkpoints; }
  /// Recompute modules the stack runs again whatever the policy (DeepSeek-
  /// V3's SwiGLU output of the experts).
  void alwaysRecompute(uint8_t modules) { forced |= modules; }

  /// A tensor the forward keeps, dropped by recomputing `droppedBy`, or by
  /// a saved-name policy that does not name all of `checkpoint`.
  void keep(const char *name, double bytes, uint8_t droppedBy,
            uint16_t checkpoint, bool layerInput = false) {
    SavedTensor t;
    t.name = name;
    t.bytes = bytes;
    t.droppedBy = droppedBy;
    t.layerInput = layerInput;
    t.checkpoint = checkpoint;
    ops.saved.push_back(t);
  }

  /// Bytes of a kept linear-layer input: Transformer Engine keeps the
  /// quantized copy a low-precision GEMM casts its input to, BF16
  /// otherwise.
  double linearInput() const { return elementBytes(low); }

  /// A weight GEMM (m x k)(k x n): the data gradient (m x n)(n x k) goes to
  /// I, the weight gradient (k x m)(m x n) to W, accumulated into FP32 main
  /// gradients. Low-precision GEMMs quantize their input in the forward and
  /// the incoming gradient in the backward (castBytes).
  void gemm(const char *name, double m, double n, double k,
            bool lowPrecision = true, double groups = 1) {
    const Precision f = lowPrecision ? low : Precision::BF16;
    Operator forward = gemmOp(name, m, n, k, groups, f);
    forward.grouped = groups > 1;
    forward.modules = current;
    forward.makes = makes;
    forward.evenCall = ++calls % 2 == 0;
    if (!forward.evenCall)
      oddCallMakes |= makes;
    ops.forward.push_back(forward);
    Operator data = gemmOp(name, m, k, n, groups, f);
    data.grouped = groups > 1;
    data.modules = current;
    data.backward = true;
    ops.backwardInput.push_back(data);
    Operator weight = gemmOp(name, k, n, m, groups, f);
    weight.grouped = groups > 1;
    weight.accumulates = true;
    weight.modules = current;
    weight.backward = true;
    ops.backwardWeight.push_back(weight);
    if (f != Precision::BF16) {
      const double bytes = castBytes(f);
      memory(f == Precision::FP4 ? "nvfp4 cast" : "fp8 cast",
             groups * m * k * bytes, groups * m * n * bytes);
    }
  }

  /// A GEMM of the unfused attention core (no weights): both gradients go
  /// to I.
  void coreGemm(const char *name, double m, double n, double k,
                double groups) {
    Operator forward = gemmOp(name, m, n, k, groups, Precision::BF16);
    forward.attentionCore = true;
    forward.modules = current;
    forward.makes = makes;
    ops.forward.push_back(forward);
    Operator a = gemmOp(name, m, k, n, groups, Precision::BF16);
    Operator b = gemmOp(name, k, n, m, groups, Precision::BF16);
    a.attentionCore = b.attentionCore = true;
    a.modules = b.modules = current;
    ops.backwardInput.push_back(a);
    ops.backwardInput.push_back(b);
  }

  /// The fused attention core: its backward does 2.5x the forward's FLOPs
  /// (5 batched matmuls against 2; cudnn-frontend's FLOP convention).
  void attention(double flops, bool latent, double workRatio) {
    Operator op;
    op.name = "attention";
    op.kind = OperatorClass::Attention;
    op.flops = flops;
    op.latent = latent;
    op.workRatio = workRatio;
    op.modules = current;
    op.makes = makes;
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
    op.modules = current;
    op.makes = makes;
    ops.forward.push_back(op);
    op.bytes = backwardBytes < 0 ? 2 * bytes : backwardBytes;
    ops.backwardInput.push_back(op);
  }

  /// Keeps the forward operators `recompute` runs again, and the tensors
  /// it does not drop.
  void finish(Recompute recompute) {
    if (recompute.isNamed()) {
      finishNamed(recompute);
      return;
    }
    if (recompute.isPerOperator()) {
      finishPerOperator();
      return;
    }
    const uint8_t modules = recompute.moduleSet() | forced;
    ops.recompute.clear();
    for (const Operator &op : ops.forward)
      if (recompute.isFull() || (op.modules & modules))
        ops.recompute.push_back(op);
    llvm::erase_if(ops.saved, [&](const SavedTensor &t) {
      return recompute.isFull() ? !t.layerInput : (t.droppedBy & modules) != 0;
    });
  }

  /// A saved-name policy: a tensor stays when the policy names all it is
  /// (in host memory when it names it `=offload`); an operator runs again
  /// when it makes a tensor the backward needs and the policy drops.
  void finishNamed(Recompute recompute) {
    const uint16_t saved = recompute.savedNames();
    uint16_t dropped = 0;
    for (const SavedTensor &t : ops.saved)
      if ((t.checkpoint & saved) != t.checkpoint)
        dropped |= t.checkpoint;
    ops.recompute.clear();
    for (const Operator &op : ops.forward)
      if (op.makes & dropped)
        ops.recompute.push_back(op);
    llvm::erase_if(ops.saved, [&](const SavedTensor &t) {
      return (t.checkpoint & saved) != t.checkpoint;
    });
    for (SavedTensor &t : ops.saved)
      t.onHost = (t.checkpoint & recompute.hostNames()) != 0;
  }

  /// torchtitan's per-operator policy (parallelize_llama.py's
  /// _save_list): the outputs of the odd-numbered weight GEMMs and of the
  /// attention kernel stay with the layer's input; the even-numbered GEMMs
  /// and every memory-bound operator (norms, rotary embedding, activation
  /// functions, FP8 casts) run again, and the tensors only they make are
  /// dropped.
  void finishPerOperator() {
    const uint16_t kept = Recompute::LayerInput | Recompute::Context |
                          Recompute::AttentionStats | oddCallMakes;
    ops.recompute.clear();
    for (const Operator &op : ops.forward)
      if (op.kind == OperatorClass::MemoryBound || op.evenCall)
        ops.recompute.push_back(op);
    llvm::erase_if(ops.saved, [&](const SavedTensor &t) {
      return (t.checkpoint & ~kept) != 0;
    });
  }

private:
  static Operator gemmOp(const char *name, double m, double n, double k,
                         double groups, Precision precision) {
    Operator op;
    op.name = name;
    op.kind = OperatorClass::Gemm;
    op.m = m;
    op.n = n;
    op.k = k;
    op.groups = groups;
    op.precision = precision;
    return op;
  }

  LayerOperators &ops;
  Precision low;
  uint8_t current = 0;
  uint16_t makes = 0;
  uint8_t forced = 0;
  /// Weight GEMMs added so far, and the tensors the odd-numbered ones make.
  int calls = 0;
  uint16_t oddCallMakes = 0;
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

/// Query and key tiles of the fused attention kernels: 128 x 128 (the
/// block FlashAttention-2 and -3 use for head dimensions up to 128; cuDNN's
/// engines are closed, docs/cost-model.md "Sliding-window attention").
static constexpr int64_t kAttentionTile = 128;

/// The key tiles a band of `window` keys visits relative to the causal
/// triangle's at `seq`. The kernel visits whole key tiles: query tile k
/// visits min(k + 1, n) of them, n = ceil((W - 1) / tile) + 1 for a band
/// of W keys, k + 1 for the causal triangle. A band's time is the causal
/// kernel's at this sequence times this ratio: cudnn-frontend PR #505's cuDNN
/// backward (SM120, S 4,096, 16 heads of 64) takes 0.306 and 0.496 of the
/// causal time with windows of 511 and 1,023 keys to the left, whose tile
/// ratios are 0.284 and 0.477 (OperatorModelTest).
static double bandTileRatio(double seq, int64_t window) {
  const double tile = static_cast<double>(kAttentionTile);
  const double queryTiles = std::max(1.0, std::ceil(seq / tile));
  const double band = std::ceil(static_cast<double>(window - 1) / tile) + 1;
  // Tiles visited by the band: the first `band` query tiles visit k + 1,
  // the rest `band` each.
  const double ramp = std::min(band, queryTiles);
  const double bandTiles = ramp * (ramp + 1) / 2 + (queryTiles - ramp) * band;
  const double causalTiles = queryTiles * (queryTiles + 1) / 2;
  return bandTiles / causalTiles;
}

static void attentionBlock(LayerBuilder &b, const ModelSpec &model,
                           const TrainingSpec &training, const Layout &layout,
                           const Tokens &t, bool windowed) {
  const double h = static_cast<double>(model.hidden);
  const double heads = static_cast<double>(model.heads) / t.tp;
  // Transformer Engine keeps the output projection's FP8 input; under
  // NVFP4 Megatron saves its BF16 input instead (save_original_input on
  // linear_proj, megatron/core/transformer/attention.py) and casts it
  // again in the backward.
  const bool keepsFp8Input = training.precision == Precision::FP8;
  // Pre-norm and the residual add: read h, write h; read 2h, write h. The
  // norm keeps its input (the layer's input, all a full recomputation
  // keeps); its output is the next GEMM's kept input.
  using R = Recompute;
  b.inModules(Recompute::LayerNorm);
  b.making(R::NormOutput);
  b.memory("norm+residual", t.local * h * kBf16 * 5);
  b.keep("attention norm input", t.local * h * kBf16, 0, R::LayerInput,
         /*layerInput=*/true);
  double qkDim = 0, vDim = 0, ropeDim = 0;
  if (model.mla) {
    const MlaSpec &mla = *model.mla;
    qkDim = static_cast<double>(mla.qkNopeHeadDim + mla.qkRopeHeadDim);
    vDim = static_cast<double>(mla.vHeadDim);
    ropeDim = static_cast<double>(mla.qkRopeHeadDim);
    const double qLora = static_cast<double>(mla.qLoraRank);
    const double kvLora = static_cast<double>(mla.kvLoraRank);
    // The down-projections are not split over tensor parallelism: they
    // keep the whole (gathered) input and make whole latents.
    // To a saved-name policy the latents and the norms' outputs are
    // unnamed and Q, K and V are query_proj, key_proj and value_proj.
    const uint16_t qkv = R::QueryProj | R::KeyProj | R::ValueProj;
    b.keep("down-projection input", t.full * h * b.linearInput(),
           Recompute::LayerNorm, R::NormOutput);
    b.inModules(0);
    if (qLora > 0) {
      b.making(R::Unnamed);
      b.gemm("q down", t.full, qLora, h);
      b.keep("q latent", t.full * qLora * kBf16, 0, R::Unnamed);
      b.inModules(Recompute::LayerNorm);
      b.memory("q norm", t.full * qLora * kBf16 * 2);
      b.keep("q up input", t.full * qLora * b.linearInput(),
             Recompute::LayerNorm, R::Unnamed);
      b.inModules(Recompute::MlaUpProjection);
      b.making(qkv);
      b.gemm("q up", t.full, heads * qkDim, qLora);
    } else {
      b.making(qkv);
      b.gemm("q", t.full, heads * qkDim, h);
    }
    b.inModules(0);
    b.making(R::Unnamed);
    b.gemm("kv down", t.full, kvLora + ropeDim, h);
    b.keep("kv latent", t.full * (kvLora + ropeDim) * kBf16, 0, R::Unnamed);
    b.inModules(Recompute::LayerNorm);
    b.memory("kv norm", t.full * kvLora * kBf16 * 2);
    b.keep("kv up input", t.full * kvLora * b.linearInput(),
           Recompute::LayerNorm, R::Unnamed);
    b.inModules(Recompute::MlaUpProjection);
    b.making(qkv);
    b.gemm("kv up", t.full,
           heads * static_cast<double>(mla.qkNopeHeadDim + mla.vHeadDim),
           kvLora);
    b.memory("rotary", t.full * (heads + 1) * ropeDim * kBf16 * 2);
    // Q, K (rotated) and V per head, kept by the attention core.
    b.keep("q, k, v", t.full * heads * (2 * qkDim + vDim) * kBf16,
           Recompute::MlaUpProjection, qkv);
  } else {
    const double d = static_cast<double>(model.headDim);
    const double kvHeads =
        std::max(1.0, static_cast<double>(model.kvHeads) / t.tp);
    qkDim = vDim = ropeDim = d;
    b.keep("qkv input", t.local * h * b.linearInput(), Recompute::LayerNorm,
           R::NormOutput);
    b.inModules(0);
    if (training.separateProjections) {
      // torchtitan's wq, wk and wv, in that order.
      b.making(R::QueryProj);
      b.gemm("q", t.full, heads * d, h);
      b.making(R::KeyProj);
      b.gemm("k", t.full, kvHeads * d, h);
      b.making(R::ValueProj);
      b.gemm("v", t.full, kvHeads * d, h);
    } else {
      // One fused GEMM: a saved-name policy that drops any of Q, K and V
      // runs all of it again.
      b.making(R::QueryProj | R::KeyProj | R::ValueProj);
      b.gemm("qkv", t.full, (heads + 2 * kvHeads) * d, h);
    }
    const double rotated = t.full * (heads + kvHeads) * d;
    if (model.yarnRope && training.eagerYarnRope)
      b.memory("rotary (yarn, eager)", rotated * kEagerRopeForward,
               rotated * kEagerRopeBackward);
    else
      b.memory("rotary", rotated * kBf16 * 2);
    b.keep("q", t.full * heads * d * kBf16, 0, R::QueryProj);
    b.keep("k", t.full * kvHeads * d * kBf16, 0, R::KeyProj);
    b.keep("v", t.full * kvHeads * d * kBf16, 0, R::ValueProj);
  }
  b.inModules(Recompute::CoreAttention);
  b.making(R::Context | R::AttentionStats);
  if (training.attention == AttentionKernel::Flash) {
    // Causal: each query meets seq/2 keys on average (Megatron counts it
    // so), within a sliding window the band's mean; two matmuls of 2 FLOPs
    // per multiply-add. A band costs the causal kernel's time in
    // proportion to the key tiles it visits (bandTileRatio): its work per
    // counted FLOP is that ratio over the ratio of keys.
    const int64_t window = windowed ? model.slidingWindow : 0;
    const double keys = meanKeysPerQuery(t.seq, window);
    const double flops = t.full * heads * 2 * (qkDim + vDim) * keys;
    b.attention(flops, model.mla.has_value(),
                window > 0 ? bandTileRatio(t.seq, window) * (t.seq / 2) / keys
                           : 1);
    // The kernel keeps its output and the FP32 log-sum-exp per row; the
    // output is also the output projection's input (one tensor in BF16;
    // in FP8 the projection keeps its own FP8 copy, and recomputing the
    // core frees the BF16 one).
    // MaxText's splash attention names its output and its log-sum-exp
    // `context` (residual_checkpoint_name, maxtext bd5d58296): a policy
    // that keeps context runs no attention forward again.
    b.keep("softmax statistics", t.full * heads * 4,
           Recompute::CoreAttention, R::Context);
    if (e5m6AttentionOutput(training)) {
      // DeepSeek-V3 keeps the output once, in E5M6, for the core's
      // backward and the projection's weight gradient both; recomputing
      // the core does not free it.
      b.keep("attention output", t.full * heads * vDim * kE5m6, Recompute::Dots,
             R::Context);
    } else {
      // Under `dots` neither copy stays: the output is the kernel's, not a
      // weight GEMM's, and the core runs again.
      b.keep("attention output", t.full * heads * vDim * kBf16,
             keepsFp8Input ? Recompute::CoreAttention | Recompute::Dots
                           : Recompute::Dots,
             R::Context);
      // The keepsFp8Input copy is Transformer Engine's; MaxText's `context`
      // names the BF16 output alone, and a saved-name policy casts it
      // again.
      if (keepsFp8Input)
        b.keep("output projection input", t.full * heads * vDim,
               Recompute::Dots, R::Unnamed);
    }
  } else {
    // Megatron-LM before flash attention: QK^T and (QK^T)V as batched
    // GEMMs over the whole (masked) score matrix, with scale, mask,
    // softmax and dropout over the scores in between: forward read 2 +
    // write 2 bytes (fused softmax), dropout read 2, write 2 + a 1-byte
    // mask; backward 11 bytes per score. The softmax output, the dropout
    // mask and its output are kept: 5 bytes per score (Korthikanti et al.
    // 2022, the 5·a·s²·b term).
    const double queries = t.full / t.sequences;
    const double groups = t.sequences * heads;
    b.coreGemm("scores", queries, t.seq, qkDim, groups);
    b.memory("softmax+dropout", groups * queries * t.seq * 9,
             groups * queries * t.seq * 11);
    b.coreGemm("context", queries, vDim, t.seq, groups);
    b.keep("attention scores", groups * queries * t.seq * 5,
           Recompute::CoreAttention, R::AttentionStats);
    b.keep("output projection input", t.full * heads * vDim * b.linearInput(),
           Recompute::Dots, R::Context);
  }
  b.inModules(0);
  b.making(R::OutProj);
  b.gemm("attention out", t.full, h, heads * vDim);
}

/// The MLP block's norm: its input kept (the residual stream), its output
/// the MLP's (or router's) kept input.
static void mlpNorm(LayerBuilder &b, const ModelSpec &model,
                    const Tokens &t) {
  const double h = static_cast<double>(model.hidden);
  b.inModules(Recompute::LayerNorm);
  // The residual add makes the norm's input (the attention projection's
  // output added to the layer's input: what out_proj keeps), the norm its
  // unnamed output.
  b.making(Recompute::OutProj | Recompute::NormOutput);
  b.memory("norm+residual", t.local * h * kBf16 * 5);
  b.keep("mlp norm input", t.local * h * kBf16, 0, Recompute::OutProj);
}

/// A dense MLP of `width` (per device) on every token, in recompute
/// modules `modules`.
static void denseMlp(LayerBuilder &b, const ModelSpec &model, const Tokens &t,
                     double width, const char *fc1, const char *fc2,
                     uint8_t modules, bool named, bool separate) {
  using R = Recompute;
  const double h = static_cast<double>(model.hidden);
  b.inModules(modules);
  const bool gated = model.mlp == MlpKind::Gated;
  // To a saved-name policy the MLP's tensors are mlpwi (both halves of a
  // gated fc1), its unnamed activation output and mlpwo; a shared expert's
  // are all unnamed.
  const uint16_t wi = named ? R::MlpWi0 | R::MlpWi1 : R::Unnamed;
  if (gated && separate) {
    // torchtitan's w1 (the gate) and w3 (the up half), in that order.
    b.making(named ? R::MlpWi0 : R::Unnamed);
    b.gemm("w1", t.full, width, h);
    b.making(named ? R::MlpWi1 : R::Unnamed);
    b.gemm("w3", t.full, width, h);
  } else {
    b.making(wi);
    b.gemm(fc1, t.full, (gated ? 2 : 1) * width, h);
  }
  // SwiGLU: read gate and up, write their product; GELU: read, write. The
  // activation function is no weight GEMM: `dots` runs it again.
  b.inModules(modules | Recompute::Dots);
  b.making(named ? R::ActivationOutput : R::Unnamed);
  b.memory(gated ? "swiglu" : "gelu", t.full * (gated ? 3 : 2) * width * kBf16);
  if (gated && separate) {
    b.keep("w1 output", t.full * width * kBf16, modules,
           named ? R::MlpWi0 : R::Unnamed);
    b.keep("w3 output", t.full * width * kBf16, modules,
           named ? R::MlpWi1 : R::Unnamed);
  } else {
    b.keep("fc1 output", t.full * (gated ? 2 : 1) * width * kBf16, modules, wi);
  }
  b.keep("fc2 input", t.full * width * b.linearInput(),
         modules | Recompute::Dots,
         named ? R::ActivationOutput : R::Unnamed);
  b.inModules(modules);
  // fc2's output is mlpwo, which no gradient needs and nothing the
  // backward recomputes reads (the residual add is linear): JAX saves only
  // residuals, a policy chooses among them, so naming mlpwo keeps nothing.
  b.making(named ? R::MlpWo : R::Unnamed);
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
  const uint8_t block = Recompute::Moe;
  // No checkpoint name covers an MoE block's tensors: a saved-name policy
  // runs the whole block again.
  const uint16_t unnamed = Recompute::Unnamed;
  b.making(unnamed);
  // The router (kept in higher precision by Megatron/TE and DeepSeek), its
  // softmax and top-k over the experts' FP32 scores.
  b.keep("router input", t.routed * h * kBf16, Recompute::LayerNorm,
         Recompute::NormOutput);
  b.inModules(block);
  b.gemm("router", t.routed, experts, h, /*lowPrecision=*/false);
  b.memory("top-k", t.routed * experts * 4 * 3);
  b.keep("router scores", t.routed * experts * 4, block, unnamed);
  // Permute each token's top_k copies into expert order (in the
  // dispatch's dtype), unpermute and sum them back (BF16).
  b.memory("permute",
           t.routed * h * (1 + topK) * training.expertDispatchBytes());
  // Each device receives as many copies as it sends (balanced routing):
  // routed x top_k rows over its experts / ep experts; with expert tensor
  // parallelism the etp ranks of a slice gather theirs (etp x the rows)
  // and each holds 1/etp of every expert's FFN.
  const double etp = static_cast<double>(layout.etp);
  const double groups = experts / ep;
  const double rows = t.routed * topK / groups * etp;
  const double copies = t.routed * topK * etp;
  const double slice = width / etp;
  const double gated = model.mlp == MlpKind::Gated ? 2 : 1;
  b.keep("dispatched tokens", copies * h * b.linearInput(), block, unnamed);
  if (gated == 2 && training.separateExpertProjections) {
    b.gemm("experts w0", rows, slice, h, true, groups);
    b.gemm("experts w1", rows, slice, h, true, groups);
  } else {
    b.gemm("experts fc1", rows, gated * slice, h, true, groups);
  }
  // DeepSeek-V3 and Kimi K2 keep the SwiGLU input in FP8 and make its
  // output again in the backward (DeepSeek-V3 report section 3.3.2, Kimi
  // K2 report section 2.4.3); Transformer Engine keeps fc1's BF16 output.
  const bool fp8Swiglu = fp8SwigluInput(training);
  b.keep("experts fc1 output", copies * gated * slice * (fp8Swiglu ? 1 : kBf16),
         block, unnamed);
  if (fp8Swiglu)
    b.alwaysRecompute(Recompute::MoeActivation);
  b.inModules(block | Recompute::MoeActivation | Recompute::Dots);
  if (model.activationClamp > 0 && training.eagerActivationClamp) {
    // The clamped copy is what the fused GEGLU keeps for its backward,
    // beside fc1's output that the clamps keep.
    const double fc1Elements = copies * gated * slice;
    b.memory("activation clamp", fc1Elements * kEagerClampForward,
             fc1Elements * kEagerClampBackward);
    b.keep("clamped fc1 output", fc1Elements * kBf16,
           block | Recompute::MoeActivation | Recompute::Dots, unnamed);
  }
  b.memory(model.mlp == MlpKind::Gated ? "swiglu" : "gelu",
           copies * (gated + 1) * slice * kBf16);
  b.keep("experts fc2 input", copies * slice * b.linearInput(),
         block | Recompute::MoeActivation | Recompute::Dots, unnamed);
  // Megatron-Core weighs each copy by its routing probability inside the
  // activation (experts.py, activation_func_with_probs), which keeps the
  // FP32 probabilities; the unpermute is then a plain sum and keeps
  // nothing.
  b.keep("routing probabilities", t.routed * topK * 4, block, unnamed);
  b.inModules(block);
  b.gemm("experts fc2", rows, h, slice, true, groups);
  if (model.expertBias && training.eagerExpertBias)
    b.memory("expert bias", copies * h * kEagerBiasForward,
             copies * h * kEagerBiasBackward);
  b.memory("unpermute", t.routed * h * (topK + 1) * kBf16);
  if (moe.sharedExperts > 0) {
    if (fp8)
      b.keep("shared experts input", t.local * h,
             Recompute::LayerNorm | Recompute::SharedExperts | block,
             unnamed);
    denseMlp(b, model, t, width * static_cast<double>(moe.sharedExperts) / t.tp,
             "shared fc1", "shared fc2", Recompute::SharedExperts | block,
             /*named=*/false, training.separateProjections);
  }
}

LayerOperators sched::layerOperators(const ModelSpec &model,
                                     const TrainingSpec &training,
                                     const Layout &layout, bool moeLayer,
                                     bool windowed) {
  LayerOperators ops;
  LayerBuilder b(ops, training.precision);
  const Tokens t = tokensOf(training, layout);
  const double h = static_cast<double>(model.hidden);
  attentionBlock(b, model, training, layout, t, windowed);
  mlpNorm(b, model, t);
  if (moeLayer) {
    moeMlp(b, model, training, layout, t);
  } else {
    b.keep("fc1 input", t.local * h * b.linearInput(), Recompute::LayerNorm,
           Recompute::NormOutput);
    denseMlp(b, model, t, static_cast<double>(model.ffnHidden) / t.tp, "fc1",
             "fc2", Recompute::Mlp, /*named=*/true,
             training.separateProjections);
  }
  b.finish(layout.recompute);
  return ops;
}

double LayerOperators::savedBytes() const {
  double bytes = 0;
  for (const SavedTensor &t : saved)
    bytes += t.onHost ? 0 : t.bytes;
  return bytes;
}

double LayerOperators::hostBytes() const {
  double bytes = 0;
  for (const SavedTensor &t : saved)
    bytes += t.onHost ? t.bytes : 0;
  return bytes;
}

LayerOperators sched::headOperators(const ModelSpec &model,
                                    const TrainingSpec &training,
                                    const Layout &layout) {
  LayerOperators ops;
  LayerBuilder b(ops, training.precision);
  const Tokens t = tokensOf(training, layout);
  const double h = static_cast<double>(model.hidden);
  const double vocab = static_cast<double>(model.vocab) / t.tp;
  auto outputLayer = [&] {
    b.memory("final norm", t.local * h * kBf16 * 2);
    // The output layer stays in BF16 under FP8 recipes (Transformer
    // Engine / Megatron, DeepSeek-V3 section 3.3.1).
    b.gemm("output", t.full, vocab, h, /*lowPrecision=*/false);
    if (training.fusedCrossEntropy) {
      // Transformer Engine's parallel cross-entropy reads the BF16 logits
      // once and writes the gradient over them (4 bytes); the backward
      // scales it in place (4).
      b.memory("cross-entropy", t.full * vocab * 4, t.full * vocab * 4);
    } else {
      // Vocabulary-parallel cross-entropy: read the BF16 logits, write and
      // read back FP32 exponentials (10 bytes); backward reads them and
      // writes BF16 gradients (6 bytes).
      b.memory("cross-entropy", t.full * vocab * 10, t.full * vocab * 6);
    }
  };
  outputLayer();
  for (int64_t i = 0; i < model.mtpLayers; ++i) {
    b.memory("mtp norms", 2 * t.local * h * kBf16 * 2);
    b.gemm("mtp projection", t.full, h / t.tp, 2 * h);
    outputLayer();
  }
  b.finish(Recompute::None);
  return ops;
}
