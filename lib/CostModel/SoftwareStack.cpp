//===- SoftwareStack.cpp - what a training framework runs -----------------===//
//
// The built-in stacks and the stack file reader. The source of each fact is
// in docs/cost-model.md, "Software stacks"; the comments name it briefly.
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/SoftwareStack.h"

#include "lib/CostModel/DescriptionReader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace sched;

static const std::vector<SoftwareStack> &stacks() {
  static const std::vector<SoftwareStack> all = [] {
    std::vector<SoftwareStack> s;
    // Megatron-Core as Megatron-Bridge 26.02 runs it: TE fused attention,
    // userbuffers TP overlap (CommOverlapConfig tp_comm_overlap), the
    // non-interleaved 1F1B waits on its combined send/receive
    // (p2p_communication.py, wait_on_reqs=True) while the interleaved one
    // overlaps (overlap_p2p_comm with vpp > 1); combined 1F1B is its
    // expert all-to-all overlap (--overlap-moe-expert-parallel-comm).
    SoftwareStack core;
    core.name = "megatron-core";
    core.version = "Megatron-Core 0.15 (Megatron-Bridge 26.02)";
    core.blockingSendSchedules = {"1f1b"};
    core.schedules = {"no-pp", "1f1b", "interleaved-1f1b", "combined-1f1b",
                      "interleaved-combined-1f1b"};
    // Megatron-Bridge's GPT provider fuses the loss
    // (cross_entropy_loss_fusion True) and its performance scripts pick
    // Transformer Engine's implementation (cross_entropy_fusion_impl
    // "te"), which writes the gradient over the BF16 logits.
    core.fusedCrossEntropy = true;
    // Every dispatcher exchanges the layer's BF16 activations: the
    // all-to-all one permutes and sends hidden_states as they come, DeepEP's
    // FusedDispatch passes them to buffer.dispatch unquantized, HybridEP
    // sets fp8_dispatch = False ("Currently, we do not support fp8
    // dispatch"); the experts quantize after the exchange (experts.py's
    // quantization_padding, TE's GroupedLinear) (token_dispatcher.py,
    // fused_a2a.py, core_v0.14.0 to core_v0.19.0). The default,
    // fp8ExpertDispatch false, states it.
    // Megatron-Bridge 26.02 pins Transformer Engine 2.12 (pyproject.toml
    // @21b02e0cfb), whose CPU offload is version 2 (cpu_offload.py,
    // DefaultOffloadSynchronizer; version 1 is cpu_offload_v1.py from TE
    // 2.10, c52576053).
    core.offloadSynchronizerV2 = true;
    // TransformerConfig.__post_init__ refuses CPU offloading with pipeline
    // parallelism and with recomputation (core_v0.14.0 and b0cc2706).
    core.offloadAlone = true;
    // Its dropless MoE block reads the tokens per expert to the host every
    // forward (the grouped experts' split sizes, the all-to-all's splits),
    // so the host cannot run ahead of it: an nsys trace of Megatron-Core
    // (Aug. 2025) running Qwen3-30B-A3B on 8 B200 (x86 host, EP 8, 16
    // local experts, micro-batch 1, BF16, the all-to-all dispatcher, no
    // CUDA graphs) gives median host ranges per MoE forward of 1.87 ms
    // router and preprocessing, 2.62 ms dispatch, 2.19 ms experts and
    // 7.22 ms in all, 0.54 ms left for the combine
    // (yanring/Megatron-MoE-ModelZoo issue 7; docs/cost-model.md).
    core.moeHost.router = 1.87e-3;
    core.moeHost.dispatch = 2.62e-3;
    core.moeHost.combine = 0.54e-3;
    core.moeHost.perLocalExpert = 2.19e-3 / 16;
    // GPT-OSS's pieces outside the fused kernels (Megatron-Core b0cc2706,
    // the core_r0.16 of Megatron-Bridge 26.02, and every submodule commit
    // from v0.2.0 to v0.6.0): TEGroupedMLP._apply_bias adds fc2's bias
    // times each copy's probability per local expert (a mul, an add, a
    // cat); weighted_bias_quick_geglu_impl clamps both halves and cats
    // them before the fused GEGLU (fused_bias_geglu.py); Megatron-Bridge
    // turns rope fusion off for position_embedding_type "yarn"
    // (utils/fusions.py), and Megatron-Core's fused path refuses mscale
    // != 1 anyway (rope_utils.py), so YaRN runs _apply_rotary_pos_emb_bshd.
    core.eagerExpertBias = true;
    core.eagerActivationClamp = true;
    core.eagerYarnRope = true;
    s.push_back(core);

    // Megatron-LM of 2021-22 (v3.0; Narayanan et al. 2021, Korthikanti et
    // al. 2022): attention as baddbmm + fused softmax + bmm, no TP overlap
    // (userbuffers came in 2023), and _communicate waits on every request
    // of batch_isend_irecv and synchronizes the device in every schedule.
    SoftwareStack lm;
    lm.name = "megatron-lm-2022";
    lm.version = "Megatron-LM v3.0 (2022)";
    lm.attention = AttentionKernel::Unfused;
    lm.tensorParallelOverlap = false;
    lm.blockingSendSchedules = {"*"};
    lm.schedules = {"no-pp", "1f1b", "interleaved-1f1b"};
    // Its ZeRO-3 is DeepSpeed's of the time (Narayanan et al. 2021: "We
    // integrated ZeRO into our codebase using the DeepSpeed Python
    // library"): no overlap, as below.
    lm.shardedOverlap = false;
    s.push_back(lm);

    // torchtitan: SDPA (flash), async TP off by default, PyTorch's
    // pipelining runtime (sends waited at the end of the step), its
    // schedule classes, expandable segments (run_train.sh), FSDP2's FP32
    // gradient reduction (mixed_precision_reduce "float32").
    SoftwareStack titan;
    titan.name = "torchtitan";
    titan.version = "torchtitan 0168bd5 (PyTorch 2.9 pipelining)";
    titan.tensorParallelOverlap = false;
    titan.schedules = {"no-pp",          "gpipe", "1f1b", "interleaved-1f1b",
                       "looped-bfs",     "interleaved-zb", "zb-v",
                       "dualpipe-v"};
    titan.expandableSegments = true;
    // Separate wq, wk, wv and w1, w3 (models/llama3/model.py), and
    // selective checkpointing per operator (parallelize_llama.py's
    // _save_list; llama3_8b.toml's selective_ac_option "op").
    titan.separateProjections = true;
    titan.selectiveRecompute = Recompute::perOperator();
    // The model is built in FP32 (train.py: meta device, default dtype)
    // and FSDP2 casts to param_dtype bf16 for the all-gather and the
    // compute (parallelize.py's MixedPrecisionPolicy); the optimizer
    // updates the FP32 shards: no BF16 copy, no master copy.
    titan.fp32Weights = true;
    s.push_back(titan);

    // DeepSpeed's pipeline engine (runtime/pipe): TrainSchedule is 1F1B and
    // p2p.send/recv are blocking; Megatron-DeepSpeed's unfused attention.
    SoftwareStack ds;
    ds.name = "deepspeed";
    ds.version = "DeepSpeed 0.x with Megatron-DeepSpeed (2021-22)";
    ds.attention = AttentionKernel::Unfused;
    ds.tensorParallelOverlap = false;
    ds.blockingSendSchedules = {"*"};
    ds.schedules = {"no-pp", "1f1b"};
    // ZeRO-3 in DeepSpeed 0.3.13-0.5.x: torch.cuda.synchronize() before
    // every parameter's all_gather (partition_parameters.py
    // _allgather_param) and after every submodule's fetch (stage3.py
    // _synchronize_communication); reworked in 0.6.0 (PR #1453).
    ds.shardedOverlap = false;
    s.push_back(ds);

    // MaxText on XLA: no userbuffers (the TPU profile has no TP overlap
    // either), no pipeline in its published recipes beyond its circular
    // pipeline (looped BFS over num_pipeline_repeats), FP32 gradients and
    // moments unless a recipe sets mu_dtype.
    SoftwareStack maxtext;
    maxtext.name = "maxtext";
    maxtext.version = "MaxText (tpu-recipes tags)";
    maxtext.tensorParallelOverlap = false;
    maxtext.schedules = {"no-pp", "gpipe", "looped-bfs"};
    // weight_dtype float32 (base.yml at 76bd53b0f's successors,
    // 3eb77db3c9 and a0fceb5): FP32 parameters that AdamW updates, cast
    // to BF16 at each use; no BF16 copy, no master copy.
    maxtext.fp32Weights = true;
    // The cast's transpose (jax convert_element_type) comes after the
    // reduction the FSDP gather's transpose makes: gradients are
    // reduce-scattered as the BF16 weight GEMM wrote them.
    maxtext.bf16GradientReduction = true;
    // The sparse-matmul MoE block calls its grouped GEMM three times per
    // layer, `w0` and `w1` apart (moe.py `sparse_matmul`, layer_w0 and
    // layer_w1 @a0fceb5): Pallas kernels XLA does not merge.
    maxtext.separateExpertProjections = true;
    s.push_back(maxtext);

    // DeepSeek's own framework (HAI-LLM) as the DeepSeek-V3 report states
    // it: DualPipe, whose all-to-all and pipeline transfers overlap the
    // partner chunk (3.2.1); no tensor parallelism (3.2); FP32 master
    // weights and gradients with BF16 Adam moments, the attention output
    // kept once in E5M6 and the experts' SwiGLU input in FP8 (3.3.2).
    SoftwareStack deepseek;
    deepseek.name = "deepseek-v3";
    deepseek.version = "DeepSeek-V3 technical report (arXiv 2412.19437v2)";
    deepseek.tensorParallelOverlap = false;
    deepseek.schedules = {"no-pp", "dualpipe"};
    deepseek.optimizerMomentBytes = 2;
    deepseek.activationCaching = ActivationCaching::DeepSeekV3;
    // "we quantize the activation before MoE up-projections into FP8 and
    // then apply dispatch components" (3.3.2).
    deepseek.fp8ExpertDispatch = true;
    s.push_back(deepseek);

    // Moonshot's framework as the Kimi K2 report states it (section
    // 2.4.2-2.4.3): pipeline parallelism with virtual stages run as
    // interleaved 1F1B, expert parallelism and ZeRO-1, no tensor
    // parallelism; BF16 parameters with an FP32 gradient accumulation
    // buffer; the experts' up-projection and SwiGLU inputs stored in FP8.
    // The optimizer is Muon, one momentum per parameter: at FP32 (the
    // report names no dtype) that is the 4 bytes of Adam's two BF16
    // moments, which the stack takes for the count.
    SoftwareStack kimi;
    kimi.name = "kimi-k2";
    kimi.version = "Kimi K2 technical report (arXiv 2507.20534v1)";
    kimi.tensorParallelOverlap = false;
    kimi.schedules = {"no-pp", "1f1b", "interleaved-1f1b"};
    kimi.optimizerMomentBytes = 2;
    kimi.activationCaching = ActivationCaching::KimiK2;
    s.push_back(kimi);
    return s;
  }();
  return all;
}

llvm::ArrayRef<SoftwareStack> sched::builtinStacks() { return stacks(); }

std::string sched::builtinStackNames() {
  return llvm::join(llvm::map_range(stacks(),
                                    [](const SoftwareStack &s) -> std::string {
                                      return s.name;
                                    }),
                    ", ");
}

void SoftwareStack::apply(TrainingSpec &training) const {
  static_cast<StackFacts &>(training) = *this;
  training.stack = name;
}

std::optional<double> sched::parseCudnnRelease(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  text.split(parts, '.');
  unsigned major = 0, minor = 0;
  if (parts.size() < 2 || parts.size() > 3 ||
      parts[0].getAsInteger(10, major) || parts[1].getAsInteger(10, minor) ||
      major < 1 || major > 99 || minor > 99)
    return std::nullopt;
  unsigned patch = 0;
  if (parts.size() == 3 && parts[2].getAsInteger(10, patch))
    return std::nullopt;
  return major + minor / 100.0;
}

std::string sched::cudnnReleaseName(double release) {
  const int hundredths = static_cast<int>(std::lround(release * 100));
  return std::to_string(hundredths / 100) + "." +
         std::to_string(hundredths % 100);
}

/// The dtype of a gradient or moment of `bytes` bytes, as stack files and
/// --json spell it.
static const char *dtype(double bytes) { return bytes == 2 ? "bf16" : "fp32"; }

/// Adam's moments as stack files and --json spell them: one dtype for
/// both, or "mu-bf16" (the first in BF16, the second in FP32: 3 bytes a
/// moment on average).
static const char *momentsName(double bytes) {
  return bytes == 3 ? "mu-bf16" : dtype(bytes);
}

llvm::json::Object SoftwareStack::toJson() const {
  llvm::json::Object json{
      {"name", name},
      {"version", version},
      {"attention", attentionKernelName(attention)},
      {"tp_overlap", tensorParallelOverlap},
      {"blocking_p2p", llvm::json::Array(blockingSendSchedules)},
      {"schedules", llvm::json::Array(schedules)},
      {"allocator", expandableSegments ? "expandable" : "caching"},
      {"main_grads", dtype(mainGradientBytes)},
      {"optimizer_moments", momentsName(optimizerMomentBytes)},
      {"weights", fp32Weights ? "fp32" : "bf16"},
      {"gradient_reduction", bf16GradientReduction ? "bf16" : "main"},
      {"activation_caching", activationCachingName(activationCaching)},
      {"moe_dispatcher", moeDispatcherName(moeDispatcher)},
      {"moe_dispatch_dtype", fp8ExpertDispatch ? "fp8" : "bf16"},
      {"cuda_graphs", cudaGraphsName(cudaGraphs)},
      {"moe_host_forward",
       llvm::json::Object{{"router", moeHost.router},
                          {"dispatch", moeHost.dispatch},
                          {"combine", moeHost.combine},
                          {"per_local_expert", moeHost.perLocalExpert}}},
      {"cross_entropy", fusedCrossEntropy ? "fused" : "unfused"},
      {"cpu_offload", offloadSynchronizerV2 ? "te-v2" : "te-v1"},
      {"offload_alone", offloadAlone},
      {"projections", separateProjections ? "separate" : "fused"},
      {"expert_projections", separateExpertProjections ? "separate" : "fused"},
      {"expert_bias", eagerExpertBias ? "eager" : "fused"},
      {"activation_clamp", eagerActivationClamp ? "eager" : "fused"},
      {"yarn_rope", eagerYarnRope ? "eager" : "fused"},
      {"zero3_overlap", shardedOverlap},
      {"selective_recompute",
       selectiveRecompute.isPerOperator() ? "op" : "core_attn"}};
  if (cudnnRelease > 0)
    json["cudnn"] = cudnnReleaseName(cudnnRelease);
  return json;
}

/// The most names a list field of a stack file holds: more than the
/// strategies there are.
static constexpr size_t kMaxStackList = 64;

/// Reads a list of schedule names (or "all"/"none" when `allowWords`).
static std::vector<std::string> readNames(DescriptionReader &reader,
                                          const llvm::json::Object &object,
                                          llvm::StringRef key,
                                          std::vector<std::string> fallback,
                                          bool allowWords) {
  if (!reader.has(key))
    return fallback;
  if (allowWords) {
    if (std::optional<llvm::StringRef> word = object.getString(key)) {
      if (*word == "all")
        return {"*"};
      if (*word == "none")
        return {};
      reader.fail(key, "expected \"all\", \"none\" or a list of schedules");
      return fallback;
    }
  }
  const llvm::json::Array *list = reader.array(key, kMaxStackList);
  if (!list)
    return fallback;
  std::vector<std::string> names;
  for (const llvm::json::Value &item : *list) {
    std::optional<llvm::StringRef> name = item.getAsString();
    if (!name || name->empty()) {
      reader.fail(key, "expected schedule names (strings)");
      return fallback;
    }
    names.push_back(name->str());
  }
  return names;
}

/// Reads an enumerated string field: `fallback` when absent.
static std::string readChoice(DescriptionReader &reader, llvm::StringRef key,
                              llvm::ArrayRef<llvm::StringRef> choices,
                              llvm::StringRef fallback) {
  std::string value = reader.string(key, fallback.str());
  if (reader.ok() && !llvm::is_contained(choices, value))
    reader.fail(key, "expected " + llvm::join(choices, " or ") + ", got '" +
                         llvm::StringRef(value).take_front(32) + "'");
  return value;
}

static llvm::Expected<SoftwareStack>
readStackFile(const llvm::json::Object &object) {
  DescriptionReader reader(object);
  SoftwareStack stack;
  std::string base = reader.string("base", std::string());
  if (!base.empty()) {
    auto found = llvm::find_if(
        stacks(), [&](const SoftwareStack &s) { return s.name == base; });
    if (found == stacks().end())
      return llvm::createStringError(
          "base: unknown stack '" + llvm::StringRef(base).take_front(32) +
          "' (built-in stacks: " + builtinStackNames() + ")");
    stack = *found;
  }
  stack.name = reader.string("name");
  stack.version = reader.string("version", stack.version);
  std::string attention =
      readChoice(reader, "attention", {"flash", "unfused"},
                 attentionKernelName(stack.attention));
  if (reader.ok() && reader.has("cudnn")) {
    const std::string release = reader.string("cudnn");
    if (std::optional<double> parsed = parseCudnnRelease(release))
      stack.cudnnRelease = *parsed;
    else if (reader.ok())
      reader.fail("cudnn", "expected a release \"MAJOR.MINOR\" (\"9.11\"), "
                           "got '" +
                               llvm::StringRef(release).take_front(32) + "'");
  }
  stack.tensorParallelOverlap =
      reader.boolean("tp_overlap", stack.tensorParallelOverlap);
  stack.blockingSendSchedules =
      readNames(reader, object, "blocking_p2p", stack.blockingSendSchedules,
                /*allowWords=*/true);
  stack.schedules =
      readNames(reader, object, "schedules", stack.schedules, false);
  std::string allocator =
      readChoice(reader, "allocator", {"caching", "expandable"},
                 stack.expandableSegments ? "expandable" : "caching");
  std::string grads = readChoice(reader, "main_grads", {"fp32", "bf16"},
                                 dtype(stack.mainGradientBytes));
  std::string moments =
      readChoice(reader, "optimizer_moments", {"fp32", "bf16", "mu-bf16"},
                 momentsName(stack.optimizerMomentBytes));
  std::string weights = readChoice(reader, "weights", {"bf16", "fp32"},
                                   stack.fp32Weights ? "fp32" : "bf16");
  std::string reduction =
      readChoice(reader, "gradient_reduction", {"main", "bf16"},
                 stack.bf16GradientReduction ? "bf16" : "main");
  std::string caching =
      readChoice(reader, "activation_caching",
                 {"transformer-engine", "deepseek-v3", "kimi-k2"},
                 activationCachingName(stack.activationCaching));
  std::string dispatcher =
      readChoice(reader, "moe_dispatcher", {"flex", "alltoall"},
                 moeDispatcherName(stack.moeDispatcher));
  std::string dispatchDtype =
      readChoice(reader, "moe_dispatch_dtype", {"bf16", "fp8"},
                 stack.fp8ExpertDispatch ? "fp8" : "bf16");
  std::string crossEntropy =
      readChoice(reader, "cross_entropy", {"fused", "unfused"},
                 stack.fusedCrossEntropy ? "fused" : "unfused");
  std::string offload =
      readChoice(reader, "cpu_offload", {"te-v1", "te-v2"},
                 stack.offloadSynchronizerV2 ? "te-v2" : "te-v1");
  std::string graphs =
      readChoice(reader, "cuda_graphs", {"none", "moe-router", "layer", "step"},
                 cudaGraphsName(stack.cudaGraphs));
  if (reader.ok() && reader.has("moe_host_forward")) {
    if (const llvm::json::Object *host = reader.nested("moe_host_forward")) {
      // Seconds per MoE forward; a second is far beyond any host (the
      // measured whole block takes 7 ms).
      DescriptionReader times(*host, reader.path("moe_host_forward") + ".");
      auto seconds = [&](llvm::StringRef key, double fallback) {
        return times.number(key, fallback, {1e-9, 1, /*allowZero=*/true});
      };
      stack.moeHost.router = seconds("router", stack.moeHost.router);
      stack.moeHost.dispatch = seconds("dispatch", stack.moeHost.dispatch);
      stack.moeHost.combine = seconds("combine", stack.moeHost.combine);
      stack.moeHost.perLocalExpert =
          seconds("per_local_expert", stack.moeHost.perLocalExpert);
      reader.adopt(times);
    }
  }
  stack.shardedOverlap = reader.boolean("zero3_overlap", stack.shardedOverlap);
  stack.offloadAlone = reader.boolean("offload_alone", stack.offloadAlone);
  std::string projections =
      readChoice(reader, "projections", {"fused", "separate"},
                 stack.separateProjections ? "separate" : "fused");
  std::string expertProjections =
      readChoice(reader, "expert_projections", {"fused", "separate"},
                 stack.separateExpertProjections ? "separate" : "fused");
  auto eager = [&](llvm::StringRef key, bool fallback) {
    return readChoice(reader, key, {"fused", "eager"},
                      fallback ? "eager" : "fused") == "eager";
  };
  const bool expertBias = eager("expert_bias", stack.eagerExpertBias);
  const bool activationClamp =
      eager("activation_clamp", stack.eagerActivationClamp);
  const bool yarnRope = eager("yarn_rope", stack.eagerYarnRope);
  std::string selective =
      readChoice(reader, "selective_recompute", {"core_attn", "op"},
                 stack.selectiveRecompute.isPerOperator() ? "op" : "core_attn");
  if (llvm::Error error = reader.takeError())
    return std::move(error);
  if (stack.name.empty())
    return llvm::createStringError("name: expected a non-empty string");
  stack.attention = *parseAttentionKernel(attention);
  stack.expandableSegments = allocator == "expandable";
  stack.mainGradientBytes = grads == "bf16" ? 2 : 4;
  stack.optimizerMomentBytes = *parseOptimizerMoments(moments);
  stack.fp32Weights = weights == "fp32";
  stack.bf16GradientReduction = reduction == "bf16";
  stack.activationCaching = *parseActivationCaching(caching);
  stack.moeDispatcher = *parseMoeDispatcher(dispatcher);
  stack.fp8ExpertDispatch = dispatchDtype == "fp8";
  stack.fusedCrossEntropy = crossEntropy == "fused";
  stack.offloadSynchronizerV2 = offload == "te-v2";
  stack.cudaGraphs = *parseCudaGraphs(graphs);
  stack.separateProjections = projections == "separate";
  stack.separateExpertProjections = expertProjections == "separate";
  stack.eagerExpertBias = expertBias;
  stack.eagerActivationClamp = activationClamp;
  stack.eagerYarnRope = yarnRope;
  stack.selectiveRecompute =
      selective == "op" ? Recompute::perOperator() : Recompute::Selective;
  return stack;
}

llvm::Expected<SoftwareStack>
sched::loadSoftwareStack(llvm::StringRef nameOrPath) {
  for (const SoftwareStack &stack : stacks())
    if (stack.name == nameOrPath)
      return stack;
  if (!nameOrPath.ends_with(".json"))
    return llvm::createStringError(
        llvm::formatv("unknown stack '{0}' (built-in stacks: {1}; or a "
                      ".json stack file)",
                      nameOrPath.take_front(64), builtinStackNames())
            .str());
  llvm::Expected<std::string> text = readDescriptionFile(nameOrPath);
  if (!text)
    return text.takeError();
  auto named = [&](llvm::Error error) {
    return llvm::createStringError(nameOrPath.take_front(200).str() + ": " +
                                   llvm::toString(std::move(error)));
  };
  llvm::Expected<llvm::json::Value> json = parseDescriptionJson(*text);
  if (!json)
    return named(json.takeError());
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return named(llvm::createStringError("expected a JSON object"));
  llvm::Expected<SoftwareStack> stack = readStackFile(*object);
  if (!stack)
    return named(stack.takeError());
  return stack;
}
