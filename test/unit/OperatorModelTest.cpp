//===- OperatorModelTest.cpp - FLOPs, operators, roofline and links -------===//
//
// Megatron's FLOP count against the published per-token figures, a dense
// layer's operator list against its shapes by hand, GEMM times against the
// kernel-level measurements they must reproduce (DeepGEMM on H800), wave
// quantization by hand, the device profiles chosen by name, and the
// message-size dependence of collectives.
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/CostModel.h"
#include "lib/CostModel/Flops.h"
#include "lib/CostModel/Operators.h"
#include "lib/CostModel/Roofline.h"

#include "gtest/gtest.h"

using namespace sched;

namespace {

ModelSpec preset(llvm::StringRef name) {
  std::optional<ModelSpec> model = modelPreset(name);
  EXPECT_TRUE(model.has_value()) << name.str();
  return model.value_or(ModelSpec());
}

TEST(Flops, DeepSeekV3AsDeepSeekAndMegatronCountIt) {
  ModelSpec v3 = preset("deepseek-v3");
  // The main model: 250 GFLOP per token at 4,096 (DeepSeek's figure, and
  // Megatron's num_floating_point_operations without --mtp-num-layers).
  ModelSpec main = v3;
  main.mtpLayers = 0;
  EXPECT_NEAR(megatronFlopsPerToken(main, 4096) / 1e9, 250, 2.5);
  // Megatron adds one MTP module as one more MoE layer (attention and
  // experts), its 2h x h projection and norms, and a second output layer.
  const double h = 7168, vocab = 129280;
  const double attention =
      6 * (1536.0 * (h + 128 * 192 + 1) + 512.0 * (h + 128 * 256 + 1) +
           h * 64 + 128.0 * 128 * h + 4096.0 * 128 * 192 / 2 +
           4096.0 * 128 * 128 / 2);
  const double experts = 6 * h * 3 * 2048.0 * (8 + 1);
  const double mtp = attention + experts + 6 * (3 * h + 2 * h * h) +
                     6 * h * vocab;
  EXPECT_NEAR(megatronFlopsPerToken(v3, 4096) - megatronFlopsPerToken(main, 4096),
              mtp, 1e-6 * mtp);
}

TEST(Flops, Llama405BIsSixNPlusCausalAttention) {
  ModelSpec m = preset("llama3-405b");
  CostModel model(m, ClusterSpec(), TrainingSpec());
  // N: the matmul weights a token passes (all but the input embedding and
  // the norms).
  const ParameterCounts counts = model.parameters();
  const double normParams = 126.0 * 2 * 16384 + 16384;
  const double n = counts.total - counts.embedding - normParams;
  const double causal = 6 * 126.0 * 128 * 128 * 8192; // 6 L q s, halved x2
  EXPECT_NEAR(megatronFlopsPerToken(m, 8192) / (6 * n + causal), 1, 0.01);
}

TEST(Flops, HardwareFlopsAddTheRecomputedForward) {
  ModelSpec m = preset("llama3-8b");
  const double model = megatronFlopsPerToken(m, 8192);
  EXPECT_EQ(hardwareFlopsPerToken(m, 8192, Recompute::None), model);
  // Full recomputation runs each layer's forward (a third of its three
  // passes) again, not the output layer.
  const double head = 6 * 4096.0 * 128256;
  EXPECT_NEAR(hardwareFlopsPerToken(m, 8192, Recompute::Full),
              model + (model - head) / 3, 1);
  // Selective: the attention core's forward, 2 q s per layer.
  EXPECT_NEAR(hardwareFlopsPerToken(m, 8192, Recompute::Selective),
              model + 32 * 2 * 4096.0 * 8192, 1);
  // Per operator, separate projections: wk (8 KV heads of 128), wo and w3
  // again, 2 FLOPs per multiply-add; fused: the output projection and fc2.
  EXPECT_NEAR(hardwareFlopsPerToken(m, 8192, Recompute::perOperator(), true),
              model + 32 * 2 * 4096.0 * (1024 + 4096 + 14336), 1);
  EXPECT_NEAR(hardwareFlopsPerToken(m, 8192, Recompute::perOperator(), false),
              model + 32 * 2 * 4096.0 * (4096 + 14336), 1);
}

/// Hidden 1024, 8 heads of 128 with 2 KV heads, gated FFN 4096.
llvm::Expected<ModelSpec> smallDenseModel() {
  return parseModelSpec(R"({"name": "d", "layers": 2, "hidden": 1024,
    "ffn_hidden": 4096, "heads": 8, "kv_heads": 2, "vocab": 1000})");
}

TEST(Operators, DenseLayerShapesByHand) {
  // hidden 1024, 8 heads of 128 with 2 KV heads, gated FFN 4096; tp = 2
  // with sequence parallelism; one sequence of 2048.
  llvm::Expected<ModelSpec> m = smallDenseModel();
  ASSERT_TRUE(static_cast<bool>(m));
  TrainingSpec training;
  training.seqLen = 2048;
  Layout layout;
  layout.tp = 2;
  LayerOperators ops = layerOperators(*m, training, layout, false);
  std::vector<std::string> names;
  for (const Operator &op : ops.forward)
    names.push_back(op.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "norm+residual", "qkv", "rotary", "attention",
                       "attention out", "norm+residual", "fc1", "swiglu",
                       "fc2"}));
  const Operator &qkv = ops.forward[1];
  // Column-parallel: all 2048 tokens, (4 + 2 x 1) heads of 128 per rank.
  EXPECT_EQ(qkv.m, 2048);
  EXPECT_EQ(qkv.n, (4 + 2) * 128);
  EXPECT_EQ(qkv.k, 1024);
  // Sequence parallelism: the norm sees 1024 tokens, 5 h BF16 each.
  EXPECT_EQ(ops.forward[0].bytes, 1024.0 * 1024 * 2 * 5);
  // Causal core: 2 matmuls x 2 FLOPs x 4 heads x 128 x 1024 keys.
  EXPECT_EQ(ops.forward[3].flops, 2048.0 * 4 * 2 * 256 * 1024);
  // Backward: a data and a weight gradient per GEMM; 2.5x attention.
  EXPECT_EQ(ops.backwardWeight.size(), 4u);
  const Operator &qkvWeight = ops.backwardWeight[0];
  EXPECT_EQ(qkvWeight.m, 1024);
  EXPECT_EQ(qkvWeight.n, (4 + 2) * 128);
  EXPECT_EQ(qkvWeight.k, 2048);
  EXPECT_TRUE(qkvWeight.accumulates);
  bool sawAttention = false;
  for (const Operator &op : ops.backwardInput)
    if (op.kind == OperatorClass::Attention) {
      EXPECT_EQ(op.flops, 2.5 * ops.forward[3].flops);
      sawAttention = true;
    }
  EXPECT_TRUE(sawAttention);
  // No recomputation by default; selective recomputes the core.
  EXPECT_TRUE(ops.recompute.empty());
  layout.recompute = Recompute::Selective;
  ops = layerOperators(*m, training, layout, false);
  ASSERT_EQ(ops.recompute.size(), 1u);
  EXPECT_EQ(ops.recompute[0].kind, OperatorClass::Attention);
}

// cudnn-frontend PR #505 (SM120 SDPA backward, cuDNN backend column):
// batch 1, 4,096 tokens, 16 heads of 64, causal 558.2 us; with windows of
// 511 and 1,023 keys to the left 171.0 and 276.6 us. The band's kernel
// time relative to the causal one, as Operators prices it (whole 128-key
// tiles), is within 8% of both (0.284 and 0.477 against 0.306 and 0.496);
// the useful FLOPs alone would say 0.23 and 0.44.
TEST(Operators, SlidingWindowReproducesCudnnBandTimes) {
  llvm::Expected<ModelSpec> causal = parseModelSpec(R"({
    "name": "sdpa", "layers": 1, "hidden": 1024, "ffn_hidden": 1024,
    "heads": 16, "head_dim": 64, "vocab": 128})");
  ASSERT_TRUE(static_cast<bool>(causal));
  TrainingSpec training;
  training.seqLen = 4096;
  auto backwardWork = [&](int64_t window) {
    ModelSpec m = *causal;
    m.slidingWindow = window;
    const LayerOperators ops =
        layerOperators(m, training, Layout(), false, window > 0);
    for (const Operator &op : ops.backwardInput)
      if (op.kind == OperatorClass::Attention)
        return op.flops * op.workRatio;
    ADD_FAILURE() << "no attention operator";
    return 0.0;
  };
  const double full = backwardWork(0);
  EXPECT_NEAR(backwardWork(512) / full / (171.0 / 558.2), 1, 0.08);
  EXPECT_NEAR(backwardWork(1024) / full / (276.6 / 558.2), 1, 0.08);
}

TEST(Operators, PerOperatorPolicyRunsEverySecondGemmAgain) {
  // torchtitan's per-operator policy on the small dense layer (hidden
  // 1024, 8 heads of 128, 2 KV heads, gated FFN 4096, one sequence of
  // 2048, tp 1) with torchtitan's separate projections: the calls are wq,
  // wk, wv, wo, w1, w3, w2 (fc2), so wk, wo and w3 run again with every
  // memory-bound operator; the attention kernel does not.
  llvm::Expected<ModelSpec> m = smallDenseModel();
  ASSERT_TRUE(static_cast<bool>(m));
  TrainingSpec training;
  training.seqLen = 2048;
  training.separateProjections = true;
  Layout layout;
  LayerOperators none = layerOperators(*m, training, layout, false);
  std::vector<std::string> names;
  for (const Operator &op : none.forward)
    names.push_back(op.name);
  EXPECT_EQ(names, (std::vector<std::string>{"norm+residual", "q", "k", "v",
                                             "rotary", "attention",
                                             "attention out", "norm+residual",
                                             "w1", "w3", "swiglu", "fc2"}));
  layout.recompute = Recompute::perOperator();
  LayerOperators ops = layerOperators(*m, training, layout, false);
  names.clear();
  for (const Operator &op : ops.recompute)
    names.push_back(op.name);
  EXPECT_EQ(names, (std::vector<std::string>{"norm+residual", "k", "rotary",
                                             "attention out", "norm+residual",
                                             "w3", "swiglu"}));
  // Kept, BF16: the layer input, Q (8 heads), V (2 heads), the kernel's
  // output and FP32 log-sum-exp, w1's output; K, the norms' outputs, the
  // MLP norm's input (wo's output added), w3's output and w2's input go.
  const double tokens = 2048, h = 1024, d = 128, f = 4096;
  const double kept =
      2 * tokens * (h + 8 * d + 2 * d + 8 * d + f) + 4 * tokens * 8;
  EXPECT_DOUBLE_EQ(ops.savedBytes(), kept);
  // Fused projections (Megatron's linear_qkv and linear_fc1): the calls
  // are qkv, out, fc1, fc2, so the output projection and fc2 run again,
  // and Q, K, V and fc1's output stay.
  training.separateProjections = false;
  ops = layerOperators(*m, training, layout, false);
  names.clear();
  for (const Operator &op : ops.recompute)
    if (op.kind == OperatorClass::Gemm)
      names.push_back(op.name);
  EXPECT_EQ(names, (std::vector<std::string>{"attention out", "fc2"}));
  EXPECT_DOUBLE_EQ(ops.savedBytes(),
                   2 * tokens * (h + 12 * d + 8 * d + 2 * f) + 4 * tokens * 8);
}

TEST(Operators, DotsKeepsTheWeightGemmsOutputs) {
  // JAX's checkpoint_dots_with_no_batch_dims on a dense layer (hidden 1024,
  // 8 heads of 128, 2 KV heads, gated FFN 4096, BF16, no TP): the layer
  // input, Q/K/V, the norm before the MLP (for the attention projection's
  // output, the same size) and the FC1 output stay; the norms, SwiGLU and
  // the attention core run again.
  llvm::Expected<ModelSpec> m = smallDenseModel();
  ASSERT_TRUE(static_cast<bool>(m));
  TrainingSpec training;
  training.seqLen = 2048;
  Layout layout;
  layout.recompute = llvm::cantFail(parseRecompute("dots"));
  LayerOperators ops = layerOperators(*m, training, layout, false);
  std::vector<std::string> kept, again;
  double bytes = 0;
  for (const SavedTensor &t : ops.saved) {
    kept.push_back(t.name);
    bytes += t.bytes;
  }
  for (const Operator &op : ops.recompute)
    again.push_back(op.name);
  EXPECT_EQ(kept, (std::vector<std::string>{"attention norm input", "q", "k", "v",
                                            "mlp norm input", "fc1 output"}));
  EXPECT_EQ(again, (std::vector<std::string>{"norm+residual", "attention",
                                             "norm+residual", "swiglu"}));
  // Per token: 1024 + (8 + 2 x 2) x 128 + 1024 + 2 x 4096 values, BF16.
  EXPECT_EQ(bytes, 2048.0 * 2 * (1024 + 12 * 128 + 1024 + 8192));
}

TEST(Operators, SavedNamesKeepWhatTheyName) {
  // MaxText's remat_policy custom on the same dense layer (hidden 1024, 8
  // heads of 128, 2 KV heads, gated FFN 4096, BF16, no TP).
  llvm::Expected<ModelSpec> m = smallDenseModel();
  ASSERT_TRUE(static_cast<bool>(m));
  TrainingSpec training;
  training.seqLen = 2048;
  Layout layout;
  auto names = [](const LayerOperators &ops) {
    std::vector<std::string> kept, again;
    for (const SavedTensor &t : ops.saved)
      kept.push_back(t.name);
    for (const Operator &op : ops.recompute)
      again.push_back(op.name);
    return std::pair{kept, again};
  };
  // Q, K, V and `context` (the kernel's output and log-sum-exp) stay with
  // the layer input; the norms, the output projection (out_proj unnamed),
  // fc1 and SwiGLU run again; fc2 does not (no gradient needs its output)
  // and neither does the attention core.
  layout.recompute = llvm::cantFail(parseRecompute("save:qkv_proj,context"));
  LayerOperators ops = layerOperators(*m, training, layout, false);
  auto [kept, again] = names(ops);
  EXPECT_EQ(kept, (std::vector<std::string>{"attention norm input", "q", "k",
                                            "v", "softmax statistics",
                                            "attention output"}));
  EXPECT_EQ(again, (std::vector<std::string>{"norm+residual", "attention out",
                                             "norm+residual", "fc1",
                                             "swiglu"}));
  // Per token: layer input 1024, Q 8 x 128, K and V 2 x 128 each, the
  // output 8 x 128 values in BF16, and 8 FP32 statistics.
  EXPECT_EQ(ops.savedBytes(),
            2048.0 * (2 * (1024 + 1024 + 256 + 256 + 1024) + 8 * 4));
  EXPECT_EQ(ops.hostBytes(), 0);

  // Ironwood's Llama 3.1 405B recipe: the layer input in host memory, K
  // and V on the device, the rest again (the fused QKV GEMM too, for its
  // dropped Q). It also names mlpwo (=offload), fc2's output, which no
  // gradient needs and no recomputation reads: JAX saves residuals only
  // (a policy says which may be saved), so it is kept nowhere, and fc2
  // does not run again.
  layout.recompute = llvm::cantFail(parseRecompute(
      "save:decoder_layer_input=offload,key_proj,value_proj,mlpwo=offload"));
  ops = layerOperators(*m, training, layout, false);
  std::tie(kept, again) = names(ops);
  EXPECT_EQ(kept, (std::vector<std::string>{"attention norm input", "k", "v"}));
  EXPECT_EQ(again,
            (std::vector<std::string>{"norm+residual", "qkv", "rotary",
                                      "attention", "attention out",
                                      "norm+residual", "fc1", "swiglu"}));
  EXPECT_EQ(ops.savedBytes(), 2048.0 * 2 * (256 + 256));
  EXPECT_EQ(ops.hostBytes(), 2048.0 * 2 * 1024);
  // Naming mlpwo changes nothing: the same tensors with or without it.
  layout.recompute = llvm::cantFail(
      parseRecompute("save:decoder_layer_input=offload,key_proj,value_proj"));
  LayerOperators unnamed = layerOperators(*m, training, layout, false);
  EXPECT_EQ(names(unnamed), names(ops));
  EXPECT_EQ(unnamed.hostBytes(), ops.hostBytes());
}

TEST(Operators, RecomputeModulesRunTheirOperatorsAgain) {
  ModelSpec v3 = preset("deepseek-v3");
  TrainingSpec training;
  training.seqLen = 4096;
  Layout layout;
  layout.ep = 8;
  auto again = [&](llvm::StringRef modules, bool moe) {
    layout.recompute = llvm::cantFail(parseRecompute(modules));
    std::vector<std::string> names;
    for (const Operator &op :
         layerOperators(v3, training, layout, moe).recompute)
      names.push_back(op.name);
    return names;
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(again("mla_up_proj", true), (Names{"q up", "kv up", "rotary"}));
  EXPECT_EQ(again("layernorm", true),
            (Names{"norm+residual", "q norm", "kv norm", "norm+residual"}));
  EXPECT_EQ(again("moe_act", true), (Names{"swiglu"}));
  EXPECT_EQ(again("shared_experts", true),
            (Names{"shared fc1", "swiglu", "shared fc2"}));
  // "mlp" is a dense layer's MLP (Megatron keeps "moe" for MoE layers).
  EXPECT_TRUE(again("mlp", true).empty());
  EXPECT_EQ(again("mlp", false), (Names{"fc1", "swiglu", "fc2"}));
  EXPECT_EQ(again("moe", true),
            (Names{"router", "top-k", "permute", "experts fc1", "swiglu",
                   "experts fc2", "unpermute", "shared fc1", "swiglu",
                   "shared fc2"}));
  EXPECT_EQ(again("full", true).size(),
            layerOperators(v3, training, layout, true).forward.size());
}

TEST(Flops, HardwareFlopsOfRecomputeModules) {
  ModelSpec v3 = preset("deepseek-v3");
  const double model = megatronFlopsPerToken(v3, 4096);
  auto extra = [&](llvm::StringRef modules) {
    return hardwareFlopsPerToken(v3, 4096,
                                 llvm::cantFail(parseRecompute(modules))) -
           model;
  };
  // Per token, 2 FLOPs per multiply-add, in 61 layers and the MTP
  // module's: the q up-projection 1536 x 128 x 192, the kv one 512 x 128
  // x 256.
  EXPECT_NEAR(extra("mla_up_proj"),
              62 * 2 * (1536.0 * 128 * 192 + 512.0 * 128 * 256), 1);
  // The 3 dense layers' MLP: 3 x 7168 x 18432.
  EXPECT_NEAR(extra("mlp"), 3 * 2 * 3 * 7168.0 * 18432, 1);
  // The 58 MoE layers and MTP's: router, 8 routed and 1 shared expert.
  EXPECT_NEAR(extra("moe"),
              59 * 2 * 7168.0 * (256 + 9 * 3 * 2048), 1);
  EXPECT_NEAR(extra("shared_experts"), 59 * 2 * 7168.0 * 3 * 2048, 1);
  EXPECT_NEAR(extra("moe,shared_experts"), extra("moe"), 1);
  EXPECT_EQ(extra("layernorm,moe_act"), 0);
}

/// DeepSeek-V3 at 4,096 tokens per microbatch, ep 8, FP8 GEMMs.
struct Fp8DeepSeek {
  ModelSpec v3 = preset("deepseek-v3");
  TrainingSpec training;
  Layout layout;
  Fp8DeepSeek() {
    training.seqLen = 4096;
    training.precision = Precision::FP8;
    layout.ep = 8;
  }
};

/// An FP8 GEMM's casts, priced as Transformer Engine's quantize kernels
/// measured on a B300 (gemm_profiling.rst: autocast less pre-quantized, per
/// layer of hidden 4,096, FFN 16,384, 15,872 tokens), spread over the
/// elements its 12 te.Linear calls (forward, data and weight gradient
/// shapes M x K x N) quantize, M x K of input and K x N of weight each:
/// 2,483,027,968. Current
/// scaling 2.335 ms and MXFP8 1.823 ms are 6.02 and 4.70 bytes an element
/// at 8 TB/s x 0.8; one FP8 switch takes their mean. The H200 NVL's
/// current scaling (20.285 - 16.785 ms at 4.8 TB/s) lands within 2%.
TEST(Operators, Fp8CastsAsTransformerEngineMeasuredThem) {
  const double m = 15872, h = 4096, qkv = 12288, f = 16384;
  const double elements = m * (h + h + h + f) + h * qkv + h * h + h * f +
                          f * h + m * (qkv + h + f + h) + qkv * h + h * h +
                          f * h + h * f + h * m + m * qkv + h * m + m * h +
                          h * m + m * f + f * m + m * h;
  EXPECT_EQ(elements, 2483027968.0);
  const double fp8 = (2.335e-3 + 1.823e-3) / 2 / elements * 8e12 * 0.8;
  EXPECT_NEAR(fp8, 5.36, 0.005);
  EXPECT_NEAR(3.5e-3 / elements * 4.8e12 * 0.8 / fp8, 1, 0.02);
  // The small dense layer at FP8: each GEMM casts its input forward and
  // its incoming gradient backward at those bytes an element.
  llvm::Expected<ModelSpec> model = smallDenseModel();
  ASSERT_TRUE(static_cast<bool>(model));
  TrainingSpec training;
  training.seqLen = 2048;
  training.precision = Precision::FP8;
  const LayerOperators ops = layerOperators(*model, training, Layout(), false);
  double forward = 0, backward = 0;
  for (const Operator &op : ops.forward)
    if (llvm::StringRef(op.name) == "fp8 cast")
      forward += op.bytes;
  for (const Operator &op : ops.backwardInput)
    if (llvm::StringRef(op.name) == "fp8 cast")
      backward += op.bytes;
  // Inputs of QKV (h), attention out (h), fc1 (h) and fc2 (f); gradients
  // of QKV (h + 2 x 2 x 128), attention out (h), gated fc1 (2f), fc2 (h).
  EXPECT_NEAR(forward, 2048.0 * (3 * 1024 + 4096) * fp8, 1e-9 * forward);
  EXPECT_NEAR(backward, 2048.0 * (1536 + 1024 + 8192 + 1024) * fp8,
              1e-9 * backward);
}

TEST(Operators, Fp8RecipeKeepsOutputLayerAndRouterInBf16) {
  auto [v3, training, layout] = Fp8DeepSeek();
  LayerOperators layer = layerOperators(v3, training, layout, true);
  for (const Operator &op : layer.forward) {
    if (op.kind != OperatorClass::Gemm)
      continue;
    EXPECT_EQ(op.precision == Precision::FP8,
              llvm::StringRef(op.name) != "router")
        << op.name;
  }
  // Grouped experts: 256 / 8 = 32 experts here, 4096 x 8 / 32 rows each.
  auto experts = llvm::find_if(layer.forward, [](const Operator &op) {
    return llvm::StringRef(op.name) == "experts fc1";
  });
  ASSERT_NE(experts, layer.forward.end());
  EXPECT_EQ(experts->groups, 32);
  EXPECT_EQ(experts->m, 4096.0 * 8 / 32);
  LayerOperators head = headOperators(v3, training, layout);
  for (const Operator &op : head.forward) {
    if (llvm::StringRef(op.name) == "output") {
      EXPECT_EQ(op.precision, Precision::BF16);
    }
  }
}

/// The bytes a layer keeps under one tensor name.
static double saved(const LayerOperators &ops, llvm::StringRef name) {
  double bytes = 0;
  for (const SavedTensor &t : ops.saved)
    if (name == t.name)
      bytes += t.bytes;
  return bytes;
}

// NVFP4 (Transformer Engine's NVFP4BlockScaling as Megatron-Bridge's
// performance recipes run it): every weight GEMM of the layer, forward and
// both gradients, in FP4; the kept linear inputs are one transposed NVFP4
// copy (0.5 + 1/16 bytes an element); the output projection keeps no
// quantized copy (Megatron saves its BF16 input); each cast costs TE's
// measured NVFP4 quantize time an element; the output layer stays BF16.
TEST(Operators, Nvfp4RecipeByHand) {
  llvm::Expected<ModelSpec> m = smallDenseModel();
  ASSERT_TRUE(static_cast<bool>(m));
  TrainingSpec training;
  training.seqLen = 2048;
  training.precision = Precision::FP4;
  Layout layout;
  const LayerOperators ops = layerOperators(*m, training, layout, false);
  int gemms = 0;
  for (const std::vector<Operator> *list :
       {&ops.forward, &ops.backwardInput, &ops.backwardWeight})
    for (const Operator &op : *list)
      if (op.kind == OperatorClass::Gemm) {
        EXPECT_EQ(op.precision, Precision::FP4) << op.name;
        ++gemms;
      }
  EXPECT_EQ(gemms, 4 * 3);
  EXPECT_DOUBLE_EQ(saved(ops, "fc1 input"), 2048.0 * 1024 * (0.5 + 1.0 / 16));
  EXPECT_DOUBLE_EQ(saved(ops, "output projection input"), 0);
  double cast = 0;
  for (const Operator &op : ops.forward)
    if (llvm::StringRef(op.name) == "nvfp4 cast")
      cast += op.bytes;
  // Inputs of QKV (h), attention out (h), fc1 (h) and fc2 (f).
  const double elements = 2048.0 * (3 * 1024 + 4096);
  // 2.689 ms over 2,483,027,968 elements on a B300, as bytes at its 8 TB/s
  // times 0.8: 6.93 an element.
  EXPECT_NEAR(cast, elements * 2.689e-3 / 2483027968 * 6.4e12, 1e-6 * cast);
  EXPECT_NEAR(cast / elements, 6.93, 0.005);
  const LayerOperators head = headOperators(*m, training, layout);
  for (const Operator &op : head.forward)
    if (op.kind == OperatorClass::Gemm) {
      EXPECT_EQ(op.precision, Precision::BF16) << op.name;
    }
}

// An NVFP4 GEMM runs at the FP4 peak times a measured fraction: on
// Blackwell Ultra TE's B300 layer (5,093 TFLOP/s of 15 PF), on Blackwell
// the B200's CUTLASS GEMM at 16384 x 6144 x 4096 (3,904.329 of 9 PF; vLLM
// PR #20578); devices without an fp4 peak or measurement, and MoE models,
// are refused rather than priced.
TEST(Roofline, Nvfp4GemmsAndTheirRefusals) {
  std::optional<ClusterSpec> gb200 = clusterPreset("gb200-nvl72");
  ASSERT_TRUE(gb200.has_value());
  EXPECT_EQ(gb200->peak(Precision::FP4), 10e15);
  EXPECT_NEAR(gb200->efficiency.matmulFp4, 3904.329 / 9000, 1e-12);
  EXPECT_NEAR(efficiencyForDevice("B200 (HGX)").matmulFp4, 3904.329 / 9000,
              1e-12);
  EXPECT_NEAR(efficiencyForDevice("GB300").matmulFp4, 5.093 / 15, 1e-12);
  Operator op;
  op.kind = OperatorClass::Gemm;
  op.m = op.n = op.k = 8192;
  op.precision = Precision::FP4;
  EXPECT_DOUBLE_EQ(gemmCeiling(op, gb200->efficiency), 3904.329 / 9000);
  op.precision = Precision::FP8;
  EXPECT_DOUBLE_EQ(gemmCeiling(op, gb200->efficiency),
                   gb200->efficiency.matmulFp8);
  llvm::Expected<ModelSpec> dense = smallDenseModel();
  ASSERT_TRUE(static_cast<bool>(dense));
  TrainingSpec training;
  training.devices = 8;
  training.seqLen = 2048;
  training.globalBatchTokens = 2048 * 8;
  training.precision = Precision::FP4;
  EXPECT_FALSE(
      static_cast<bool>(CostModel(*dense, *gb200, training).checkTraining()));
  auto refusal = [&](const ModelSpec &model, const ClusterSpec &cluster) {
    llvm::Error error = CostModel(model, cluster, training).checkTraining();
    return error ? llvm::toString(std::move(error)) : std::string();
  };
  std::optional<ClusterSpec> h100 = clusterPreset("h100-ib");
  ASSERT_TRUE(h100.has_value());
  EXPECT_NE(refusal(*dense, *h100).find("has no fp4 peak"), std::string::npos);
  ClusterSpec unmeasured = *gb200;
  unmeasured.efficiency.matmulFp4 = 0;
  EXPECT_NE(refusal(*dense, unmeasured).find("no NVFP4 GEMM efficiency"),
            std::string::npos);
  std::optional<ModelSpec> moe = modelPreset("gpt-oss-20b");
  ASSERT_TRUE(moe.has_value());
  EXPECT_NE(refusal(*moe, *gb200).find("NVFP4 grouped expert GEMMs"),
            std::string::npos);
}

/// DeepSeek-V3's activation caching (report section 3.3.2) by hand on one
/// MoE layer at 4,096 tokens, ep 8, FP8: the attention output kept once in
/// E5M6 (128 heads x 128 x 1.5 bytes) where Transformer Engine keeps it in
/// BF16 and again in FP8 (2 + 1 bytes); the experts' SwiGLU input in FP8
/// (8 copies x 2 x 2048 x 1 byte, not 2) and its output (fc2's FP8 input,
/// 8 x 2048 x 1) made again in the backward, with no recompute policy.
TEST(Operators, DeepSeekCachingKeepsFp8SwigluInputsAndOneAttentionOutput) {
  auto [v3, training, layout] = Fp8DeepSeek();
  const LayerOperators te = layerOperators(v3, training, layout, true);
  training.activationCaching = ActivationCaching::DeepSeekV3;
  const LayerOperators ds = layerOperators(v3, training, layout, true);
  const double tokens = 4096, heads = 128, v = 128, copies = tokens * 8;
  EXPECT_DOUBLE_EQ(saved(te, "attention output"), tokens * heads * v * 2);
  EXPECT_DOUBLE_EQ(saved(te, "output projection input"), tokens * heads * v);
  EXPECT_DOUBLE_EQ(saved(ds, "attention output"), tokens * heads * v * 1.5);
  EXPECT_DOUBLE_EQ(saved(ds, "output projection input"), 0);
  EXPECT_DOUBLE_EQ(saved(te, "experts fc1 output"), copies * 2 * 2048 * 2);
  EXPECT_DOUBLE_EQ(saved(ds, "experts fc1 output"), copies * 2 * 2048);
  EXPECT_DOUBLE_EQ(saved(te, "experts fc2 input"), copies * 2048);
  EXPECT_DOUBLE_EQ(saved(ds, "experts fc2 input"), 0);
  const double less =
      tokens * heads * v * 1.5 + copies * 2 * 2048 + copies * 2048;
  EXPECT_DOUBLE_EQ(te.savedBytes() - ds.savedBytes(), less);
  // The SwiGLU runs again in the backward without any recompute policy.
  ASSERT_EQ(ds.recompute.size(), 1u);
  EXPECT_EQ(llvm::StringRef(ds.recompute.front().name), "swiglu");
  EXPECT_TRUE(te.recompute.empty());
  // Under BF16 the fact changes nothing.
  training.precision = Precision::BF16;
  EXPECT_DOUBLE_EQ(
      layerOperators(v3, training, layout, true).savedBytes(), [&] {
        TrainingSpec bf16 = training;
        bf16.activationCaching = ActivationCaching::TransformerEngine;
        return layerOperators(v3, bf16, layout, true).savedBytes();
      }());
}

/// Kimi K2's caching (its report, section 2.4.3) by hand: the experts'
/// SwiGLU input in FP8 and the SwiGLU made again, as DeepSeek-V3; the
/// attention output as Transformer Engine keeps it.
TEST(Operators, KimiCachingKeepsFp8SwigluInputsOnly) {
  auto [v3, training, layout] = Fp8DeepSeek();
  const LayerOperators te = layerOperators(v3, training, layout, true);
  training.activationCaching = ActivationCaching::KimiK2;
  const LayerOperators kimi = layerOperators(v3, training, layout, true);
  const double tokens = 4096, heads = 128, v = 128, copies = tokens * 8;
  EXPECT_DOUBLE_EQ(saved(kimi, "attention output"), tokens * heads * v * 2);
  EXPECT_DOUBLE_EQ(saved(kimi, "output projection input"), tokens * heads * v);
  EXPECT_DOUBLE_EQ(saved(kimi, "experts fc1 output"), copies * 2 * 2048);
  EXPECT_DOUBLE_EQ(saved(kimi, "experts fc2 input"), 0);
  EXPECT_DOUBLE_EQ(te.savedBytes() - kimi.savedBytes(),
                   copies * 2 * 2048 + copies * 2048);
  ASSERT_EQ(kimi.recompute.size(), 1u);
  EXPECT_EQ(llvm::StringRef(kimi.recompute.front().name), "swiglu");
}

/// The loss's kept bytes and traffic by hand: Megatron's unfused
/// vocab-parallel cross-entropy keeps FP32 softmax outputs (4 bytes per
/// logit) and moves 10 + 6 bytes per logit; Transformer Engine's fused one
/// keeps the BF16 gradient it wrote over the logits (2) and moves 4 + 4.
TEST(Operators, FusedCrossEntropyKeepsTheBf16Gradient) {
  ModelSpec m = preset("llama3-8b");
  TrainingSpec training;
  training.seqLen = 4096;
  Layout layout;
  auto loss = [&](const LayerOperators &ops, bool backward) {
    const auto &list = backward ? ops.backwardInput : ops.forward;
    for (const Operator &op : list)
      if (llvm::StringRef(op.name) == "cross-entropy")
        return op.bytes;
    return 0.0;
  };
  const double logits = 4096.0 * static_cast<double>(m.vocab);
  LayerOperators plain = headOperators(m, training, layout);
  EXPECT_DOUBLE_EQ(loss(plain, false), logits * 10);
  EXPECT_DOUBLE_EQ(loss(plain, true), logits * 6);
  training.fusedCrossEntropy = true;
  LayerOperators fused = headOperators(m, training, layout);
  EXPECT_DOUBLE_EQ(loss(fused, false), logits * 4);
  EXPECT_DOUBLE_EQ(loss(fused, true), logits * 4);
  // The stage holding the head keeps 2 bytes per logit, not 4.
  ClusterSpec c;
  TrainingSpec t;
  t.devices = 8;
  t.seqLen = 4096;
  t.globalBatchTokens = 4096 * 8;
  Layout l;
  l.dp = 8;
  CostModel unfusedModel(m, c, t);
  ASSERT_FALSE(static_cast<bool>(unfusedModel.checkLayout(l)));
  const double unfusedBytes = unfusedModel.stages(l).back().activationBytes;
  t.fusedCrossEntropy = true;
  CostModel fusedModel(m, c, t);
  EXPECT_DOUBLE_EQ(unfusedBytes - fusedModel.stages(l).back().activationBytes,
                   logits * 2);
}

/// GPT-OSS's eager pieces in Megatron-Core by hand (docs/cost-model.md,
/// "GPT-OSS's eager pieces"): one MoE layer of gpt-oss-120b at 4,096
/// tokens, ep 8, top-4, so 16,384 expert copies. fc2's bias times each
/// copy's probability (_apply_bias) moves 12 bytes an element of fc2's
/// output forward and 16 backward; the clamp before the fused GEGLU 8 and
/// 10 an element of fc1's output (2 x 2,880 wide) and keeps the clamped
/// copy; YaRN's unfused rotary 24 and 26 an element of Q and K (64 + 8
/// heads of 64) where the fused one moves 4 and 8. Stacks that fuse them,
/// and models without them, get none of it.
TEST(Operators, GptOssEagerPiecesByHand) {
  ModelSpec oss = preset("gpt-oss-120b");
  TrainingSpec training;
  training.seqLen = 4096;
  Layout layout;
  layout.ep = 8;
  auto bytes = [](const LayerOperators &ops, llvm::StringRef name,
                  bool backward) {
    double sum = 0;
    for (const Operator &op : backward ? ops.backwardInput : ops.forward)
      if (name == op.name)
        sum += op.bytes;
    return sum;
  };
  const double copies = 4096.0 * 4, h = 2880, fc1 = copies * 2 * 2880;
  const double qk = 4096.0 * (64 + 8) * 64;
  const LayerOperators fused = layerOperators(oss, training, layout, true);
  EXPECT_DOUBLE_EQ(bytes(fused, "expert bias", false), 0);
  EXPECT_DOUBLE_EQ(bytes(fused, "activation clamp", false), 0);
  EXPECT_DOUBLE_EQ(bytes(fused, "rotary", false), qk * 4);
  EXPECT_DOUBLE_EQ(bytes(fused, "rotary", true), qk * 8);
  training.eagerExpertBias = training.eagerActivationClamp =
      training.eagerYarnRope = true;
  const LayerOperators eager = layerOperators(oss, training, layout, true);
  EXPECT_DOUBLE_EQ(bytes(eager, "expert bias", false), copies * h * 12);
  EXPECT_DOUBLE_EQ(bytes(eager, "expert bias", true), copies * h * 16);
  EXPECT_DOUBLE_EQ(bytes(eager, "activation clamp", false), fc1 * 8);
  EXPECT_DOUBLE_EQ(bytes(eager, "activation clamp", true), fc1 * 10);
  EXPECT_DOUBLE_EQ(bytes(eager, "rotary", false), 0);
  EXPECT_DOUBLE_EQ(bytes(eager, "rotary (yarn, eager)", false), qk * 24);
  EXPECT_DOUBLE_EQ(bytes(eager, "rotary (yarn, eager)", true), qk * 26);
  EXPECT_DOUBLE_EQ(saved(eager, "clamped fc1 output"), fc1 * 2);
  EXPECT_DOUBLE_EQ(eager.savedBytes() - fused.savedBytes(), fc1 * 2);
  // Recomputing moe_act runs the clamp again and drops its copy; the bias
  // is outside the checkpointed activation.
  layout.recompute = llvm::cantFail(parseRecompute("moe_act"));
  const LayerOperators again = layerOperators(oss, training, layout, true);
  std::vector<std::string> names;
  for (const Operator &op : again.recompute)
    names.push_back(op.name);
  EXPECT_EQ(names, (std::vector<std::string>{"activation clamp", "swiglu"}));
  EXPECT_DOUBLE_EQ(saved(again, "clamped fc1 output"), 0);
  // A model without the pieces costs the same on either stack.
  layout.recompute = Recompute();
  ModelSpec plain = oss;
  plain.expertBias = plain.yarnRope = false;
  plain.activationClamp = 0;
  TrainingSpec none = training;
  none.eagerExpertBias = none.eagerActivationClamp = none.eagerYarnRope = false;
  const LayerOperators a = layerOperators(plain, training, layout, true);
  const LayerOperators b = layerOperators(plain, none, layout, true);
  ASSERT_EQ(a.forward.size(), b.forward.size());
  EXPECT_DOUBLE_EQ(a.savedBytes(), b.savedBytes());
}

/// Expert tensor parallelism by hand: DeepSeek-V3 at tp=2 routes 4096 / 2
/// tokens per rank; with ep=8, etp=2 each rank holds 256 / 8 = 32 experts'
/// halves (FFN 2048 / 2) and computes the copies its etp pair received:
/// 2048 x 8 / 32 x 2 = 1024 rows per expert.
TEST(Operators, ExpertTensorParallelSplitsTheExperts) {
  ModelSpec v3 = preset("deepseek-v3");
  TrainingSpec training;
  training.seqLen = 4096;
  Layout layout;
  layout.tp = 2;
  layout.ep = 8;
  layout.etp = 2;
  LayerOperators layer = layerOperators(v3, training, layout, true);
  auto find = [&](llvm::StringRef name) {
    return llvm::find_if(layer.forward, [&](const Operator &op) {
      return llvm::StringRef(op.name) == name;
    });
  };
  auto fc1 = find("experts fc1"), fc2 = find("experts fc2");
  ASSERT_NE(fc1, layer.forward.end());
  ASSERT_NE(fc2, layer.forward.end());
  EXPECT_EQ(fc1->groups, 32);
  EXPECT_EQ(fc1->m, 1024);
  EXPECT_EQ(fc1->n, 2 * 2048 / 2);
  EXPECT_EQ(fc1->k, 7168);
  EXPECT_EQ(fc2->n, 7168);
  EXPECT_EQ(fc2->k, 2048 / 2);
  // The same FLOPs as without etp (twice the rows, half the width).
  layout.etp = 1;
  LayerOperators plain = layerOperators(v3, training, layout, true);
  auto plainFc1 = llvm::find_if(plain.forward, [](const Operator &op) {
    return llvm::StringRef(op.name) == "experts fc1";
  });
  EXPECT_DOUBLE_EQ(operatorFlops(*fc1), operatorFlops(*plainFc1));
}

TEST(Roofline, WaveQuantizationByHand) {
  Efficiency e = efficiencyForDevice("H800");
  ASSERT_EQ(e.multiprocessors, 132);
  // 4096 x 2112: 128x256 tiles 32 x 9 = 288 (3 waves of 132: 0.727);
  // 256x128: 16 x 17 = 272 (0.687); 128x128: 32 x 17 = 544 (5 waves:
  // 0.824). cuBLAS-like choice: the best.
  EXPECT_NEAR(waveEfficiency(4096, 2112, 1, e), 544.0 / 660, 1e-12);
  // Fewer tiles than SMs: split-K, no wave loss.
  EXPECT_EQ(waveEfficiency(64, 2112, 1, e), 1);
}

/// A GEMM's time against a kernel-level measurement on the same device:
/// DeepGEMM's FP8 GEMMs on H800 (deepseek-ai/DeepGEMM README at 55ab91f,
/// ../shared/reference/KERNELS.md 1b), training-sized M.
TEST(Roofline, ReproducesDeepGemmOnH800) {
  std::optional<ClusterSpec> h800 = clusterPreset("h800-ib");
  ASSERT_TRUE(h800.has_value());
  struct Row {
    double m, n, k, tflops;
  };
  for (Row row : {Row{4096, 2112, 7168, 1009}, Row{4096, 24576, 1536, 1125},
                  Row{4096, 32768, 512, 751}, Row{4096, 7168, 16384, 1426},
                  Row{4096, 4096, 7168, 1265}, Row{4096, 7168, 2048, 1168}}) {
    Operator op;
    op.kind = OperatorClass::Gemm;
    op.m = row.m;
    op.n = row.n;
    op.k = row.k;
    op.precision = Precision::FP8;
    const double predicted =
        operatorFlops(op) / operatorTime(op, *h800, 4096) / 1e12;
    EXPECT_NEAR(predicted / row.tflops, 1, 0.15)
        << row.m << "x" << row.n << "x" << row.k << ": " << predicted;
  }
}

/// Grouped expert GEMMs against grouped kernels measured on the device
/// (KERNELS.md 1e): DeepGEMM's contiguous grouped FP8 on H800 (4 groups of
/// 8192 rows) and torchao's grouped MXFP8 on B200 at DeepSeek-V3's expert
/// shapes (8 groups, 131072 tokens), whose weight gradient is slower.
TEST(Roofline, GroupedExpertGemmsReproduceGroupedKernels) {
  std::optional<ClusterSpec> h800 = clusterPreset("h800-ib");
  std::optional<ClusterSpec> b200 = clusterPreset("b200-ib");
  ASSERT_TRUE(h800.has_value() && b200.has_value());
  auto tflops = [](const ClusterSpec &cluster, double m, double n, double k,
                   double groups, bool weight) {
    Operator op;
    op.kind = OperatorClass::Gemm;
    op.m = m;
    op.n = n;
    op.k = k;
    op.groups = groups;
    op.grouped = true;
    op.precision = Precision::FP8;
    op.accumulates = weight;
    return operatorFlops(op) / operatorTime(op, cluster, 4096) / 1e12;
  };
  EXPECT_NEAR(tflops(*h800, 8192, 4096, 7168, 4, false) / 1346, 1, 0.15);
  EXPECT_NEAR(tflops(*h800, 8192, 7168, 2048, 4, false) / 1214, 1, 0.15);
  EXPECT_NEAR(tflops(*b200, 16384, 2048, 7168, 8, false) / 2303, 1, 0.15);
  // The weight gradient: (7168 x 16384)(16384 x 2048) per group.
  EXPECT_NEAR(tflops(*b200, 7168, 2048, 16384, 8, true) / 1830, 1, 0.15);
  // A batched GEMM that is not grouped experts (the unfused attention
  // core) and a BF16 grouped GEMM keep the dense ceilings.
  Operator batched;
  batched.m = 2048;
  batched.n = 2048;
  batched.k = 128;
  batched.groups = 96;
  batched.precision = Precision::FP8;
  EXPECT_EQ(gemmCeiling(batched, b200->efficiency),
            b200->efficiency.matmulFp8);
  batched.grouped = true;
  batched.precision = Precision::BF16;
  EXPECT_EQ(gemmCeiling(batched, b200->efficiency), b200->efficiency.matmul);
  // A device without a grouped measurement: the dense FP8 ceiling.
  batched.precision = Precision::FP8;
  Efficiency a100 = efficiencyForDevice("A100");
  EXPECT_EQ(gemmCeiling(batched, a100), a100.matmulFp8);
  // Ironwood's grouped measurement (tokamax ragged_dot, 0.685) covers its
  // BF16 expert GEMMs too; its dense ones keep 0.829.
  Efficiency ironwood = efficiencyForDevice("TPU7x (Ironwood)");
  batched.precision = Precision::BF16;
  EXPECT_EQ(gemmCeiling(batched, ironwood), 0.685);
  batched.grouped = false;
  EXPECT_EQ(gemmCeiling(batched, ironwood), 0.829);
}

/// Ironwood's grouped expert GEMMs at DeepSeek-V3's shape as MaxText's
/// DeepSeek-V3 recipe runs it (16 sequences of 4,096 a chip, top-8 of 256
/// experts, the maxtext stack's separate w0 and w1): each of the chip's two
/// TensorCores runs 8 x 4096 x 8 = 262,144 rows, which tokamax timed at
/// 13.087 ms forward (with residuals), 13.238 ms for the data gradient and
/// 15.624 ms for the weight gradient (pallas_mosaic_tpu_ragged_dot.json
/// @0a69d97): the chip's w0 and w1 take exactly those. fc2's shape (k 2048,
/// n 7168 at 262,144 rows) was not timed: it keeps the roofline at the
/// table's median fraction, by hand.
TEST(Roofline, IronwoodGroupedGemmsTakeTokamaxTimings) {
  std::optional<ClusterSpec> ironwood = clusterPreset("tpu7x");
  ASSERT_TRUE(ironwood.has_value());
  ModelSpec v3 = preset("deepseek-v3");
  TrainingSpec training;
  training.seqLen = 4096;
  training.separateExpertProjections = true;
  Layout layout;
  layout.microbatchSize = 16;
  LayerOperators layer = layerOperators(v3, training, layout, true);
  auto find = [](const std::vector<Operator> &ops, llvm::StringRef name) {
    auto it = llvm::find_if(ops, [&](const Operator &op) {
      return llvm::StringRef(op.name) == name;
    });
    EXPECT_NE(it, ops.end()) << name.str();
    return it == ops.end() ? Operator() : *it;
  };
  for (llvm::StringRef half : {"experts w0", "experts w1"}) {
    const Operator forward = find(layer.forward, half);
    EXPECT_EQ(forward.m, 16 * 4096 * 8 / 256);
    EXPECT_EQ(forward.n, 2048);
    EXPECT_EQ(forward.k, 7168);
    EXPECT_DOUBLE_EQ(operatorTime(forward, *ironwood, 4096), 13.087e-3);
    EXPECT_DOUBLE_EQ(
        operatorTime(find(layer.backwardInput, half), *ironwood, 4096),
        13.238e-3);
    EXPECT_DOUBLE_EQ(
        operatorTime(find(layer.backwardWeight, half), *ironwood, 4096),
        15.624e-3);
  }
  const Operator fc2 = find(layer.forward, "experts fc2");
  const double rows = 16 * 4096 * 8, bandwidth = 7.38e12 * 0.87;
  const double compute = 2 * rows * 2048 * 7168 / (2307e12 * 0.685);
  const double operands = 256 * (2048.0 * 2048 + 2048.0 * 7168) * 2;
  const double output = rows * 7168 * 2;
  EXPECT_NEAR(operatorTime(fc2, *ironwood, 4096),
              std::max(compute, operands / bandwidth) + output / bandwidth,
              1e-12);
  // The same shape in FP8 was not timed, nor on a device of one core (the
  // rows are then a core's 524,288, another entry: 22.702 ms).
  Operator forward = find(layer.forward, "experts w0");
  forward.precision = Precision::FP8;
  EXPECT_NE(operatorTime(forward, *ironwood, 4096), 13.087e-3);
  forward.precision = Precision::BF16;
  ironwood->efficiency.coresPerDevice = 1;
  EXPECT_DOUBLE_EQ(operatorTime(forward, *ironwood, 4096), 22.702e-3);
  // A cluster file's own BF16 grouped figure replaces the timings too.
  llvm::Expected<ClusterSpec> own = parseClusterSpec(R"json({
      "name": "i", "device": {"name": "TPU7x (Ironwood)",
        "peak_flops": {"bf16": 2.307e15, "fp8": 4.614e15},
        "hbm_bytes": 206e9, "hbm_bandwidth": 7.38e12},
      "domain_size": 256, "domain_bandwidth": 6e11,
      "scale_out_bandwidth": 1.25e10,
      "efficiency": {"grouped_matmul": 0.5}})json");
  ASSERT_TRUE(bool(own)) << llvm::toString(own.takeError());
  EXPECT_FALSE(parseClusterSpec(R"json({
      "name": "i", "device": {"name": "TPU7x (Ironwood)",
        "peak_flops": {"bf16": 2.307e15}, "hbm_bytes": 206e9,
        "hbm_bandwidth": 7.38e12},
      "domain_size": 256, "domain_bandwidth": 6e11,
      "scale_out_bandwidth": 1.25e10})json")
                   ->efficiency.groupedGemms.empty());
  EXPECT_TRUE(own->efficiency.groupedGemms.empty());
  // w0 at the file's 0.5: 2 x 524,288 x 7168 x 2048 FLOPs, then its BF16
  // output (524,288 x 2048) at 0.87 of the HBM.
  EXPECT_NEAR(operatorTime(forward, *own, 4096),
              2 * rows * 7168 * 2048 / (2.307e15 * 0.5) +
                  rows * 2048 * 2 / bandwidth,
              1e-12);
  // Fused, fc1 over both halves (n 4096) matches no timed shape.
  training.separateExpertProjections = false;
  LayerOperators fused = layerOperators(v3, training, layout, true);
  const Operator fc1 = find(fused.forward, "experts fc1");
  EXPECT_EQ(fc1.n, 2 * 2048);
  EXPECT_DOUBLE_EQ(operatorFlops(fc1), 2 * operatorFlops(forward));
  EXPECT_EQ(llvm::count_if(fused.forward,
                           [](const Operator &op) {
                             return llvm::StringRef(op.name) == "experts w0";
                           }),
            0);
}

TEST(Roofline, MeasuredGemmsOverrideTheRoofline) {
  std::optional<ClusterSpec> h100 = clusterPreset("h100-ib");
  ASSERT_TRUE(h100.has_value());
  Operator op;
  op.kind = OperatorClass::Gemm;
  op.m = 8192;
  op.n = 6144;
  op.k = 4096;
  const double roofline = operatorTime(op, *h100, 8192);
  // A calibration measured this shape at 55% of the BF16 peak.
  h100->efficiency.gemms.push_back({8192, 6144, 4096, false, 0.55});
  EXPECT_DOUBLE_EQ(operatorTime(op, *h100, 8192),
                   operatorFlops(op) / (989e12 * 0.55));
  EXPECT_NE(operatorTime(op, *h100, 8192), roofline);
  // The FP8 GEMM of that shape was not measured: the roofline stands.
  op.precision = Precision::FP8;
  h100->efficiency.gemms.clear();
  const double fp8Roofline = operatorTime(op, *h100, 8192);
  h100->efficiency.gemms.push_back({8192, 6144, 4096, false, 0.55});
  EXPECT_EQ(operatorTime(op, *h100, 8192), fp8Roofline);
}

TEST(Efficiency, ProfilesByDeviceName) {
  EXPECT_EQ(efficiencyForDevice("A100-SXM-80GB").profile, "A100");
  EXPECT_EQ(efficiencyForDevice("H100 SXM").multiprocessors, 132);
  EXPECT_EQ(efficiencyForDevice("B200-NVL72").profile, "GB200");
  EXPECT_EQ(efficiencyForDevice("B200 (HGX)").profile, "B200 (HGX)");
  EXPECT_EQ(efficiencyForDevice("GB300").profile,
            "Blackwell Ultra (B300, GB300)");
  EXPECT_EQ(efficiencyForDevice("TPU v5p").multiprocessors, 1);
  // TPU host links, the scaling book's TPU chapter: v4 16 GB/s, 1.6e10
  // B/s "per TPU", 3.2e10 on v6e; Ironwood takes the per-TPU figure.
  EXPECT_EQ(efficiencyForDevice("TPU v4").hostBandwidth, 16e9);
  EXPECT_EQ(efficiencyForDevice("TPU-v5p").hostBandwidth, 1.6e10);
  EXPECT_EQ(efficiencyForDevice("TPU v6e").hostBandwidth, 3.2e10);
  EXPECT_EQ(efficiencyForDevice("TPU7x-Ironwood").hostBandwidth, 1.6e10);
  // Ironwood's own profile: XLA's GEMM on one TensorCore (0.829), tokamax's
  // splash attention (24.9% forward at 8k), an 8 GiB copy (0.87 of HBM).
  const Efficiency ironwood = efficiencyForDevice("TPU7x (Ironwood)");
  EXPECT_EQ(ironwood.profile, "TPU7x (Ironwood)");
  EXPECT_EQ(ironwood.matmul, 0.829);
  EXPECT_EQ(ironwood.groupedMatmul, 0.685);
  EXPECT_DOUBLE_EQ(ironwood.attentionAt(8192, false, false), 0.249);
  EXPECT_DOUBLE_EQ(ironwood.attentionAt(8192, true, true), 0.360);
  EXPECT_EQ(ironwood.hbm, 0.87);
  EXPECT_EQ(efficiencyForDevice("TPU v7").profile, "TPU7x (Ironwood)");
  EXPECT_EQ(efficiencyForDevice("tpu7x").profile, "TPU7x (Ironwood)");
  EXPECT_EQ(efficiencyForDevice("TPU v5p").profile, "TPU v5p");
  EXPECT_DOUBLE_EQ(efficiencyForDevice("TPU v5p").attentionAt(16384, false,
                                                              true),
                   0.687);
  EXPECT_NE(efficiencyForDevice("MysteryChip").profile.find("generic"),
            std::string::npos);
  // Blackwell's dense ceilings: MAMF's best shape times Transformer
  // Engine's share of it at a transformer's shapes on a B300 (BF16 1503 of
  // 1769 TFLOP/s; FP8 the mean of 2815 and 2677 of 3353); Hopper keeps
  // MAMF (KERNELS.md 1a, 1c).
  const double bf16Share = 0.850, fp8Share = (0.840 + 0.798) / 2;
  EXPECT_NEAR(efficiencyForDevice("B300").matmul, 0.786 * bf16Share, 1e-12);
  EXPECT_NEAR(efficiencyForDevice("B200 (HGX)").matmulFp8, 0.763 * fp8Share,
              1e-12);
  EXPECT_NEAR(efficiencyForDevice("GB200").matmul, 0.729 * bf16Share, 1e-12);
  EXPECT_EQ(efficiencyForDevice("H100").matmul, 0.803);
  // Flash attention interpolates in log(seq) between measured points.
  Efficiency h = efficiencyForDevice("H100");
  EXPECT_NEAR(h.attentionAt(4096, false, false), (0.49 + 0.65) / 2, 1e-12);
  EXPECT_EQ(h.attentionAt(1 << 20, false, true), 0.59);
}

/// Flash attention as the stack's cuDNN release ran it on Blackwell: NVIDIA's
/// cudnn-frontend SDPA benchmark through the frontend graph, Llama 3.1 405B
/// heads, batch 1, causal BF16 (benchmark/sdpa_benchmark_training/
/// artifacts/sdpa_fp8_benchmark_results_NVIDIA_{B200,GB300}.csv, bf16
/// rows): B200 at 8k 1248.265 / 987.670 TFLOP/s forward / backward under
/// 9.10.2 (@9793df5), 1384.231 / 994.850 under 9.13.1 (@0b1577c); GB300
/// 1716.056 / 1150.498 under 9.13.1. A stack at 9.11 runs 9.10.2's curve
/// (the newest measured release not after it), at 9.13 9.13.1's, from 9.18
/// the profile's own.
TEST(Efficiency, AttentionByCudnnRelease) {
  std::optional<ClusterSpec> b200 = clusterPreset("b200-ib");
  ASSERT_TRUE(b200.has_value());
  const Efficiency newest = b200->efficiency;
  Operator forward;
  forward.kind = OperatorClass::Attention;
  forward.flops = 1e12;
  Operator backward = forward;
  backward.backward = true;
  backward.flops = 2.5e12;
  auto tflops = [](const Operator &op, const ClusterSpec &cluster) {
    return op.flops / operatorTime(op, cluster, 8192) / 1e12;
  };
  ClusterSpec at911 = *b200;
  at911.efficiency.useCudnnRelease(9.11);
  // Fractions kept to three places: within 0.1% of the measured rates.
  EXPECT_NEAR(tflops(forward, at911) / 1248.265, 1, 1e-3);
  EXPECT_NEAR(tflops(backward, at911) / 987.670, 1, 1e-3);
  EXPECT_NE(at911.efficiency.profile.find("cuDNN 9.10.2 on a B200"),
            std::string::npos);
  ClusterSpec at913 = *b200;
  at913.efficiency.useCudnnRelease(9.13);
  EXPECT_NEAR(tflops(forward, at913) / 1384.231, 1, 1e-3);
  EXPECT_NEAR(tflops(backward, at913) / 994.850, 1, 1e-3);
  // From 9.18 on, and with no release named, the profile's own curve.
  for (double release : {0.0, 9.18, 9.22}) {
    Efficiency e = newest;
    e.useCudnnRelease(release);
    EXPECT_EQ(e.attentionAt(8192, false, true), 0.53) << release;
    EXPECT_EQ(e.profile, newest.profile);
  }
  // The GB200 takes the B200's fractions of its own peak (same chip); the
  // GB300 its own 9.13.1 run, which stands for older releases too.
  Efficiency gb200 = efficiencyForDevice("B200 (GB200 NVL72)");
  gb200.useCudnnRelease(9.11);
  EXPECT_EQ(gb200.attentionAt(8192, false, false), 0.555);
  Efficiency gb300 = efficiencyForDevice("GB300");
  gb300.useCudnnRelease(9.11);
  EXPECT_NEAR(gb300.attentionAt(8192, false, true) * 2500 / 1150.498, 1, 1e-3);
  // Latent attention has no older measurement: it keeps its curve. Hopper
  // has no older release measured: unchanged.
  EXPECT_EQ(gb300.attentionAt(16384, true, false), 0.79);
  Efficiency h200 = efficiencyForDevice("H200");
  h200.useCudnnRelease(9.11);
  EXPECT_EQ(h200.attentionAt(8192, false, true), 0.55);
  // A stack's release reaches the cost model; a cluster file's own
  // attention figures win over it.
  TrainingSpec training;
  training.cudnnRelease = 9.11;
  CostModel model(*modelPreset("llama3-8b"), *b200, training);
  EXPECT_EQ(model.getCluster().efficiency.attentionAt(8192, false, true),
            0.439);
  llvm::Expected<ClusterSpec> own = parseClusterSpec(R"json({
      "name": "b", "device": {"name": "B200 (HGX)",
        "peak_flops": {"bf16": 2.25e15, "fp8": 4.5e15},
        "hbm_bytes": 192e9, "hbm_bandwidth": 8e12},
      "domain_size": 8, "domain_bandwidth": 9e11,
      "scale_out_bandwidth": 5e10, "efficiency": {"attention": 0.5}})json");
  ASSERT_TRUE(bool(own)) << llvm::toString(own.takeError());
  own->efficiency.useCudnnRelease(9.11);
  EXPECT_EQ(own->efficiency.attentionAt(8192, false, true), 0.5);
}

TEST(Collectives, SmallMessagesReachLessBandwidth) {
  std::optional<ClusterSpec> c = clusterPreset("h100-ib");
  ASSERT_TRUE(c.has_value());
  c->latency = 0;
  CostModel model(preset("llama3-8b"), *c, TrainingSpec());
  const Efficiency &e = c->efficiency;
  // 8 ranks in one node, one 19 MB message: half of the large-message
  // bandwidth (the H200 nccl-tests curve's half point).
  const double bytes = e.domainHalfBytes;
  EXPECT_NEAR(model.reduceScatterTime(bytes, 8, 1),
              7.0 / 8 * bytes / (450e9 * e.domainCollective * 0.5), 1e-15);
  // The same bytes in 1,000 buckets take longer than in one message.
  EXPECT_GT(model.reduceScatterTime(1e9, 8, 1, 1e6),
            model.reduceScatterTime(1e9, 8, 1));
  // Across nodes the half point is a buffer size, as nccl-tests measured it
  // (an all-reduce of 16 MiB per rank over 4 x 8 B200: KERNELS.md 4b): 32
  // ranks, 8 a node, each sending an 80 MB buffer reach half of the link's
  // large-message fraction on their 10 MB inter-node shards, not an eighth
  // of it (the shard compared with the buffer's half point made every
  // multi-node data-parallel bucket ~3x slower than the measurement).
  const double buffer = e.scaleOutHalfBytes;
  const double inside =
      7.0 / 8 * buffer /
      (450e9 * e.domainCollective * buffer / (buffer + e.domainHalfBytes));
  const double across =
      3.0 / 4 * (buffer / 8) / (50e9 * e.scaleOutCollective * 0.5);
  EXPECT_NEAR(model.reduceScatterTime(buffer, 32, 1), inside + across, 1e-15);
}

} // namespace
