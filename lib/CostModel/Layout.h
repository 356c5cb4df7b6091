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
#include "lib/CostModel/Memory.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sched {

/// What the backward pass recomputes (docs/cost-model.md, "Recomputation"):
/// nothing, the whole layer from its input (Megatron's
/// --recompute-granularity full), the first N layers of each stage whole
/// and the others not at all (--recompute-method block
/// --recompute-num-layers N), or a set of modules (Megatron's
/// --recompute-granularity selective --recompute-modules ...): each module
/// drops the tensors it would have kept and runs its forward again in the
/// backward. `Selective` is Megatron's default module set, the attention
/// core (Korthikanti et al. 2022). A saved-name policy is MaxText's
/// `remat_policy: custom`: the tensors named by their checkpoint names stay
/// (on the device or in host memory), everything else the backward needs
/// is made again. The per-operator policy is torchtitan's selective
/// activation checkpointing with `selective_ac_option = "op"`: every
/// operator's output stays except every second weight GEMM's (in call
/// order) and every operator outside its save list (the norms, rotary
/// embedding, activation functions and FP8 casts), which the backward runs
/// again; the attention kernel's outputs stay.
class Recompute {
public:
  /// Megatron-Core's recompute modules, by the names its flag takes.
  enum Module : uint8_t {
    CoreAttention = 1 << 0,   // core_attn
    LayerNorm = 1 << 1,       // layernorm: the norms' outputs
    MlaUpProjection = 1 << 2, // mla_up_proj: MLA's Q/K/V up-projections
    Mlp = 1 << 3,             // mlp: a dense layer's MLP
    MoeActivation = 1 << 4,   // moe_act: the experts' activation function
    SharedExperts = 1 << 5,   // shared_experts
    Moe = 1 << 6,             // moe: the whole MoE block
    /// dots: JAX's checkpoint_dots_with_no_batch_dims (MaxText's
    /// remat_policy minimal): only the weight GEMMs' outputs and the layer
    /// input stay; the norms, the activation functions and the attention
    /// core run again. Not Megatron's; it implies core_attn and layernorm.
    Dots = 1 << 7,
  };
  static constexpr uint8_t kAllModules = 0xff;

  /// The tensors a saved-name policy can keep, by MaxText's checkpoint
  /// names (`checkpoint_name` in its decoder layers), and those no name
  /// covers, which such a policy always makes again.
  enum Checkpoint : uint16_t {
    LayerInput = 1 << 0, // decoder_layer_input
    QueryProj = 1 << 1,  // query_proj
    KeyProj = 1 << 2,    // key_proj
    ValueProj = 1 << 3,  // value_proj
    Context = 1 << 4,    // context: the attention core's output
    OutProj = 1 << 5,    // out_proj: the attention projection's output
    MlpWi0 = 1 << 6,     // mlpwi_0 (mlpwi: both halves)
    MlpWi1 = 1 << 7,     // mlpwi_1
    MlpWo = 1 << 8,      // mlpwo: the MLP's output
    /// Unnamed: the norms' outputs, the unfused attention core's scores,
    /// the activation function's output, MLA's latents and every tensor of
    /// an MoE block.
    NormOutput = 1 << 9,
    AttentionStats = 1 << 10,
    ActivationOutput = 1 << 11,
    Unnamed = 1 << 12,
  };
  static constexpr uint16_t kNameable = (1 << 9) - 1;
  /// The most layers a block recomputation names (as many as a model has).
  static constexpr int64_t kMaxBlockLayers = int64_t(1) << 24;

  constexpr Recompute() = default;
  static constexpr Recompute modules(uint8_t set) {
    Recompute r;
    r.set = set & kAllModules;
    return r;
  }
  static constexpr Recompute full() {
    Recompute r;
    r.whole = true;
    return r;
  }
  /// The first `layers` (>= 1) layers of each stage recomputed whole.
  static constexpr Recompute block(int64_t layers) {
    Recompute r;
    r.whole = true;
    r.blockLayers = layers;
    return r;
  }

  /// A saved-name policy: the `Checkpoint` names in `saved` stay, those
  /// also in `host` in host memory (MaxText's `offload`). The layer input
  /// always stays (the layer loop's carry).
  static constexpr Recompute saving(uint16_t saved, uint16_t host) {
    Recompute r;
    r.saved = (saved | host | LayerInput) & kNameable;
    r.host = host & kNameable;
    return r;
  }

  /// torchtitan's per-operator policy.
  static constexpr Recompute perOperator() {
    Recompute r;
    r.alternate = true;
    return r;
  }

  static const Recompute None;
  static const Recompute Selective;
  static const Recompute Full;

  /// A saved-name policy (its set always holds the layer input).
  bool isNamed() const { return saved != 0; }
  uint16_t savedNames() const { return saved; }
  uint16_t hostNames() const { return host; }

  /// Every layer (or, with a block, the block's layers) recomputed whole.
  bool isFull() const { return whole; }
  bool isBlock() const { return whole && blockLayers > 0; }
  int64_t blockSize() const { return blockLayers; }
  bool isNone() const { return !whole && !isNamed() && !alternate && set == 0; }
  bool isPerOperator() const { return alternate; }
  uint8_t moduleSet() const { return set; }
  /// Whether the backward runs `module`'s forward again in a layer this
  /// recomputation covers (a full recomputation runs every module again;
  /// a saved-name policy every module but the attention core where it
  /// keeps `context` and a dense MLP where it keeps fc1's output, since no
  /// name covers the norms' outputs or an MoE block's tensors).
  bool recomputes(Module module) const {
    // The per-operator policy runs every norm again; it keeps the attention
    // kernel's outputs and, of each module's GEMMs, every other one.
    if (alternate)
      return module == LayerNorm;
    if (isNamed()) {
      if (module == CoreAttention)
        return !(saved & Context);
      if (module == Mlp)
        return (saved & (MlpWi0 | MlpWi1)) != (MlpWi0 | MlpWi1);
      return true;
    }
    return whole || (set & module);
  }

  friend constexpr bool operator==(Recompute a, Recompute b) {
    return a.whole == b.whole && a.alternate == b.alternate && a.set == b.set &&
           a.blockLayers == b.blockLayers && a.saved == b.saved &&
           a.host == b.host;
  }
  friend constexpr bool operator!=(Recompute a, Recompute b) {
    return !(a == b);
  }
  friend constexpr bool operator<(Recompute a, Recompute b) {
    if (a.whole != b.whole)
      return a.whole < b.whole;
    if (a.alternate != b.alternate)
      return a.alternate < b.alternate;
    if (a.saved != b.saved)
      return a.saved < b.saved;
    if (a.host != b.host)
      return a.host < b.host;
    return a.set != b.set ? a.set < b.set : a.blockLayers < b.blockLayers;
  }

private:
  bool whole = false;
  /// torchtitan's per-operator policy.
  bool alternate = false;
  uint8_t set = 0;
  /// A saved-name policy's names (0: a module policy).
  uint16_t saved = 0;
  uint16_t host = 0;
  /// 0: every layer.
  int64_t blockLayers = 0;
};

inline constexpr Recompute Recompute::None = Recompute();
inline constexpr Recompute Recompute::Selective =
    Recompute::modules(Recompute::CoreAttention);
inline constexpr Recompute Recompute::Full = Recompute::full();

/// "none", "full", "block:N", "selective" (the default set), the modules
/// joined by commas in Megatron's spelling ("mla_up_proj,mlp"), or
/// "save:" and MaxText's checkpoint names, `=offload` after those kept in
/// host memory ("save:key_proj,value_proj,decoder_layer_input=offload"),
/// "op" (torchtitan's per-operator policy).
std::string recomputeName(Recompute recompute);
/// Parses those names; "selective" is core_attn. On failure the error
/// names the unknown module or checkpoint name and lists the known ones.
llvm::Expected<Recompute> parseRecompute(llvm::StringRef name);

/// How the attention core runs: fused (FlashAttention / cuDNN SDPA, the
/// scores never reach HBM) or unfused (two batched GEMMs around a softmax
/// over the materialized scores, as Megatron-LM ran before flash attention:
/// Korthikanti et al. 2022 keep the 5·a·s/h score term).
enum class AttentionKernel : uint8_t { Flash, Unfused };

llvm::StringRef attentionKernelName(AttentionKernel kernel);
std::optional<AttentionKernel> parseAttentionKernel(llvm::StringRef name);

/// How an FP8 recipe keeps the activations it can store below BF16 (a
/// software stack's fact; docs/cost-model.md, "Activations").
/// TransformerEngine: the attention output in BF16 for the attention
/// core's backward plus the FP8 copy its projection casts, and the
/// experts' SwiGLU input (fc1's output) in BF16. DeepSeekV3 (DeepSeek-V3
/// report, section 3.3.2): the attention output once, in E5M6 (12 bits),
/// for both; the experts' SwiGLU input in FP8, its output made again in
/// the backward. KimiK2 (Kimi K2 report, section 2.4.3): the experts'
/// SwiGLU input in FP8 and its output made again, as DeepSeekV3; the
/// attention output as Transformer Engine keeps it (the report names no
/// other format for it).
enum class ActivationCaching : uint8_t {
  TransformerEngine,
  DeepSeekV3,
  KimiK2
};

llvm::StringRef activationCachingName(ActivationCaching caching);
std::optional<ActivationCaching> parseActivationCaching(llvm::StringRef name);

/// How an MoE layer's tokens reach their experts (a run's or stack's fact;
/// docs/cost-model.md, "Expert all-to-all"). Flex: a dispatcher that
/// sends a token once to each rank (over NVLink) or node (over the NIC)
/// holding one of its experts and forwards it inside the node (DeepEP,
/// HybridEP; Megatron's `flex` dispatcher). AllToAll: Megatron-Core's
/// MoEAlltoAllTokenDispatcher, which permutes each token's top_k copies
/// and exchanges every copy with NCCL's all_to_all_single, so a token
/// crosses once per expert, not once per rank or node.
enum class MoeDispatcher : uint8_t { Flex, AllToAll };

llvm::StringRef moeDispatcherName(MoeDispatcher dispatcher);
std::optional<MoeDispatcher> parseMoeDispatcher(llvm::StringRef name);

/// `--fp8-param-gather`'s names: off, tensorwise, mxfp8.
llvm::StringRef fp8ParamsName(Fp8Params params);
std::optional<Fp8Params> parseFp8Params(llvm::StringRef name);

/// What a run captures in CUDA graphs (a run's or stack's fact;
/// docs/cost-model.md, "Host time of an eager MoE block"). None: every
/// kernel is launched as the host reaches it. MoeRouter: the MoE router
/// and its preprocessing are captured (Transformer Engine's graph scopes
/// `moe_router`, `moe_preprocess`, with or without `attn`); dispatch,
/// experts and combine stay eager. Layer: each layer is captured whole
/// (Megatron's `local` full-layer graphs, which need the experts' shapes
/// static: token dropping). Step: the whole iteration (`full_iteration`).
enum class CudaGraphs : uint8_t { None, MoeRouter, Layer, Step };

llvm::StringRef cudaGraphsName(CudaGraphs graphs);
std::optional<CudaGraphs> parseCudaGraphs(llvm::StringRef name);

/// Bytes of each of Adam's moments on average by their dtypes' name:
/// "fp32" 4, "bf16" 2, "mu-bf16" 3 (the first moment in BF16, the second
/// in FP32: optax.adamw's `mu_dtype`, which MaxText's recipes set).
std::optional<double> parseOptimizerMoments(llvm::StringRef name);

/// Host time of one MoE block's forward where the block reads its token
/// counts to the host (Megatron-Core's dropless MoE: the grouped experts'
/// split sizes, the all-to-all's splits), so the host cannot run ahead of
/// the device and the block takes at least this long. Seconds; all zero:
/// not modelled (docs/cost-model.md, "Host time of an eager MoE block").
struct MoeHostTime {
  /// The router and the dispatcher's preprocessing.
  double router = 0;
  /// The all-to-all dispatcher's dispatch and its combine (with the
  /// unpermute); not measured for the flex dispatchers.
  double dispatch = 0;
  double combine = 0;
  /// The grouped experts' GEMMs and activation, per local expert.
  double perLocalExpert = 0;
  bool any() const {
    return router > 0 || dispatch > 0 || combine > 0 || perLocalExpert > 0;
  }
};

/// What a software stack decides beneath a layout (SoftwareStack.h names
/// and sources them; the single-fact flags of `schedc plan` override one).
struct StackFacts {
  AttentionKernel attention = AttentionKernel::Flash;
  /// The cuDNN release the fused attention runs (major + minor / 100:
  /// 9.11); 0: the newest the device's profile measured
  /// (Efficiency::useCudnnRelease).
  double cudnnRelease = 0;
  /// Tensor-parallel collectives pipelined with the GEMMs beside them
  /// (Transformer Engine's userbuffers, Megatron's --tp-comm-overlap): on
  /// by default, as modern Megatron, NeMo and torchtitan stacks run.
  bool tensorParallelOverlap = true;
  /// PyTorch's allocator runs with expandable segments (less fragmentation,
  /// Efficiency::usableMemoryExpandable) rather than its caching default.
  bool expandableSegments = false;
  /// The pipeline schedules (by name; "*" for all) whose point-to-point
  /// transfers hold their rank until they complete, as Megatron-Core's
  /// non-interleaved 1F1B waits on its combined send/receive before the
  /// next computation (a software stack's fact, SoftwareStack.h; `--p2p-
  /// overlap off` is "*"). Elsewhere they overlap what follows (PyTorch's
  /// runtime, Megatron's interleaved schedule with overlap_p2p_comm).
  std::vector<std::string> blockingSendSchedules;
  /// Bytes of a main gradient (4: FP32, Megatron's default; 2: BF16) and
  /// of each of Adam's moments on average (4 or 2; 3 with the first in
  /// BF16 and the second in FP32, optax's `mu_dtype` as MaxText recipes
  /// set it): docs/cost-model.md, "Memory".
  double mainGradientBytes = 4;
  double optimizerMomentBytes = 4;
  /// The weights are stored once, in FP32, and the optimizer updates them
  /// in place (MaxText's `weight_dtype: float32`), rather than in BF16
  /// beside an FP32 master copy (Megatron's mixed precision):
  /// Memory.h, fp32WeightsRecipe.
  bool fp32Weights = false;
  /// Gradients are reduced (reduce-scattered, all-reduced) and, under
  /// ZeRO-3, held unsharded before it in BF16, the dtype of the weight
  /// GEMM's output, rather than in the main gradients' dtype: MaxText,
  /// where each layer casts its FP32 kernel to BF16 before use, so the
  /// kernel's cotangent is the BF16 GEMM output until the transposed cast
  /// (docs/cost-model.md, "Gradient reduction dtype").
  bool bf16GradientReduction = false;
  /// How FP8 activations are kept (no effect under BF16).
  ActivationCaching activationCaching = ActivationCaching::TransformerEngine;
  /// The expert dispatcher of MoE layers.
  MoeDispatcher moeDispatcher = MoeDispatcher::Flex;
  /// Under FP8 training the tokens are quantized before the expert
  /// dispatch, which then moves FP8 rows (DeepSeek-V3 report section
  /// 3.3.2); otherwise the dispatch moves the layer's BF16 activations and
  /// the experts quantize what they receive (Megatron-Core to core_v0.19.0:
  /// every dispatcher exchanges BF16 and the experts' GroupedLinear casts).
  /// The combine is BF16 either way.
  bool fp8ExpertDispatch = false;
  /// What the run captures in CUDA graphs, and the host time of an MoE
  /// block launched eagerly.
  CudaGraphs cudaGraphs = CudaGraphs::None;
  MoeHostTime moeHost;
  /// The loss keeps the logits' gradient in BF16, written in place by the
  /// forward (Transformer Engine's parallel cross-entropy, Megatron's
  /// cross_entropy_fusion_impl "te"), rather than FP32 softmax outputs
  /// (Megatron's unfused vocab_parallel_cross_entropy, PyTorch's
  /// cross_entropy over FP32 logits).
  bool fusedCrossEntropy = false;
  /// Transformer Engine's CPU offload (`offload=N`) as its version 2 runs
  /// it (TE 2.10 on, `DefaultOffloadSynchronizer`): offloaded layer i is
  /// freed as layer L - N + i starts its forward and reloaded once layer
  /// L - N + i has run its backward, so a stage of L layers holds L - N
  /// layers' tensors at its peak. Version 1 (TE to 2.9,
  /// `AsyncDoubleBufferGroupOffloadHandler`) frees the last offloaded
  /// layer only after the stage's last forward and reloads it before that
  /// layer's backward: one layer's tensors more (docs/cost-model.md,
  /// "Activation offload").
  bool offloadSynchronizerV2 = false;
  /// Offload (`offload=N`) runs only without pipeline parallelism and
  /// without recomputation: Megatron-Core's TransformerConfig refuses
  /// `cpu_offloading` with `pipeline_model_parallel_size > 1` and with any
  /// `recompute_granularity` (transformer_config.py, core_v0.14.0 and
  /// b0cc2706).
  bool offloadAlone = false;
  /// The attention's Q, K and V projections and a gated MLP's two input
  /// halves run as separate GEMMs (torchtitan's wq, wk, wv and w1, w3),
  /// not as Megatron's fused linear_qkv and linear_fc1.
  bool separateProjections = false;
  /// A gated MoE block's two expert input halves run as two grouped GEMMs
  /// (MaxText's sparse_matmul calls its grouped GEMM for `w0` and for
  /// `w1`), not as one over both halves (Megatron-Core's fused
  /// linear_fc1 of TEGroupedMLP).
  bool separateExpertProjections = false;
  /// Three pieces of GPT-OSS's layer that the stack runs as separate
  /// PyTorch elementwise kernels rather than inside a fused one
  /// (docs/cost-model.md, "GPT-OSS's eager pieces"): the experts' second
  /// bias, weighted by each copy's probability (Megatron-Core's
  /// TEGroupedMLP._apply_bias: a mul, an add and a cat per local expert);
  /// the clamp of the gated activation's input (two clamps and a cat
  /// before the fused weighted GEGLU); YaRN's rotary embedding (fusion
  /// refused for a scaled rotary, _apply_rotary_pos_emb_bshd). They cost
  /// only on a model that has them (ModelSpec::expertBias,
  /// activationClamp, yarnRope).
  bool eagerExpertBias = false;
  bool eagerActivationClamp = false;
  bool eagerYarnRope = false;
  /// ZeRO-3's gathers and reduce-scatters run beside compute (FSDP2,
  /// Megatron-FSDP, DeepSpeed from 0.6); DeepSpeed 0.3-0.5 synchronized
  /// the device before every parameter's gather, so they add to it.
  bool shardedOverlap = true;
  /// What the planner searches as selective recomputation: Megatron's
  /// attention core (Recompute::Selective) or torchtitan's per-operator
  /// policy.
  Recompute selectiveRecompute = Recompute::Selective;
  /// The pipeline schedules the stack runs (by name; "no-pp" included when
  /// it runs without a pipeline; empty: any), which are all the planner
  /// searches.
  std::vector<std::string> schedules;
};

struct TrainingSpec : StackFacts {
  int64_t devices = 1;
  int64_t seqLen = 4096;
  int64_t globalBatchTokens = 0;
  Precision precision = Precision::BF16;
  /// FP8 parameters, stored and gathered in the recipe's FP8 format
  /// (Megatron's `--fp8-param-gather`, a run's recipe fact; only under
  /// FP8 precision): Memory.h, withFp8Params.
  Fp8Params fp8Params = Fp8Params::None;
  /// The software stack the facts came from (SoftwareStack.h; empty: none
  /// named, the flags' defaults).
  std::string stack;

  int64_t globalBatchSequences() const { return globalBatchTokens / seqLen; }
  /// Bytes of each element the expert dispatch sends: FP8 (1) when
  /// training in FP8 on a stack that quantizes before the dispatch
  /// (fp8ExpertDispatch), else BF16 (2).
  double expertDispatchBytes() const {
    return precision == Precision::FP8 && fp8ExpertDispatch ? 1 : 2;
  }
  /// Whether the stack runs schedule `strategy`.
  bool runsSchedule(llvm::StringRef strategy) const {
    return schedules.empty() || llvm::is_contained(schedules, strategy);
  }
  /// Whether schedule `strategy`'s transfers hold their rank.
  bool blocksPipelineSends(llvm::StringRef strategy) const {
    return llvm::any_of(blockingSendSchedules, [&](const std::string &name) {
      return name == "*" || name == strategy;
    });
  }
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
  /// Expert tensor parallelism (Megatron's --expert-tensor-parallel-size):
  /// each routed expert's FFN split over `etp` ranks, which gather the
  /// tokens dispatched to them and reduce-scatter the experts' output. The
  /// experts' grid is etp (fastest) x ep x expert-data-parallel over the
  /// tp x cp x dp block.
  int64_t etp = 1;
  /// Sequence parallelism with tensor parallelism (Korthikanti et al.
  /// 2022): norms and dropout on a 1/tp slice of the tokens, all-gathers
  /// and reduce-scatters in place of all-reduces.
  bool sequenceParallel = true;
  /// ZeRO stage: 0 replicated, 1 optimizer state sharded, 2 also
  /// gradients, 3 also parameters (FSDP).
  int zero = 1;
  Recompute recompute = Recompute::None;
  /// How layers go to the pp x vpp stages. By default the cost model
  /// balances the stages' time. Megatron's split (`split=even`, or `first`
  /// / `last` given) puts `firstStageLayers` on the first stage and
  /// `lastStageLayers` on the last (--decoder-first/last-pipeline-num-
  /// layers; -1: not set) and the rest evenly on the others; the
  /// embedding and the output layer come on top of the first and last.
  bool megatronSplit = false;
  int64_t firstStageLayers = -1;
  int64_t lastStageLayers = -1;
  /// Activation offload (Megatron's --cpu-offloading-num-layers N, as
  /// Transformer Engine runs it): the activations of the first N layers of
  /// each stage go to host memory during the forward and come back before
  /// the backward (at most a stage's layers less one: the last layer's are
  /// needed at once).
  int64_t offloadLayers = 0;
  /// Hybrid sharding (HSDP; Megatron's --num-distributed-optimizer-
  /// instances, FSDP2's 2-D mesh): the ZeRO shards span groups of
  /// `shardGroup` consecutive data-parallel ranks, replicated across the
  /// dp x cp / shardGroup groups. 0: one group of every data-parallel rank.
  int64_t shardGroup = 0;
  int64_t microbatchSize = 1;
  /// Set by checkLayout: global batch / (dp x microbatchSize).
  int64_t microbatches = 0;

  int64_t devices() const { return dp * tp * pp * cp; }
  /// Expert-data-parallel ranks: the tp x cp x dp block over ep x etp.
  int64_t expertDataParallel() const { return dp * cp * tp / (ep * etp); }
  /// Ranks one dense ZeRO shard spans (dp x cp without HSDP), and the
  /// replicas of each shard (1 without HSDP).
  int64_t denseShardGroup() const {
    return shardGroup > 0 ? shardGroup : dp * cp;
  }
  int64_t shardReplicas() const { return dp * cp / denseShardGroup(); }
  /// Expert-data-parallel ranks one expert shard spans.
  int64_t expertShardGroup() const {
    return expertDataParallel() / shardReplicas();
  }
  /// "dp=64,tp=8,pp=16,vpp=2,ep=8,cp=1" (and ",sp=0" without sequence
  /// parallelism, ",split=even" or ",first=N,last=N" for Megatron's split).
  std::string str() const;
  /// What str() says beyond dp, tp, pp, vpp, ep and cp: "sp=0",
  /// "first=N,last=N", "split=even", "offload=N", "hsdp=N", "etp=N" joined
  /// by commas; empty for a plain layout.
  std::string extras() const;
};

/// Parses "dp=64,tp=8,pp=16,vpp=2,ep=1,cp=1,sp=1" (any subset; others 1),
/// with "split=even|balanced", "first=N" and "last=N" for the stage split
/// "offload=N" for activation offload, "hsdp=N" for hybrid sharding and
/// "etp=N" for expert tensor parallelism.
llvm::Expected<Layout> parseLayout(llvm::StringRef text);

} // namespace sched

#endif // LIB_COSTMODEL_LAYOUT_H
