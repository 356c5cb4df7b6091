//===- CostModelTest.cpp - the cost model against hand computations -------===//
//
// Parameter counts against the published (Hugging Face) counts, FLOPs and
// bytes of a dense and an MoE layer computed by hand, the ZeRO memory
// terms, and the jax-ml scaling book's data-parallel thresholds, both as
// the book states them and as this cost model's own collective times
// reproduce them.
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/CostModel.h"
#include "lib/CostModel/Flops.h"
#include "lib/CostModel/Memory.h"
#include "lib/CostModel/Operators.h"
#include "lib/CostModel/SoftwareStack.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace sched;

namespace {

ModelSpec preset(llvm::StringRef name) {
  std::optional<ModelSpec> model = modelPreset(name);
  EXPECT_TRUE(model.has_value()) << name.str();
  return model.value_or(ModelSpec());
}

ClusterSpec cluster(llvm::StringRef name) {
  std::optional<ClusterSpec> spec = clusterPreset(name);
  EXPECT_TRUE(spec.has_value()) << name.str();
  return spec.value_or(ClusterSpec());
}

/// Efficiencies of 1, no waves, no latency, no launch cost and memory that
/// costs nothing: the raw figures the book uses.
ClusterSpec ideal(ClusterSpec spec) {
  Efficiency &e = spec.efficiency;
  e.matmul = e.matmulFp8 = 1;
  e.attention = {{1, 1, 1}};
  e.latentAttention.clear();
  e.multiprocessors = 1;
  e.kernelLaunch = 0;
  e.domainCollective = e.scaleOutCollective = 1;
  e.domainHalfBytes = e.scaleOutHalfBytes = 0;
  e.allToAll = 1;
  e.expertExchange.clear();
  e.collectiveMultiprocessors = e.allToAllMultiprocessors = 0;
  spec.hbmBandwidth = 1e30;
  spec.latency = 0;
  return spec;
}

TrainingSpec training(int64_t devices, int64_t seq, int64_t tokens) {
  TrainingSpec t;
  t.devices = devices;
  t.seqLen = seq;
  t.globalBatchTokens = tokens;
  return t;
}

ModelSpec parse(llvm::StringRef json) {
  llvm::Expected<ModelSpec> model = parseModelSpec(json);
  if (!model) {
    ADD_FAILURE() << llvm::toString(model.takeError());
    return ModelSpec();
  }
  return *model;
}

// Every preset name resolves: the built-in datasheets and the measured
// profiles compiled in from lib/CostModel/presets (a measured file that
// stopped parsing would read as an unknown name).
TEST(CostModelPresets, EveryNameLoads) {
  int measured = 0;
  for (llvm::StringRef name : clusterPresetNames()) {
    std::optional<ClusterSpec> spec = clusterPreset(name);
    ASSERT_TRUE(spec.has_value()) << name.str();
    EXPECT_EQ(spec->name, name.str());
    if (spec->efficiency.gemms.empty())
      continue;
    ++measured;
    EXPECT_TRUE(llvm::StringRef(spec->efficiency.profile)
                    .starts_with("calibrated: "))
        << name.str();
    EXPECT_FALSE(spec->efficiency.attention.empty()) << name.str();
  }
  EXPECT_GE(measured, 1);
}

TEST(CostModelParameters, Llama3MatchesPublishedCounts) {
  // Hugging Face's counts of Meta-Llama-3-8B and -70B.
  CostModel small(preset("llama3-8b"), cluster("h100-ib"),
                  training(8, 8192, 8192 * 8));
  EXPECT_DOUBLE_EQ(small.parameters().total, 8030261248.0);
  CostModel large(preset("llama3-70b"), cluster("h100-ib"),
                  training(8, 8192, 8192 * 8));
  EXPECT_DOUBLE_EQ(large.parameters().total, 70553706496.0);
}

TEST(CostModelParameters, DeepSeekV3AndGpt3WithinRounding) {
  CostModel v3(preset("deepseek-v3"), cluster("h800-ib"),
               training(8, 4096, 4096 * 8));
  // DeepSeek-V3 report: 671B total, 37B activated (MTP excluded).
  EXPECT_NEAR(v3.parameters().total / 1e9, 671, 671 * 0.005);
  EXPECT_NEAR(v3.parameters().active / 1e9, 37, 37 * 0.02);
  // GPT-3: 175.0B with biases and learned positions, which we omit.
  CostModel gpt3(preset("gpt3-175b"), cluster("a100-ib"),
                 training(8, 2048, 2048 * 8));
  EXPECT_NEAR(gpt3.parameters().total / 1e9, 175, 175 * 0.005);
}

// A dense layer by hand: hidden 1024, 8 heads of 128, gated FFN 4096,
// sequence 2048, one microbatch of one sequence, one device.
constexpr llvm::StringLiteral kDense = R"({
  "name": "dense", "layers": 2, "hidden": 1024, "ffn_hidden": 4096,
  "heads": 8, "vocab": 1000 })";

TEST(CostModelFlops, DenseLayerByHand) {
  ClusterSpec c = ideal(cluster("h100-ib"));
  CostModel model(parse(kDense), c, training(1, 2048, 2048));
  Layout layout;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
  std::vector<StageEstimate> stages = model.stages(layout);
  ASSERT_EQ(stages.size(), 1u);
  const double tokens = 2048;
  // Q, K, V, O: 4 h^2; gated MLP: 3 h f; per layer, 2 FLOPs per weight.
  const double layerMatmul = 2 * tokens * (4.0 * 1024 * 1024 + 3.0 * 1024 * 4096);
  const double head = 2 * tokens * 1024.0 * 1000;
  EXPECT_DOUBLE_EQ(stages[0].forwardTerms.matmul * c.peakBf16,
                   2 * layerMatmul + head);
  // Causal attention: QK^T and AV over 2048 / 2 keys per query (Megatron's
  // count).
  const double attention = 2 * tokens * (1024.0 + 1024.0) * 2048 / 2;
  EXPECT_DOUBLE_EQ(stages[0].forwardTerms.attention * c.peakBf16,
                   2 * attention);
  // Backward: the input gradient repeats the matmuls, W repeats them.
  EXPECT_DOUBLE_EQ(stages[0].backwardWeight * c.peakBf16,
                   2 * layerMatmul + head);
  // Megatron's model FLOPs: 6 x the layers' GEMM weights, 6 x the causal
  // core (q x seq per layer), 6 x h x the vocabulary padded to 128.
  const double perToken = 6 * (2 * (4.0 * 1024 * 1024 + 3.0 * 1024 * 4096) +
                               1024.0 * 1024) +
                          6 * 2 * 1024 * 2048.0;
  EXPECT_DOUBLE_EQ(model.modelFlopsPerToken(), perToken);
}

// Sliding-window attention by hand: the kDense layer shape with 4 layers,
// every second one (layers 1 and 3, 0-based) full and the others within
// 256 keys. A query of a windowed layer meets 256 - 256^2 / (2 x 2048) =
// 240 keys on average (the band of 2048 x 256 - 256^2 / 2 scores), one of
// a full layer 1024.
constexpr llvm::StringLiteral kWindowed = R"({
  "name": "windowed", "layers": 4, "hidden": 1024, "ffn_hidden": 4096,
  "heads": 8, "vocab": 1000, "sliding_window": 256,
  "full_attention_every": 2 })";

TEST(CostModelFlops, SlidingWindowLayersByHand) {
  const ModelSpec m = parse(kWindowed);
  EXPECT_EQ(m.windowedLayersIn(0, 4), 2);
  EXPECT_EQ(m.windowedLayersIn(1, 4), 1);
  EXPECT_EQ(m.windowedLayersIn(1, 2), 0);
  EXPECT_TRUE(m.isWindowedLayer(0));
  EXPECT_FALSE(m.isWindowedLayer(3));
  EXPECT_DOUBLE_EQ(meanKeysPerQuery(2048, 256), 240);
  EXPECT_DOUBLE_EQ(meanKeysPerQuery(2048, 0), 1024);
  EXPECT_DOUBLE_EQ(meanKeysPerQuery(2048, 4096), 1024);
  ClusterSpec c = ideal(cluster("h100-ib"));
  const double tokens = 2048;
  const double full = 2 * tokens * (1024.0 + 1024.0) * 1024;
  const double band = 2 * tokens * (1024.0 + 1024.0) * 240;
  // The operator counts the band's FLOPs (what MFU counts).
  const LayerOperators windowedOps =
      layerOperators(m, training(1, 2048, 2048), Layout(), false, true);
  EXPECT_DOUBLE_EQ(windowedOps.forward[3].flops, band);
  CostModel one(m, c, training(1, 2048, 2048));
  Layout layout;
  ASSERT_FALSE(static_cast<bool>(one.checkLayout(layout)));
  // A stage per layer: the windowed stages (0, 2) take the causal
  // kernel's time in proportion to the key tiles they visit, the full ones
  // (1, 3) the causal half; the backward 2.5x each. 16 query tiles of 128:
  // the band visits min(k + 1, 3) key tiles (45 in all), the triangle
  // k + 1 (136).
  CostModel four(m, c, training(4, 2048, 2048 * 4));
  Layout piped;
  piped.pp = 4;
  piped.megatronSplit = true;
  ASSERT_FALSE(static_cast<bool>(four.checkLayout(piped)));
  const std::vector<StageEstimate> stages = four.stages(piped);
  ASSERT_EQ(stages.size(), 4u);
  for (int s = 0; s < 4; ++s) {
    const double expected = s % 2 == 0 ? full * 45 / 136 : full;
    EXPECT_DOUBLE_EQ(stages[s].forwardTerms.attention * c.peakBf16, expected)
        << s;
    EXPECT_DOUBLE_EQ(stages[s].backwardTerms.attention * c.peakBf16,
                     2.5 * expected)
        << s;
  }
  // One stage: two layers of each kind.
  EXPECT_DOUBLE_EQ(one.stages(layout)[0].forwardTerms.attention * c.peakBf16,
                   2 * full + 2 * full * 45 / 136);
  // Megatron's model FLOPs count the band too: 6 x the attention core's
  // multiply-adds less, per windowed layer, than a causal layer's.
  ModelSpec causal = m;
  causal.slidingWindow = 0;
  causal.fullAttentionEvery = 0;
  EXPECT_DOUBLE_EQ(megatronFlopsPerToken(causal, 2048) -
                       megatronFlopsPerToken(m, 2048),
                   6 * 2 * 2 * 1024.0 * (1024 - 240));
  // The model's context-parallel layouts and the unfused kernel are not
  // modelled: refused, not priced as causal attention.
  CostModel two(m, c, training(2, 2048, 2048 * 2));
  Layout split;
  split.cp = 2;
  llvm::Error refused = two.checkLayout(split);
  ASSERT_TRUE(static_cast<bool>(refused));
  EXPECT_NE(llvm::toString(std::move(refused))
                .find("cp > 1 with sliding-window attention is not modelled"),
            std::string::npos);
  TrainingSpec unfused = training(1, 2048, 2048);
  unfused.attention = AttentionKernel::Unfused;
  llvm::Error kernel = CostModel(m, c, unfused).checkTraining();
  ASSERT_TRUE(static_cast<bool>(kernel));
  EXPECT_NE(llvm::toString(std::move(kernel)).find("sliding window"),
            std::string::npos);
}

// Sequence parallelism under NVFP4: Transformer Engine all-gathers the
// quantized copies (0.5625 bytes an element) and reduce-scatters in BF16.
// Per layer and microbatch: forward 2 gathers + 2 scatters, backward 4
// gathers (the gradient's and the input's again) + 2 scatters; BF16 and
// FP8 move 2 bytes in every one.
TEST(CostModelFlops, Nvfp4GathersQuantizedCopiesUnderSequenceParallelism) {
  std::optional<ClusterSpec> gb200 = clusterPreset("gb200-nvl72");
  ASSERT_TRUE(gb200.has_value());
  const ModelSpec m = parse(kDense);
  TrainingSpec t = training(2, 2048, 2048 * 2);
  t.tensorParallelOverlap = false;
  Layout layout;
  layout.tp = 2;
  for (Precision precision : {Precision::BF16, Precision::FP4}) {
    t.precision = precision;
    CostModel model(m, *gb200, t);
    ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
    const StageEstimate stage = model.stages(layout)[0];
    const double bf16 = model.reduceScatterTime(2.0 * 2048 * 1024, 2, 1);
    const double gather =
        precision == Precision::FP4
            ? model.reduceScatterTime((0.5 + 1.0 / 16) * 2048 * 1024, 2, 1)
            : bf16;
    EXPECT_DOUBLE_EQ(stage.forwardTerms.tensorParallel,
                     2 * (2 * gather + 2 * bf16))
        << precisionName(precision).str();
    EXPECT_DOUBLE_EQ(stage.backwardTerms.tensorParallel,
                     2 * (4 * gather + 2 * bf16))
        << precisionName(precision).str();
  }
}

TEST(CostModelFlops, SlidingWindowFieldErrors) {
  auto error = [](llvm::StringRef json) {
    llvm::Expected<ModelSpec> model = parseModelSpec(json);
    return model ? std::string() : llvm::toString(model.takeError());
  };
  const std::string base = R"("name": "w", "layers": 4, "hidden": 64,
    "ffn_hidden": 128, "heads": 4, "vocab": 100)";
  EXPECT_NE(error("{" + base + R"(, "full_attention_every": 2})")
                .find("full_attention_every: needs sliding_window"),
            std::string::npos);
  EXPECT_NE(
      error("{" + base + R"(, "sliding_window": 0})").find("sliding_window"),
      std::string::npos);
  EXPECT_NE(error("{" + base + R"(, "sliding_window": "128"})")
                .find("sliding_window"),
            std::string::npos);
  EXPECT_EQ(error("{" + base + R"(, "sliding_window": 128,
    "full_attention_every": 2, "attention_sinks": true})"),
            "");
}

// Usable memory by hand (docs/cost-model.md, "Usable memory"):
// nvidia-smi's total less the 1.333e9 bytes measured for the CUDA context
// and libraries, times the allocator's measured share; a TPU keeps its
// stated 0.9 margin of HBM (95 GiB on a v5p).
TEST(CostModelMemory, UsableMemoryIsTheMeasuredReserveAndShare) {
  ModelSpec m = parse(kDense);
  const double h100 = 81559.0 * 1048576;
  CostModel caching(m, cluster("h100-ib"), training(4, 2048, 2048 * 4));
  EXPECT_DOUBLE_EQ(caching.memoryLimit(), (h100 - 1.333e9) * 0.917);
  TrainingSpec t = training(4, 2048, 2048 * 4);
  t.expandableSegments = true;
  CostModel expandable(m, cluster("h100-ib"), t);
  EXPECT_DOUBLE_EQ(expandable.memoryLimit(), (h100 - 1.333e9) * 0.988);
  CostModel gb200(m, cluster("gb200-nvl72"), training(4, 2048, 2048 * 4));
  EXPECT_DOUBLE_EQ(gb200.memoryLimit(), (189471.0 * 1048576 - 1.333e9) * 0.917);
  // TPUs: XLA's compile-time HBM budget, 0.977 of a v5p's 95 GiB (the
  // v6e's measured fraction) and 0.987 of TPU7x's 192 GiB.
  CostModel tpu(m, cluster("tpu-v5p"), training(4, 2048, 2048 * 4));
  EXPECT_DOUBLE_EQ(tpu.memoryLimit(), 95.0 * (1 << 30) * 0.977);
  CostModel ironwood(m, cluster("tpu7x"), training(4, 2048, 2048 * 4));
  EXPECT_DOUBLE_EQ(ironwood.memoryLimit(), 192.0 * (1 << 30) * 0.987);
}

TEST(CostModelMemory, DatasheetLabelsReadAsTheDevicesMemory) {
  // nvidia-smi's totals for the labels datasheets print; Google's GiB.
  EXPECT_EQ(labelledMemory("H100-SXM", 80e9), 81559.0 * 1048576);
  EXPECT_EQ(labelledMemory("B200-NVL72", 186e9), 189471.0 * 1048576);
  EXPECT_EQ(labelledMemory("B200-HGX", 180e9), 183359.0 * 1048576);
  EXPECT_EQ(labelledMemory("GB300", 288e9), 284208.0 * 1048576);
  EXPECT_EQ(labelledMemory("B300", 288e9), 275040.0 * 1048576);
  EXPECT_EQ(labelledMemory("TPU-v4", 32e9), 32.0 * (1 << 30));
  EXPECT_EQ(labelledMemory("TPU7x Ironwood", 192e9), 192.0 * (1 << 30));
  // Not a label of that device, or already bytes: nothing.
  EXPECT_FALSE(labelledMemory("H100-SXM", 79e9));
  EXPECT_FALSE(labelledMemory("H100-SXM", 81559.0 * 1048576));
  EXPECT_FALSE(labelledMemory("H100-SXM", 141e9));
  EXPECT_FALSE(labelledMemory("MysteryChip", 80e9));
}

TEST(CostModelMemory, ZeroStagesShardWhatTheySay) {
  ClusterSpec c = cluster("h100-ib");
  ModelSpec m = parse(kDense);
  const double params = 2 * (4.0 * 1024 * 1024 + 3.0 * 1024 * 4096 + 2 * 1024) +
                        2 * 1024.0 * 1000 + 1024;
  for (int zero = 0; zero <= 2; ++zero) {
    CostModel model(m, c, training(4, 2048, 2048 * 4));
    Layout layout;
    layout.dp = 4;
    layout.zero = zero;
    ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
    StageEstimate s = model.stages(layout)[0];
    EXPECT_DOUBLE_EQ(s.weightBytes, 2 * params);
    // FP32 main gradients (Megatron's distributed optimizer: 6 + 12/d).
    EXPECT_DOUBLE_EQ(s.gradientBytes, zero >= 2 ? 4 * params / 4 : 4 * params);
    EXPECT_DOUBLE_EQ(s.optimizerBytes,
                     zero >= 1 ? 12 * params / 4 : 12 * params);
  }
}

// MaxText's weights (weight_dtype float32): the FP32 parameters are stored
// once and AdamW updates them in place, so a parameter takes 4 bytes of
// weights, 4 of gradient and 8 of moments (Megatron: 2 + 4 + 12); FSDP
// gathers the BF16 cast, two layers of 2 bytes a parameter, and holds one
// layer's FP32 gradient. The update reads 4 + 4 + 8 and writes 4 + 8
// bytes (Megatron also writes the 2-byte BF16 copy: 30).
TEST(CostModelMemory, Fp32WeightsAsMaxTextKeepsThem) {
  ClusterSpec c = cluster("h100-ib");
  ModelSpec m = parse(kDense);
  const double layerParams = 4.0 * 1024 * 1024 + 3.0 * 1024 * 4096 + 2 * 1024;
  const double params = 2 * layerParams + 2 * 1024.0 * 1000 + 1024;
  TrainingSpec t = training(4, 2048, 2048 * 4);
  t.fp32Weights = true;
  CostModel model(m, c, t);
  Layout layout;
  layout.dp = 4;
  layout.zero = 3;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
  const StageEstimate s = model.stages(layout)[0];
  EXPECT_DOUBLE_EQ(s.weightBytes, 4 * params / 4 + 2 * 2 * layerParams);
  EXPECT_DOUBLE_EQ(s.gradientBytes, 4 * params / 4);
  EXPECT_DOUBLE_EQ(s.optimizerBytes, 8 * params / 4);
  // The layer's gradient, less the FP32 logits (4 x 2,048 x 1,000) the
  // head's backward frees first (LogitsAreFreedBeforeTheLastLayersBackward).
  EXPECT_DOUBLE_EQ(s.workingSetBytes, 4 * layerParams - 4 * 2048 * 1000);
  // The same layout under Megatron's recipe keeps 2 bytes more per
  // sharded parameter.
  CostModel megatron(m, c, training(4, 2048, 2048 * 4));
  const StageEstimate b = megatron.stages(layout)[0];
  EXPECT_DOUBLE_EQ(b.weightBytes + b.gradientBytes + b.optimizerBytes -
                       (s.weightBytes + s.gradientBytes + s.optimizerBytes),
                   2 * params / 4);
  EXPECT_DOUBLE_EQ(fp32WeightsRecipe().optimizerTraffic, 28);
  EXPECT_DOUBLE_EQ(megatronRecipe().optimizerTraffic, 30);
  // BF16 moments: 4 + 4 + 2 + 2 read, 4 + 2 + 2 written.
  EXPECT_DOUBLE_EQ(fp32WeightsRecipe(4, 2).optimizerTraffic, 20);
  EXPECT_DOUBLE_EQ(fp32WeightsRecipe(4, 2).optimizerBytes, 4);
  // optax's mu_dtype bf16 (--optimizer-moments mu-bf16, 3 bytes a moment
  // on average): mu 2 + nu 4 kept; 4 + 4 + 6 read, 4 + 6 written.
  EXPECT_DOUBLE_EQ(fp32WeightsRecipe(4, 3).optimizerBytes, 6);
  EXPECT_DOUBLE_EQ(fp32WeightsRecipe(4, 3).optimizerTraffic, 24);
}

// Megatron's --fp8-param-gather (Megatron-Bridge's FP8 current-scaling and
// MXFP8 precision configs set it): the weights are Transformer Engine FP8
// tensors. Tensorwise: one byte a parameter, stored and gathered
// (Megatron-FSDP's uint8 buffers), and on Hopper, which lacks non-TN FP8
// GEMMs, a transpose beside every unsharded weight. MXFP8: row-wise and
// column-wise bytes (sharded under FSDP) and a scale per 32 of each (whole
// on every rank); FSDP gathers one of the two data buffers a pass, the
// distributed optimizer BF16. The FP32 master, the gradients and Adam's
// moments do not change, nor anything under BF16.
TEST(CostModelMemory, Fp8ParamsKeepAndGatherTheRecipesBytes) {
  ModelSpec m = parse(kDense);
  const double layerParams = 4.0 * 1024 * 1024 + 3.0 * 1024 * 4096 + 2 * 1024;
  const double params = 2 * layerParams + 2 * 1024.0 * 1000 + 1024;
  auto stage = [&](llvm::StringRef device, Fp8Params fp8Params, int zero,
                   Precision precision = Precision::FP8) {
    TrainingSpec t = training(4, 2048, 2048 * 4);
    t.precision = precision;
    t.fp8Params = fp8Params;
    CostModel model(m, cluster(device), t);
    Layout layout;
    layout.dp = 4;
    layout.zero = zero;
    EXPECT_FALSE(static_cast<bool>(model.checkLayout(layout)));
    return model.stages(layout)[0];
  };
  // FSDP on a B200: the shard and the two gathered layers.
  const StageEstimate bf16 = stage("b200-ib", Fp8Params::None, 3);
  EXPECT_DOUBLE_EQ(bf16.weightBytes, 2 * params / 4 + 2 * 2 * layerParams);
  const StageEstimate tensorwise = stage("b200-ib", Fp8Params::Tensorwise, 3);
  EXPECT_DOUBLE_EQ(tensorwise.weightBytes, params / 4 + 2 * layerParams);
  EXPECT_DOUBLE_EQ(tensorwise.gradientBytes, bf16.gradientBytes);
  EXPECT_DOUBLE_EQ(tensorwise.optimizerBytes, bf16.optimizerBytes);
  EXPECT_DOUBLE_EQ(tensorwise.workingSetBytes, bf16.workingSetBytes);
  EXPECT_DOUBLE_EQ(stage("b200-ib", Fp8Params::Mxfp8, 3).weightBytes,
                   2 * params / 4 + 2.0 / 32 * params + 2 * layerParams);
  EXPECT_DOUBLE_EQ(stage("b200-ib", Fp8Params::Mxfp8, 1).weightBytes,
                   2.0625 * params);
  // On an H100 each gathered layer also holds its transpose; under ZeRO-1
  // every weight does.
  EXPECT_DOUBLE_EQ(stage("h100-ib", Fp8Params::Tensorwise, 3).weightBytes,
                   params / 4 + 2 * 2 * layerParams);
  EXPECT_DOUBLE_EQ(stage("h100-ib", Fp8Params::Tensorwise, 1).weightBytes,
                   2 * params);
  EXPECT_DOUBLE_EQ(stage("b200-ib", Fp8Params::Tensorwise, 1).weightBytes,
                   params);
  // BF16 training has no FP8 parameters.
  EXPECT_DOUBLE_EQ(
      stage("b200-ib", Fp8Params::Tensorwise, 3, Precision::BF16).weightBytes,
      bf16.weightBytes);

  // The gathers move what they hold: ZeRO-1's all-gather of 400M updated
  // weights over 8 ranks of one node (900 GB/s) takes half as long in one
  // byte, and MXFP8's (BF16, in the gradient buffer) as long as BF16's;
  // FSDP's two gathers a microbatch move one byte each under either FP8
  // recipe.
  auto dataParallel = [&](Fp8Params fp8Params, int zero = 1) {
    TrainingSpec t = training(8, 2048, 2048 * 8);
    t.precision = Precision::FP8;
    t.fp8Params = fp8Params;
    CostModel model(m, ideal(cluster("b200-ib")), t);
    Layout layout;
    layout.dp = 8;
    layout.zero = zero;
    EXPECT_FALSE(static_cast<bool>(model.checkLayout(layout)));
    StageEstimate s = model.stages(layout)[0];
    s.denseParameters = 400e6;
    s.expertParameters = 0;
    return model.dataParallel(layout, {&s}, 10, 10).total;
  };
  const double reduce = 7.0 / 8 * 4 * 400e6 / 900e9;
  EXPECT_NEAR(dataParallel(Fp8Params::None),
              reduce + 7.0 / 8 * 2 * 400e6 / 900e9, 1e-12);
  EXPECT_NEAR(dataParallel(Fp8Params::Tensorwise),
              reduce + 7.0 / 8 * 1 * 400e6 / 900e9, 1e-12);
  EXPECT_NEAR(dataParallel(Fp8Params::Mxfp8), dataParallel(Fp8Params::None),
              1e-12);
  const double oneByte = 7.0 / 8 * 400e6 / 900e9;
  EXPECT_NEAR(dataParallel(Fp8Params::None, 3), 2 * 2 * oneByte + reduce,
              1e-12);
  EXPECT_NEAR(dataParallel(Fp8Params::Tensorwise, 3), 2 * oneByte + reduce,
              1e-12);
  EXPECT_NEAR(dataParallel(Fp8Params::Mxfp8, 3), 2 * oneByte + reduce, 1e-12);
  // The flag's names.
  EXPECT_EQ(parseFp8Params("tensorwise"), Fp8Params::Tensorwise);
  EXPECT_EQ(parseFp8Params("mxfp8"), Fp8Params::Mxfp8);
  EXPECT_EQ(parseFp8Params("off"), Fp8Params::None);
  EXPECT_FALSE(parseFp8Params("blockwise").has_value());
  EXPECT_EQ(fp8ParamsName(Fp8Params::Mxfp8), "mxfp8");
}

TEST(CostModelMemory, ActivationsByHand) {
  CostModel model(parse(kDense), cluster("h100-ib"), training(1, 2048, 2048));
  Layout layout;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
  // Per token and layer: norm input, QKV input, Q, K, V, attention output
  // (6 h), MLP norm input, fc1 input, then gate, up and their product
  // (3 f); BF16; and the attention kernel's FP32 log-sum-exp per head.
  const double h = 1024, f = 4096, heads = 8, tokens = 2048;
  const double perLayer =
      2 * tokens * (6 * h + 2 * h + 3 * f) + 4 * tokens * heads;
  // The head keeps FP32 logits.
  const double logits = 4 * tokens * 1000.0;
  EXPECT_DOUBLE_EQ(model.stages(layout)[0].activationBytes,
                   2 * perLayer + logits);
  layout.recompute = Recompute::Full;
  EXPECT_DOUBLE_EQ(model.stages(layout)[0].activationBytes,
                   2 * (2 * tokens * h) + logits);
}

TEST(CostModelMemory, RecomputeModulesDropTheirTensors) {
  CostModel model(parse(kDense), cluster("h100-ib"), training(1, 2048, 2048));
  const double h = 1024, f = 4096, heads = 8, tokens = 2048;
  const double logits = 4 * tokens * 1000.0;
  const double all = 2 * tokens * (8 * h + 3 * f) + 4 * tokens * heads;
  auto kept = [&](llvm::StringRef modules) {
    Layout layout;
    layout.recompute = llvm::cantFail(parseRecompute(modules));
    EXPECT_FALSE(static_cast<bool>(model.checkLayout(layout)));
    return (model.stages(layout)[0].activationBytes - logits) / 2;
  };
  // The flash core keeps Q, K, V and its output as inputs of what follows:
  // recomputing it frees only the log-sum-exp.
  EXPECT_DOUBLE_EQ(kept("core_attn"), all - 4 * tokens * heads);
  EXPECT_DOUBLE_EQ(kept("selective"), kept("core_attn"));
  // The norms' outputs: the QKV and fc1 inputs.
  EXPECT_DOUBLE_EQ(kept("layernorm"), all - 2 * tokens * 2 * h);
  // The MLP keeps its input only: gate, up and their product go.
  EXPECT_DOUBLE_EQ(kept("mlp"), all - 2 * tokens * 3 * f);
  EXPECT_DOUBLE_EQ(kept("layernorm,mlp"),
                   all - 2 * tokens * (2 * h + 3 * f));
  // A dense model has no MoE or MLA tensors to drop.
  EXPECT_DOUBLE_EQ(kept("moe,moe_act,shared_experts,mla_up_proj"), all);
}

TEST(CostModelMemory, Fp8KeepsLinearInputsInOneByte) {
  TrainingSpec t = training(1, 2048, 2048);
  t.precision = Precision::FP8;
  CostModel model(parse(kDense), cluster("h100-ib"), t);
  Layout layout;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
  const double h = 1024, f = 4096, heads = 8, tokens = 2048;
  // BF16: two norm inputs, Q, K, V, the kernel's output, fc1's output;
  // one byte: the QKV, projection, fc1 and fc2 inputs (Transformer
  // Engine's FP8 copies); the log-sum-exp.
  const double perLayer = tokens * (2 * (2 * h + 3 * h + h + 2 * f) +
                                    (h + h + h + f) + 4 * heads);
  EXPECT_DOUBLE_EQ(model.stages(layout)[0].activationBytes,
                   2 * perLayer + 4 * tokens * 1000.0);
}

TEST(CostModelMemory, MlaUpProjectionRecomputeDropsTheHeads) {
  ModelSpec m = preset("deepseek-v3");
  CostModel model(m, cluster("h800-ib"), training(64, 4096, 4096 * 64));
  Layout layout;
  layout.dp = 64;
  layout.ep = 64;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
  const double none = model.stages(layout)[0].activationBytes;
  layout.recompute = llvm::cantFail(parseRecompute("mla_up_proj"));
  const double up = model.stages(layout)[0].activationBytes;
  // Q and K (192 per head) and V (128) of 128 heads, BF16, per token, in
  // each of the 61 layers and the MTP module's.
  EXPECT_DOUBLE_EQ(none - up, 62.0 * 4096 * 128 * (2 * 192 + 128) * 2.0);
  // Recomputing the experts' activation drops its BF16 output, fc2's
  // input (8 copies of 2,048 per token), in the 58 MoE layers and the MTP
  // module's; its inputs (fc1's output, the probabilities) stay.
  layout.recompute = llvm::cantFail(parseRecompute("moe_act"));
  const double act = model.stages(layout)[0].activationBytes;
  EXPECT_DOUBLE_EQ(none - act, 59.0 * 4096 * 8 * 2048 * 2.0);
}

TEST(CostModelMemory, PrecisionAwareOptimizerKeepsBf16States) {
  ClusterSpec c = cluster("h100-ib");
  ModelSpec m = parse(kDense);
  TrainingSpec t = training(4, 2048, 2048 * 4);
  t.mainGradientBytes = 2;
  t.optimizerMomentBytes = 2;
  CostModel model(m, c, t);
  Layout layout;
  layout.dp = 4;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
  const double params = 2 * (4.0 * 1024 * 1024 + 3.0 * 1024 * 4096 + 2 * 1024) +
                        2 * 1024.0 * 1000 + 1024;
  StageEstimate s = model.stages(layout)[0];
  // 2 + 2 + (4 + 2 + 2) / d bytes per parameter.
  EXPECT_DOUBLE_EQ(s.gradientBytes, 2 * params);
  EXPECT_DOUBLE_EQ(s.optimizerBytes, 8 * params / 4);
}

TEST(CostModelStages, MegatronSplitPutsFirstAndLastAsked) {
  ModelSpec m = preset("deepseek-v3");
  CostModel model(m, cluster("h800-ib"), training(256, 4096, 4096 * 256));
  llvm::Expected<Layout> layout =
      parseLayout("dp=16,pp=16,ep=8,first=4,last=1");
  ASSERT_TRUE(static_cast<bool>(layout));
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(*layout)));
  std::vector<StageEstimate> stages = model.stages(*layout);
  ASSERT_EQ(stages.size(), 16u);
  EXPECT_EQ(stages.front().numLayers, 4);
  EXPECT_EQ(stages.back().numLayers, 1);
  for (size_t s = 1; s + 1 < stages.size(); ++s)
    EXPECT_EQ(stages[s].numLayers, 4);
  EXPECT_EQ(layout->str(), "dp=16,tp=1,pp=16,vpp=1,ep=8,cp=1,first=4,last=1");
  // An empty last stage holds the MTP module and the output layer only.
  layout = parseLayout("dp=8,pp=8,vpp=4,ep=8,first=1,last=0");
  ASSERT_TRUE(static_cast<bool>(layout));
  layout->dp = 8;
  CostModel wide(m, cluster("h800-ib"), training(64, 4096, 4096 * 64));
  ASSERT_FALSE(static_cast<bool>(wide.checkLayout(*layout)));
  stages = wide.stages(*layout);
  EXPECT_EQ(stages.back().numLayers, 0);
  EXPECT_GT(stages.back().forward, 0);
  // split=even: 61 layers do not split into 16 stages.
  layout = parseLayout("dp=16,pp=16,ep=8,split=even");
  ASSERT_TRUE(static_cast<bool>(layout));
  llvm::Error error = model.checkLayout(*layout);
  ASSERT_TRUE(static_cast<bool>(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "layout dp=16,tp=1,pp=16,vpp=1,ep=8,cp=1,split=even: 61 layers "
            "do not split evenly into the 16 other stages (Megatron's split)");
}

TEST(CostModelStages, LayoutsWithTheSameForwardTimesShareASplit) {
  // DeepSeek-V3 on 16 stages: the recomputation changes the backward and
  // the memory, not a layer's forward time, so every recomputation and
  // ZeRO stage of one shape balances its layers once, into the same split.
  ModelSpec m = preset("deepseek-v3");
  CostModel model(m, cluster("h800-ib"), training(256, 4096, 4096 * 256));
  Layout layout = llvm::cantFail(parseLayout("dp=16,pp=16,ep=8"));
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
  const std::vector<StageEstimate> none = model.stages(layout);
  EXPECT_EQ(model.numKeptSplits(), 1u);
  for (llvm::StringRef recompute :
       {"selective", "full", "block:1", "block:2", "block:3"}) {
    layout.recompute = llvm::cantFail(parseRecompute(recompute));
    for (int zero : {1, 2, 3}) {
      layout.zero = zero;
      const std::vector<StageEstimate> stages = model.stages(layout);
      ASSERT_EQ(stages.size(), none.size());
      for (size_t s = 0; s < stages.size(); ++s)
        EXPECT_EQ(stages[s].numLayers, none[s].numLayers)
            << recompute.str() << " zero " << zero << " stage " << s;
    }
  }
  EXPECT_EQ(model.numKeptSplits(), 1u);
  // Another shape (32 stages) balances anew.
  Layout wider = llvm::cantFail(parseLayout("dp=8,pp=32,ep=8"));
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(wider)));
  model.stages(wider);
  EXPECT_EQ(model.numKeptSplits(), 2u);
}

TEST(CostModelMemory, OffloadV2HoldsOnlyTheKeptLayers) {
  // Transformer Engine 2.12's DefaultOffloadSynchronizer
  // (transformer_engine/pytorch/cpu_offload.py @5671fd36,
  // _init_offload_synchronization_dicts): with L layers and N offloaded,
  // layer i < N is freed as layer L - N + i starts its forward and
  // reloaded after layer L - N + i has run its backward, so at most L - N
  // layers' tensors are on the device. Version 1 (TE 2.7,
  // AsyncDoubleBufferGroupOffloadHandler, layer_window_map) frees the last
  // offloaded layer after the last forward and reloads it before the last
  // layer's backward: one layer more, but never beside the head's logits,
  // which come after the one and are freed before the other.
  ModelSpec m = parse(kDense);
  m.layers = 4;
  ClusterSpec c = cluster("h100-ib");
  TrainingSpec t = training(1, 2048, 2048);
  t.precision = Precision::FP8;
  Layout layout;
  Layout offloaded = layout;
  offloaded.offloadLayers = 2;
  auto activations = [&](const TrainingSpec &spec, Layout l) {
    CostModel model(m, c, spec);
    EXPECT_FALSE(static_cast<bool>(model.checkLayout(l)));
    return model.stages(l)[0].activationBytes;
  };
  // One FP8 layer per token (h 1024, f 4096, 8 heads of 128, MHA): norm
  // inputs 2h twice; the FP8 copies of the QKV, output projection, fc1 and
  // fc2 inputs h, h, h, f; Q, K, V 6h; the log-sum-exp 4 per head; the
  // attention output 2h; fc1's output 2 * 2f.
  const double h = 1024, f = 4096, heads = 8, tokens = 2048;
  const double perLayer =
      tokens * (2 * 2 * h + 3 * h + f + 6 * h + 4 * heads + 2 * h + 4 * f);
  const double kept = activations(t, layout);
  // The FP32 logits of the unfused loss, 4 bytes by 2,048 tokens by a
  // vocabulary of 1,000, are smaller than the staged layer: it stands in
  // their place.
  const double logits = 4 * tokens * 1000;
  ASSERT_LT(logits, perLayer);
  EXPECT_DOUBLE_EQ(kept - activations(t, offloaded), perLayer + logits);
  // A vocabulary of 100,000 makes the logits (819 MB) the larger: the
  // staged layer then adds nothing to the peak, as under version 2.
  ModelSpec wide = m;
  wide.vocab = 100000;
  CostModel wideModel(wide, c, t);
  Layout wideKept = layout, wideOffloaded = offloaded;
  ASSERT_FALSE(static_cast<bool>(wideModel.checkLayout(wideKept)));
  ASSERT_FALSE(static_cast<bool>(wideModel.checkLayout(wideOffloaded)));
  EXPECT_DOUBLE_EQ(wideModel.stages(wideKept)[0].activationBytes -
                       wideModel.stages(wideOffloaded)[0].activationBytes,
                   2 * perLayer);
  t.offloadSynchronizerV2 = true;
  EXPECT_DOUBLE_EQ(kept - activations(t, offloaded), 2 * perLayer);
  // Offloading no layer keeps them all, either way.
  EXPECT_DOUBLE_EQ(activations(t, layout), kept);
}

TEST(CostModelMemory, OffloadMovesLayersToTheHost) {
  // Four layers on one stage; offload=2 sends layers 0 and 1 to the host
  // and stages one layer's worth on the device, which is never there with
  // the head's FP32 logits (4 bytes by 2,048 tokens by 1,000 words).
  ModelSpec m = parse(kDense);
  m.layers = 4;
  ClusterSpec c = cluster("h100-ib");
  CostModel model(m, c, training(1, 2048, 2048));
  Layout layout;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
  const StageEstimate kept = model.stages(layout)[0];
  layout.offloadLayers = 2;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
  const StageEstimate off = model.stages(layout)[0];
  const double h = 1024, f = 4096, heads = 8, tokens = 2048;
  const double perLayer =
      2 * tokens * (6 * h + 2 * h + 3 * f) + 4 * tokens * heads;
  EXPECT_DOUBLE_EQ(kept.activationBytes - off.activationBytes,
                   perLayer + 4 * tokens * 1000);
  // PCIe Gen5 (64 GB/s) moves a layer's 70 MB in 1.1 ms, longer than its
  // forward or backward on an H100: the rest is exposed, each way.
  const double copy = perLayer / 64e9;
  ModelSpec three = m;
  three.layers = 3;
  CostModel shorter(three, c, training(1, 2048, 2048));
  Layout plain;
  ASSERT_FALSE(static_cast<bool>(shorter.checkLayout(plain)));
  const double forward = kept.forward - shorter.stages(plain)[0].forward;
  EXPECT_NEAR(off.forward - kept.forward, 2 * std::max(0.0, copy - forward),
              1e-12);
  EXPECT_GT(off.forward, kept.forward);
  // A faster host link hides it.
  c.efficiency.hostBandwidth = 1e15;
  CostModel fast(m, c, training(1, 2048, 2048));
  ASSERT_FALSE(static_cast<bool>(fast.checkLayout(layout)));
  EXPECT_DOUBLE_EQ(fast.stages(layout)[0].forward, kept.forward);
  // Offloading every layer is refused; so is a device without a host link.
  layout.offloadLayers = 4;
  llvm::Error error = model.checkLayout(layout);
  ASSERT_TRUE(static_cast<bool>(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "layout dp=1,tp=1,pp=1,vpp=1,ep=1,cp=1,offload=4: offload=4 needs "
            "fewer than the model's 4 layers (the last layer's activations "
            "are needed at once)");
  layout.offloadLayers = 1;
  // A cluster file that gives no host link (a v5p has one).
  ClusterSpec ironwood = cluster("tpu7x");
  ironwood.name = "ironwood";
  ironwood.efficiency.hostBandwidth = 0;
  CostModel tpu(m, ironwood, training(1, 2048, 2048));
  error = tpu.checkLayout(layout);
  ASSERT_TRUE(static_cast<bool>(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "layout dp=1,tp=1,pp=1,vpp=1,ep=1,cp=1,offload=1: offload needs "
            "the device's host link, which cluster 'ironwood' does not give "
            "(device.host_bandwidth)");
  CostModel v5p(m, cluster("tpu-v5p"), training(1, 2048, 2048));
  EXPECT_FALSE(static_cast<bool>(v5p.checkLayout(layout)));
}

TEST(Recompute, NamesRoundTrip) {
  for (llvm::StringRef name :
       {"none", "full", "selective", "op", "layernorm", "mla_up_proj,mlp",
        "block:3", "save:", "save:qkv_proj,context",
        "save:key_proj,value_proj,mlpwi_0",
        "save:decoder_layer_input=offload,out_proj,mlpwo=offload",
        "core_attn,layernorm,mla_up_proj,mlp,moe_act,shared_experts,moe"}) {
    llvm::Expected<Recompute> r = parseRecompute(name);
    ASSERT_TRUE(static_cast<bool>(r)) << name.str();
    EXPECT_EQ(recomputeName(*r), name);
  }
  // Order and repeats do not matter; core_attn alone is "selective".
  EXPECT_EQ(recomputeName(llvm::cantFail(parseRecompute("mlp, layernorm,mlp"))),
            "layernorm,mlp");
  EXPECT_EQ(llvm::cantFail(parseRecompute("core_attn")), Recompute::Selective);
  // dots implies the norms and the attention core, and prints without them.
  Recompute dots = llvm::cantFail(parseRecompute("dots"));
  EXPECT_TRUE(dots.recomputes(Recompute::LayerNorm));
  EXPECT_TRUE(dots.recomputes(Recompute::CoreAttention));
  EXPECT_FALSE(dots.recomputes(Recompute::Mlp));
  EXPECT_EQ(recomputeName(dots), "dots");
  EXPECT_EQ(recomputeName(llvm::cantFail(parseRecompute("layernorm,dots,mlp"))),
            "mlp,dots");
  llvm::Expected<Recompute> bad = parseRecompute("mlp,attention");
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "'attention' is not none, selective, op, full, block:N, save:NAMES "
            "or a recompute module (core_attn, layernorm, mla_up_proj, mlp, "
            "moe_act, shared_experts, moe, dots, joined by commas)");
  EXPECT_FALSE(static_cast<bool>(parseRecompute("mlp,")));
  EXPECT_FALSE(static_cast<bool>(parseRecompute("block:")));
  EXPECT_FALSE(static_cast<bool>(parseRecompute("block:-1")));
  EXPECT_FALSE(static_cast<bool>(parseRecompute("block:16777217")));
}

TEST(CostModelMemory, BlockRecomputesTheFirstLayersOfEachStage) {
  // Four layers on two stages; block:1 recomputes layer 0 and layer 2
  // whole, keeps layers 1 and 3 entire.
  ModelSpec m = parse(kDense);
  m.layers = 4;
  CostModel model(m, cluster("h100-ib"), training(2, 2048, 2048 * 8));
  Layout layout;
  layout.pp = 2;
  layout.recompute = Recompute::None;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
  const std::vector<StageEstimate> none = model.stages(layout);
  layout.recompute = Recompute::Full;
  const std::vector<StageEstimate> full = model.stages(layout);
  layout.recompute = llvm::cantFail(parseRecompute("block:1"));
  const std::vector<StageEstimate> block = model.stages(layout);
  ASSERT_EQ(block.size(), 2u);
  // Each stage: one layer as under none, one as under full (the head on
  // the last stage is the same under all three).
  for (size_t s = 0; s < 2; ++s) {
    ASSERT_EQ(block[s].numLayers, 2);
    EXPECT_DOUBLE_EQ(block[s].activationBytes,
                     (none[s].activationBytes + full[s].activationBytes) / 2);
    EXPECT_DOUBLE_EQ(block[s].backwardInput,
                     (none[s].backwardInput + full[s].backwardInput) / 2);
  }
  // A block as large as the stage is a full recomputation.
  layout.recompute = llvm::cantFail(parseRecompute("block:2"));
  EXPECT_DOUBLE_EQ(model.stages(layout)[0].activationBytes,
                   full[0].activationBytes);
  // Hardware FLOPs: half the layers recomputed.
  layout.recompute = llvm::cantFail(parseRecompute("block:1"));
  Layout all = layout;
  all.recompute = Recompute::Full;
  EXPECT_DOUBLE_EQ(model.hardwareFlopsPerToken(layout) -
                       model.modelFlopsPerToken(),
                   (model.hardwareFlopsPerToken(all) -
                    model.modelFlopsPerToken()) /
                       2);
}

/// The backward's working set: a recomputed layer's tensors made again on
/// top of what the microbatch keeps (a stage of stage 0's two layers: the
/// difference of one layer between none and full), not when a block
/// leaves the stage's last layer out (its kept tensors are freed first);
/// ZeRO-3 adds one layer's unsharded FP32 gradient.
TEST(CostModelMemory, WorkingSetOfRecomputationAndFsdp) {
  ModelSpec m = parse(kDense);
  m.layers = 4;
  CostModel model(m, cluster("h100-ib"), training(2, 2048, 2048 * 8));
  Layout layout;
  layout.pp = 2;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
  const StageEstimate none = model.stages(layout)[0];
  EXPECT_EQ(none.workingSetBytes, 0);
  layout.recompute = Recompute::Full;
  const StageEstimate full = model.stages(layout)[0];
  const double layer = (none.activationBytes - full.activationBytes) / 2;
  EXPECT_DOUBLE_EQ(full.workingSetBytes, layer);
  EXPECT_DOUBLE_EQ(full.staticBytes(), full.weightBytes + full.gradientBytes +
                                           full.optimizerBytes + layer);
  layout.recompute = llvm::cantFail(parseRecompute("block:1"));
  EXPECT_EQ(model.stages(layout)[0].workingSetBytes, 0);
  layout.recompute = llvm::cantFail(parseRecompute("block:2"));
  EXPECT_DOUBLE_EQ(model.stages(layout)[0].workingSetBytes, layer);
  // FSDP, no recomputation, the first of two stages over dp = 2 (the
  // last one's is LogitsAreFreedBeforeTheLastLayersBackward's).
  CostModel sharded(m, cluster("h100-ib"), training(4, 2048, 2048 * 8));
  Layout fsdp = layout;
  fsdp.recompute = Recompute::None;
  fsdp.dp = 2;
  fsdp.zero = 3;
  ASSERT_FALSE(static_cast<bool>(sharded.checkLayout(fsdp)));
  const double layerParams = 4.0 * 1024 * 1024 + 3.0 * 1024 * 4096 + 2 * 1024;
  EXPECT_DOUBLE_EQ(sharded.stages(fsdp)[0].workingSetBytes, 4 * layerParams);
}

/// The loss and the output layer run their backward, and free the logits,
/// before the stage's last layer starts its own (Megatron-Core's
/// cross-entropy returns its saved softmax as the gradient, and the output
/// layer's backward consumes it; MaxText's loss VJP keeps its residuals
/// until the output layer's transpose, which the layers' scan needs): the
/// last stage's peak holds the logits or that layer's working set, the
/// larger. Under FSDP the head's moment also holds the output layer's
/// unsharded gradient. By hand on kDense (2 layers, h 1,024, f 4,096, 8
/// heads, 2,048 tokens, unfused loss: FP32 logits).
TEST(CostModelMemory, LogitsAreFreedBeforeTheLastLayersBackward) {
  const double h = 1024, f = 4096, heads = 8, tokens = 2048;
  // A layer's tensors (ActivationsByHand) less its input, which full
  // recomputation keeps: 79,757,312 bytes made again.
  const double perLayer =
      2 * tokens * (6 * h + 2 * h + 3 * f) + 4 * tokens * heads;
  const double recomputed = perLayer - 2 * tokens * h;
  ASSERT_DOUBLE_EQ(recomputed, 79757312);
  auto lastStage = [&](double vocab, Layout layout) {
    ModelSpec m = parse(kDense);
    m.vocab = static_cast<int64_t>(vocab);
    CostModel model(m, cluster("h100-ib"),
                    training(layout.dp * layout.pp, 2048, 2048 * 8));
    EXPECT_FALSE(static_cast<bool>(model.checkLayout(layout)));
    return model.stages(layout).back();
  };
  Layout full;
  full.recompute = Recompute::Full;
  // Vocabulary 1,000: 8,192,000 bytes of logits, under a layer: the peak
  // takes the layer's moment, which the logits are not part of.
  const double small = 4 * tokens * 1000;
  StageEstimate s = lastStage(1000, full);
  EXPECT_DOUBLE_EQ(s.headBytes, small);
  EXPECT_DOUBLE_EQ(s.workingSetBytes, recomputed - small);
  EXPECT_DOUBLE_EQ(s.activationBytes + s.workingSetBytes,
                   2 * 2 * tokens * h + recomputed);
  // Vocabulary 100,000: 819,200,000 bytes of logits, more than the layer:
  // the head's moment is the peak and the layer adds nothing to it.
  s = lastStage(100000, full);
  EXPECT_DOUBLE_EQ(s.headBytes, 4 * tokens * 100000);
  EXPECT_DOUBLE_EQ(s.workingSetBytes, 0);
  // The last of two stages alike (the first keeps its layer's working set
  // whole: WorkingSetOfRecomputationAndFsdp).
  Layout twoStages = full;
  twoStages.pp = 2;
  s = lastStage(1000, twoStages);
  EXPECT_DOUBLE_EQ(s.workingSetBytes, recomputed - small);
  // FSDP over dp = 2, no recomputation: the layer's moment holds its
  // unsharded FP32 gradient (4 x 16,779,264 parameters), the head's the
  // logits and the output layer's (4 x (1,000 x 1,024 + 1,024 for the
  // final norm)); the layer's is the larger.
  Layout fsdp;
  fsdp.dp = 2;
  fsdp.zero = 3;
  const double layerParams = 4 * h * h + 3 * h * f + 2 * h;
  s = lastStage(1000, fsdp);
  EXPECT_DOUBLE_EQ(s.headParameters, 1000 * h + h);
  EXPECT_DOUBLE_EQ(s.workingSetBytes, 4 * layerParams - small);
  // With 100,000 words the head's gradient (409.6 MB) is the larger: the
  // working set is that gradient beside the logits.
  s = lastStage(100000, fsdp);
  EXPECT_DOUBLE_EQ(s.workingSetBytes, 4 * (100000 * h + h));
}

// An MoE layer by hand: 8 experts of FFN 512, top-2, one shared expert.
constexpr llvm::StringLiteral kMoe = R"({
  "name": "moe", "layers": 1, "hidden": 1024, "ffn_hidden": 4096,
  "heads": 8, "vocab": 1000,
  "moe": {"experts": 8, "top_k": 2, "shared_experts": 1,
          "expert_ffn_hidden": 512} })";

TEST(CostModelFlops, MoeLayerByHand) {
  ClusterSpec c = ideal(cluster("h100-ib"));
  c.domainBandwidth = 100e9;
  CostModel model(parse(kMoe), c, training(4, 2048, 2048 * 4));
  Layout layout;
  layout.dp = 4;
  layout.ep = 4;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
  StageEstimate s = model.stages(layout)[0];
  const double tokens = 2048;
  // Attention 4 h^2, router h x E, shared and top-2 routed experts 3 h f'.
  const double matmul =
      2 * tokens *
      (4.0 * 1024 * 1024 + 1024.0 * 8 + 3 * (3.0 * 1024 * 512)) +
      2 * tokens * 1024.0 * 1000;
  EXPECT_DOUBLE_EQ(s.forwardTerms.matmul * c.peakBf16, matmul);
  // Dispatch and combine: a row of 1024 x 2 bytes for each of 2048 tokens
  // and each of the 4 ranks holding one of its 2 experts (2 of the 8 on
  // each rank: 4 x (1 - C(6,2)/C(8,2)) = 4 x 13/28 ranks on average), 3/4
  // of them to the 3 other members, all inside the 8-device domain.
  const double bytes = 2048.0 * (4 * 13.0 / 28) * 1024 * 2;
  EXPECT_DOUBLE_EQ(s.forwardTerms.expertParallel, 2 * (bytes * 3 / 4) / 100e9);
  // Experts on this device: 8 / 4 of them.
  EXPECT_DOUBLE_EQ(s.expertParameters, 8.0 / 4 * 3 * 1024 * 512);
}

/// Under FP8 the expert dispatch moves BF16 rows unless the stack
/// quantizes before it (docs/cost-model.md, "Expert dispatch dtype"):
/// Megatron-Core's dispatchers send the layer's BF16 activations and the
/// experts cast what they receive; DeepSeek-V3 quantizes first. By hand on
/// the layer above: 2048 tokens x (4 x 13/28 ranks) rows of 1024, 3/4 of
/// them to the 3 other members, at 100 GB/s.
TEST(CostModelCollectives, ExpertDispatchDtypeByStack) {
  ClusterSpec c = ideal(cluster("h100-ib"));
  c.domainBandwidth = 100e9;
  TrainingSpec t = training(4, 2048, 2048 * 4);
  t.precision = Precision::FP8;
  Layout layout;
  layout.dp = 4;
  layout.ep = 4;
  const double rows = 2048.0 * (4 * 13.0 / 28) * 1024 * 3 / 4;
  const double bf16 = rows * 2 / 100e9;
  const double fp8 = rows * 1 / 100e9;
  ASSERT_FALSE(t.fp8ExpertDispatch);
  EXPECT_EQ(t.expertDispatchBytes(), 2);
  StageEstimate bf16Dispatch = CostModel(parse(kMoe), c, t).stages(layout)[0];
  // Dispatch and combine, forward and backward, all BF16.
  EXPECT_DOUBLE_EQ(bf16Dispatch.forwardTerms.expertParallel, 2 * bf16);
  EXPECT_DOUBLE_EQ(bf16Dispatch.backwardTerms.expertParallel, 2 * bf16);
  // Quantized first: the forward's dispatch in FP8; the combine and the
  // backward's exchanges of gradients stay BF16.
  t.fp8ExpertDispatch = true;
  EXPECT_EQ(t.expertDispatchBytes(), 1);
  StageEstimate fp8Dispatch = CostModel(parse(kMoe), c, t).stages(layout)[0];
  EXPECT_DOUBLE_EQ(fp8Dispatch.forwardTerms.expertParallel, fp8 + bf16);
  EXPECT_DOUBLE_EQ(fp8Dispatch.backwardTerms.expertParallel, 2 * bf16);
  // Under BF16 training the fact changes nothing.
  t.precision = Precision::BF16;
  EXPECT_EQ(t.expertDispatchBytes(), 2);
  // The stacks: Megatron-Core sends BF16, DeepSeek-V3 FP8.
  TrainingSpec core, deepseek;
  for (const SoftwareStack &stack : builtinStacks()) {
    if (stack.name == "megatron-core")
      stack.apply(core);
    if (stack.name == "deepseek-v3")
      stack.apply(deepseek);
  }
  EXPECT_FALSE(core.fp8ExpertDispatch);
  EXPECT_TRUE(deepseek.fp8ExpertDispatch);
}

/// An MoE block launched eagerly after its host read waits on the host
/// (docs/cost-model.md, "Host time of an eager MoE block"): by hand on the
/// layer above, whose block runs the router and the experts' GEMMs (every
/// memory-bound kernel is free on the ideal cluster) and the all-to-all.
TEST(CostModelFlops, EagerMoeBlockWaitsOnTheHost) {
  ClusterSpec c = ideal(cluster("h100-ib"));
  c.domainBandwidth = 100e9;
  TrainingSpec t = training(4, 2048, 2048 * 4);
  t.moeDispatcher = MoeDispatcher::AllToAll;
  t.moeHost.router = 1e-3;
  t.moeHost.dispatch = 2e-3;
  t.moeHost.combine = 0.5e-3;
  t.moeHost.perLocalExpert = 0.1e-3;
  Layout layout;
  layout.dp = 4;
  layout.ep = 4;
  auto stageWith = [&](const TrainingSpec &spec, const ModelSpec &m) {
    return CostModel(m, c, spec).stages(layout)[0];
  };
  const ModelSpec moe = parse(kMoe);
  const StageEstimate s = stageWith(t, moe);
  // The block on the device: router h x E, the shared expert and the
  // top-2 routed experts' 3 h f' each, and the exchange.
  const double tokens = 2048;
  const double block =
      2 * tokens * (1024.0 * 8 + 3 * (3.0 * 1024 * 512)) / c.peakBf16 +
      s.forwardTerms.expertParallel;
  // The host: router, 8 / 4 local experts, dispatch and combine.
  const double host = 1e-3 + 2 * 0.1e-3 + 2e-3 + 0.5e-3;
  EXPECT_NEAR(s.forwardTerms.host, host - block, 1e-15);
  EXPECT_EQ(s.backwardTerms.host, 0);
  EXPECT_EQ(moeHostForward(t, 2), host);
  // The router captured in a graph; the flex dispatcher's exchange is not
  // measured: left out.
  TrainingSpec router = t;
  router.cudaGraphs = CudaGraphs::MoeRouter;
  EXPECT_NEAR(stageWith(router, moe).forwardTerms.host, host - 1e-3 - block,
              1e-15);
  TrainingSpec flex = t;
  flex.moeDispatcher = MoeDispatcher::Flex;
  EXPECT_EQ(moeHostForward(flex, 2), 1e-3 + 2 * 0.1e-3);
  // Whole layers or the whole step in a graph: no wait.
  for (CudaGraphs graphs : {CudaGraphs::Layer, CudaGraphs::Step}) {
    TrainingSpec captured = t;
    captured.cudaGraphs = graphs;
    EXPECT_EQ(stageWith(captured, moe).forwardTerms.host, 0);
  }
  // A host faster than the block: the device bounds it.
  TrainingSpec quick = t;
  quick.moeHost = MoeHostTime();
  quick.moeHost.router = block / 2;
  EXPECT_EQ(stageWith(quick, moe).forwardTerms.host, 0);
  // The forward grows by the wait; recomputing the block waits again.
  TrainingSpec none = t;
  none.moeHost = MoeHostTime();
  EXPECT_NEAR(s.forward - stageWith(none, moe).forward, host - block, 1e-15);
  Layout again = layout;
  again.recompute = Recompute::modules(Recompute::Moe);
  EXPECT_NEAR(CostModel(moe, c, t).stages(again)[0].backwardTerms.host,
              host - block, 1e-15);
  // A dense layer has no MoE block.
  ModelSpec dense = moe;
  dense.moe.reset();
  Layout flat;
  flat.dp = 4;
  EXPECT_EQ(CostModel(dense, c, t).stages(flat)[0].forwardTerms.host, 0);
}

TEST(CostModelCollectives, ExpertAllToAllAcrossDomainsByHand) {
  // ep = 16 over domains of 8, 16 experts: a token's 2 distinct experts
  // miss a domain's 8 with probability C(8,2)/C(16,2) = 28/120, so they
  // reach 2 x 92/120 of the 2 domains, half of them remote: 92/120 rows
  // cross; one expert per rank, so its 2 destination ranks are its 2
  // copies, 7/16 of them inside for other members.
  ClusterSpec c = ideal(cluster("h100-ib"));
  CostModel model(parse(kMoe), c, training(16, 2048, 2048 * 16));
  Layout layout;
  layout.dp = 16;
  layout.ep = 8;
  const double row = 1024 * 2; // one BF16 token
  EXPECT_DOUBLE_EQ(model.expertAllToAllTime(1000, 2, layout, true),
                   1000 * 2 * row * 7.0 / 8 / 450e9);
  ModelSpec wide = parse(kMoe);
  wide.moe->experts = 16;
  CostModel sixteen(wide, c, training(16, 2048, 2048 * 16));
  layout.ep = 16;
  const double inside = 1000 * 2 * row * 7.0 / 16 / 450e9;
  const double outside = 1000 * row * 92.0 / 120 / 50e9;
  EXPECT_DOUBLE_EQ(sixteen.expertAllToAllTime(1000, 2, layout, true),
                   std::max(inside, outside));
  // Node-limited routing caps the domains reached.
  wide.moe->nodeLimit = 1;
  CostModel limited(wide, c, training(16, 2048, 2048 * 16));
  EXPECT_DOUBLE_EQ(limited.expertAllToAllTime(1000, 2, layout, true),
                   std::max(inside, 1000 * row * 0.5 / 50e9));
}

/// Pipeline transfers by hand, boundary by boundary: Megatron-Core puts pp
/// outermost (stage p holds ranks from p x tp x cp x dp), so Llama 3.1
/// 405B at dp 2, tp 4, cp 2, pp 8 on 128 GB200 holds 16 ranks a stage and
/// the 128 ranks go on two racks of 64: stages 0-3 on one, 4-7 on the
/// other. Only boundaries 3 -> 4 and 7 -> 0 cross the NIC; the others stay
/// on NVLink. One rack's worth of stages crosses nothing; domains of one
/// stage each (HGX nodes of 8 at a stride of 16) cross at every boundary.
TEST(CostModelCollectives, PipelineBoundariesCrossOnlyBetweenDomains) {
  ClusterSpec rack = ideal(cluster("gb200-nvl72"));
  CostModel model(preset("llama3-405b"), rack, training(128, 8192, 8192 * 64));
  Layout layout;
  layout.dp = 2;
  layout.tp = 4;
  layout.cp = 2;
  layout.pp = 8;
  const double bytes = 32e6;
  const double nvlink = bytes / 900e9;
  const double nic = bytes / 50e9;
  const std::vector<double> times = model.p2pBoundaryTimes(layout, bytes);
  ASSERT_EQ(times.size(), 8u);
  for (size_t p = 0; p < times.size(); ++p)
    EXPECT_DOUBLE_EQ(times[p], p == 3 || p == 7 ? nic : nvlink) << p;
  // The single figure keeps the inside link (more than one stage a domain).
  EXPECT_DOUBLE_EQ(model.p2pTime(layout, bytes), nvlink);

  // Four stages of 16 fit one rack of 72: no boundary crosses.
  CostModel four(preset("llama3-405b"), rack, training(64, 8192, 8192 * 64));
  layout.pp = 4;
  for (double t : four.p2pBoundaryTimes(layout, bytes))
    EXPECT_DOUBLE_EQ(t, nvlink);

  // HGX B200 nodes of 8 hold no whole stage of 16: every boundary crosses.
  CostModel hgx(preset("llama3-405b"), ideal(cluster("b200-ib")),
                training(128, 8192, 8192 * 64));
  layout.pp = 8;
  for (double t : hgx.p2pBoundaryTimes(layout, bytes))
    EXPECT_DOUBLE_EQ(t, nic);
  EXPECT_DOUBLE_EQ(hgx.p2pTime(layout, bytes), nic);

  layout.pp = 1;
  EXPECT_TRUE(model.p2pBoundaryTimes(layout, bytes).empty());
}

/// Megatron-Core's all-to-all dispatcher by hand: every one of a token's
/// top_k copies goes to its expert's rank (token_dispatcher.py permutes the
/// copies, then all_to_all_single), so at ep = 16 over domains of 8 a rank
/// sends 7/16 of its 2 copies over NVLink and 8/16 over the NIC, where the
/// flex dispatcher sends a token once per remote domain (0.75 on average).
TEST(CostModelCollectives, AllToAllDispatcherSendsEveryCopy) {
  ClusterSpec c = ideal(cluster("h100-ib"));
  ModelSpec wide = parse(kMoe);
  wide.moe->experts = 16;
  TrainingSpec t = training(16, 2048, 2048 * 16);
  t.moeDispatcher = MoeDispatcher::AllToAll;
  CostModel model(wide, c, t);
  Layout layout;
  layout.dp = 16;
  layout.ep = 16;
  const double row = 1024 * 2;
  const double inside = 1000 * 2 * row * 7.0 / 16 / 450e9;
  const double outside = 1000 * 2 * row * 8.0 / 16 / 50e9;
  EXPECT_DOUBLE_EQ(model.expertAllToAllTime(1000, 2, layout, true),
                   std::max(inside, outside));
  t.moeDispatcher = MoeDispatcher::Flex;
  CostModel flex(wide, c, t);
  EXPECT_LT(flex.expertAllToAllTime(1000, 2, layout, true),
            model.expertAllToAllTime(1000, 2, layout, true));
  // Inside one domain only NVLink carries the copies: 7/8 of them.
  layout.dp = 8;
  layout.ep = 8;
  TrainingSpec t8 = training(8, 2048, 2048 * 8);
  t8.moeDispatcher = MoeDispatcher::AllToAll;
  CostModel eightAll(wide, c, t8);
  EXPECT_DOUBLE_EQ(eightAll.expertAllToAllTime(1000, 2, layout, true),
                   1000 * 2 * row * 7.0 / 8 / 450e9);
}

/// The flex dispatcher (DeepEP) sends a token once to each rank holding
/// one of its experts (get_dispatch_layout's is_token_in_rank), not once
/// per expert: with 16 experts on 8 ranks of one H100 node, a token's 2
/// distinct experts sit on 8 x (1 - C(14,2)/C(16,2)) = 8 x 29/120 ranks on
/// average, 7/8 of them another rank, where the all-to-all dispatcher sends
/// both copies.
TEST(CostModelCollectives, FlexDispatcherSendsOneRowPerRank) {
  ClusterSpec c = ideal(cluster("h100-ib"));
  ModelSpec wide = parse(kMoe);
  wide.moe->experts = 16;
  TrainingSpec t = training(8, 2048, 2048 * 8);
  CostModel flex(wide, c, t);
  Layout layout;
  layout.dp = layout.ep = 8;
  const double row = 1024 * 2;
  EXPECT_NEAR(flex.expertDestinationRanks(8), 8 * 29.0 / 120, 1e-12);
  EXPECT_DOUBLE_EQ(flex.expertAllToAllTime(1000, 2, layout, true),
                   1000 * (8 * 29.0 / 120) * row * 7.0 / 8 / 450e9);
  t.moeDispatcher = MoeDispatcher::AllToAll;
  CostModel all(wide, c, t);
  EXPECT_DOUBLE_EQ(all.expertAllToAllTime(1000, 2, layout, true),
                   1000 * 2 * row * 7.0 / 8 / 450e9);
}

/// HybridEP on Blackwell, inside one NVLink domain: one row per token and
/// destination rank at the measured fraction of the 900 GB/s link
/// (DeepEP hybrid-ep README, GB200, 32 SMs, Torch API).
TEST(CostModelCollectives, MeasuredExpertExchangeInsideOneDomainByHand) {
  ClusterSpec c = cluster("b200-ib");
  c.latency = 0;
  CostModel model(preset("deepseek-v3"), c, training(8, 4096, 4096 * 8));
  Layout layout;
  layout.dp = 8;
  layout.ep = 8;
  // A token's 8 experts of 256 miss one rank's 32 with probability
  // prod_{i<8} (224 - i) / (256 - i): 5.2947 of the 8 ranks receive it.
  const double ranks = 5.294652000382481;
  EXPECT_NEAR(model.expertDestinationRanks(8), ranks, 1e-12);
  const double row = 4096 * ranks * 7168;
  // FP8 dispatch: 455.35 GB/s counted at 1 + 4/128 bytes per element.
  EXPECT_NEAR(model.expertAllToAllTime(4096, 1, layout, true),
              row * (1 + 4.0 / 128) / 455.35e9, 1e-12);
  EXPECT_NEAR(model.expertAllToAllTime(4096, 2, layout, true),
              row * 2 / 545.71e9, 1e-12);
  EXPECT_NEAR(model.expertAllToAllTime(4096, 2, layout, false),
              row * 2 / 568.94e9, 1e-12);

  // 64 ranks in one NVL72 rack: 7.6758 ranks per token, held at the
  // largest group measured (36 ranks: combine 447.89 GB/s).
  ClusterSpec rack = cluster("gb200-nvl72");
  rack.latency = 0;
  CostModel wide(preset("deepseek-v3"), rack, training(64, 4096, 4096 * 64));
  layout.dp = layout.ep = 64;
  EXPECT_NEAR(wide.expertDestinationRanks(64), 7.675750191770092, 1e-12);
  EXPECT_NEAR(wide.expertAllToAllTime(4096, 2, layout, false),
              4096 * 7.675750191770092 * 7168 * 2 / 447.89e9, 1e-12);

  // Between measured sizes the fraction is linear in the ranks: 20 ranks
  // are halfway from 16 (521.55) to 24 (483.76); 40 experts top-2 miss a
  // rank's 2 with probability (38/40)(37/39).
  ModelSpec small = parse(kMoe);
  small.moe->experts = 40;
  CostModel twenty(small, rack, training(20, 2048, 2048 * 20));
  layout.dp = layout.ep = 20;
  const double reached = 20 * (1 - 38.0 / 40 * 37 / 39);
  EXPECT_NEAR(twenty.expertAllToAllTime(1000, 2, layout, false),
              1000 * reached * 1024 * 2 / ((521.55e9 + 483.76e9) / 2), 1e-12);
}

/// A group that leaves its NVLink domain, and a cluster file's own
/// all_to_all figure, keep the row-count model at `all_to_all`.
TEST(CostModelCollectives, UnmeasuredExpertExchangeKeepsRowCount) {
  ClusterSpec c = cluster("b200-ib");
  c.latency = 0;
  c.efficiency.allToAll = 1;
  ModelSpec wide = parse(kMoe);
  wide.moe->experts = 16;
  CostModel sixteen(wide, c, training(16, 2048, 2048 * 16));
  Layout layout;
  layout.dp = 16;
  layout.ep = 16;
  const double row = 1024 * 2;
  const double inside = 1000 * 2 * row * 7.0 / 16 / 900e9;
  const double outside = 1000 * row * 92.0 / 120 / 50e9;
  EXPECT_DOUBLE_EQ(sixteen.expertAllToAllTime(1000, 2, layout, true),
                   std::max(inside, outside));

  llvm::Expected<ClusterSpec> own = parseClusterSpec(R"({
      "device": {"name": "B200", "peak_flops": {"bf16": 2.25e15},
                 "hbm_bytes": 1.9e11, "hbm_bandwidth": 8e12},
      "domain_size": 8, "domain_bandwidth": 9e11,
      "scale_out_bandwidth": 5e10, "latency_s": 0,
      "efficiency": {"all_to_all": 0.5}})");
  ASSERT_TRUE(static_cast<bool>(own)) << llvm::toString(own.takeError());
  EXPECT_TRUE(own->efficiency.expertExchange.empty());
  CostModel eight(parse(kMoe), *own, training(8, 2048, 2048 * 8));
  layout.dp = layout.ep = 8;
  EXPECT_DOUBLE_EQ(eight.expertAllToAllTime(1000, 2, layout, false),
                   1000 * 2 * row * 7.0 / 8 / (9e11 * 0.5));
  // The preset keeps the measured table.
  EXPECT_FALSE(cluster("b200-ib").efficiency.expertExchange.empty());
}

/// HSDP (hsdp=8 on 16 data-parallel ranks, two nodes of 8): the ZeRO-3
/// state is sharded over the 8 ranks of a node and replicated across the
/// two nodes; gathers and reduce-scatters stay inside the node, and the
/// gradient shard is all-reduced across the replicas once a step.
TEST(CostModelMemory, HybridShardingShardsInsideTheGroup) {
  ClusterSpec c = ideal(cluster("h100-ib"));
  ModelSpec m = parse(kDense);
  const double params = 2 * (4.0 * 1024 * 1024 + 3.0 * 1024 * 4096 + 2 * 1024) +
                        2 * 1024.0 * 1000 + 1024;
  CostModel model(m, c, training(16, 2048, 2048 * 32));
  Layout layout;
  layout.dp = 16;
  layout.zero = 3;
  layout.shardGroup = 8;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
  EXPECT_EQ(layout.microbatches, 2);
  EXPECT_EQ(layout.shardReplicas(), 2);
  StageEstimate s = model.stages(layout)[0];
  EXPECT_DOUBLE_EQ(s.gradientBytes, 4 * params / 8);
  EXPECT_DOUBLE_EQ(s.optimizerBytes, 12 * params / 8);
  // Per microbatch: two gathers (BF16) and a reduce-scatter (FP32) over the
  // node's 8 ranks at 450 GB/s; once a step the 1/8 FP32 shard all-reduced
  // (a reduce-scatter and an all-gather) between the two nodes at 50 GB/s.
  const DataParallelCost cost = model.dataParallel(layout, {&s}, 1, 1);
  const double gather = 7.0 / 8 * 2 * params / 450e9;
  const double reduce = 7.0 / 8 * 4 * params / 450e9;
  const double across = 2 * (1.0 / 2) * (4 * params / 8) / 50e9;
  EXPECT_NEAR(cost.total, 2 * (2 * gather + reduce) + across, 1e-15);
  // Without HSDP the same state spreads over all 16 ranks, and every
  // microbatch's traffic crosses the nodes.
  Layout flat = layout;
  flat.shardGroup = 0;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(flat)));
  StageEstimate f = model.stages(flat)[0];
  EXPECT_DOUBLE_EQ(f.optimizerBytes, 12 * params / 16);
  EXPECT_GT(model.dataParallel(flat, {&f}, 1, 1).total, cost.total);
  // A group that does not divide dp x cp, and HSDP without ZeRO, say why.
  Layout bad = layout;
  bad.shardGroup = 6;
  llvm::Error notDividing = model.checkLayout(bad);
  EXPECT_TRUE(static_cast<bool>(notDividing));
  llvm::consumeError(std::move(notDividing));
  bad.shardGroup = 8;
  bad.zero = 0;
  llvm::Error error = model.checkLayout(bad);
  ASSERT_TRUE(static_cast<bool>(error));
  EXPECT_NE(llvm::toString(std::move(error)).find("hsdp"), std::string::npos);
}

TEST(CostModelCollectives, HierarchicalReduceScatterByHand) {
  ClusterSpec c = ideal(cluster("h100-ib"));
  CostModel model(preset("llama3-8b"), c, training(1024, 8192, 8192 * 1024));
  // 1024 consecutive ranks: 8 per node inside, then 128 nodes, each GPU
  // moving its 1/8 over its own 50 GB/s link.
  const double bytes = 1e9;
  EXPECT_DOUBLE_EQ(model.reduceScatterTime(bytes, 1024, 1),
                   7.0 / 8 * bytes / 450e9 + 127.0 / 128 * (bytes / 8) / 50e9);
  // One rank per node: a flat ring over the scale-out links.
  EXPECT_DOUBLE_EQ(model.reduceScatterTime(bytes, 16, 8),
                   15.0 / 16 * bytes / 50e9);
}

/// Megatron-Core's DDP buckets: 400M parameters on 8 ranks in one node
/// (ZeRO-1) make ten buckets of max(40M, 8 x 1M); the FP32 reduce-scatter
/// of each starts when the backward has made its gradients, the BF16
/// gather of each before the forward needs it. Beside a long backward
/// only the last bucket's reduction shows (1/10), beside none all of it.
TEST(DataParallel, BucketsExposeTheirLastCollective) {
  ClusterSpec c = ideal(cluster("h100-ib"));
  ModelSpec m = parse(kDense);
  CostModel model(m, c, training(8, 2048, 2048 * 8));
  Layout layout;
  layout.dp = 8;
  layout.zero = 1;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(layout)));
  StageEstimate s = model.stages(layout)[0];
  s.denseParameters = 400e6;
  s.expertParameters = 0;
  const double reduce = 7.0 / 8 * 4 * 400e6 / 450e9;
  const double gather = 7.0 / 8 * 2 * 400e6 / 450e9;
  const DataParallelCost hidden = model.dataParallel(layout, {&s}, 10, 10);
  EXPECT_NEAR(hidden.total, reduce + gather, 1e-12);
  EXPECT_NEAR(hidden.exposed, (reduce + gather) / 10, 1e-12);
  // A backward and forward of 2 ms: of the reduction's 3.1 ms what 0.9 x 2
  // ms does not cover shows; the gather's 1.6 ms fits under 1.8 ms but for
  // its first bucket.
  const DataParallelCost short_ = model.dataParallel(layout, {&s}, 2e-3, 2e-3);
  EXPECT_NEAR(short_.exposed, reduce - 1.8e-3 + gather / 10, 1e-12);
  // No compute beside it: everything shows.
  EXPECT_NEAR(model.dataParallel(layout, {&s}, 0, 0).exposed, reduce + gather,
              1e-12);
  // FSDP's unit is a layer: of 4 layers, the first one's gather before the
  // forward, and the last one's gather and reduce-scatter after the
  // backward (one microbatch here) show.
  Layout fsdp = layout;
  fsdp.zero = 3;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(fsdp)));
  ASSERT_EQ(fsdp.microbatches, 1);
  s.numLayers = 4;
  EXPECT_NEAR(model.dataParallel(fsdp, {&s}, 10, 10).exposed,
              gather / 4 + (gather + reduce) / 4, 1e-12);
  // DeepSpeed 0.3-0.5 synchronizes the device around every gather: its
  // two gathers and reduce-scatter add to the compute, however long.
  TrainingSpec synced = training(8, 2048, 2048 * 8);
  synced.shardedOverlap = false;
  CostModel deepspeed(m, c, synced);
  ASSERT_FALSE(static_cast<bool>(deepspeed.checkLayout(fsdp)));
  const DataParallelCost serial = deepspeed.dataParallel(fsdp, {&s}, 10, 10);
  EXPECT_NEAR(serial.total, 2 * gather + reduce, 1e-12);
  EXPECT_NEAR(serial.exposed, serial.total, 1e-12);
  // ZeRO-1's bucketed reduction is not DeepSpeed's stage 3: unchanged.
  EXPECT_NEAR(deepspeed.dataParallel(layout, {&s}, 10, 10).exposed,
              hidden.exposed, 1e-12);
}

/// MaxText reduces gradients in BF16 (the `gradient_reduction` fact): each
/// layer casts its FP32 kernel to BF16 before its GEMM, so the kernel's
/// cotangent is the GEMM's BF16 output, which the FSDP gather's transpose
/// reduce-scatters before the cast's transpose widens it. The reduction
/// moves 2 bytes a parameter, as the gather does, and ZeRO-3 holds a
/// layer's unsharded gradient in 2; the sharded gradient the optimizer
/// reads stays FP32.
TEST(DataParallel, Bf16GradientReductionMovesAndHoldsTwoBytes) {
  ClusterSpec c = ideal(cluster("h100-ib"));
  ModelSpec m = parse(kDense);
  m.layers = 4;
  TrainingSpec t = training(16, 2048, 2048 * 16);
  t.fp32Weights = true;
  t.bf16GradientReduction = true;
  CostModel model(m, c, t);
  EXPECT_DOUBLE_EQ(model.precisionRecipe().reducedGradientBytes, 2);
  EXPECT_DOUBLE_EQ(model.precisionRecipe().mainGradientBytes, 4);
  // Without the fact the reduction takes the main gradients' bytes.
  CostModel fp32(m, c, [&] {
    TrainingSpec f = t;
    f.bf16GradientReduction = false;
    return f;
  }());
  EXPECT_DOUBLE_EQ(fp32.precisionRecipe().reducedGradientBytes, 4);
  // FSDP over 8 ranks, two stages: stage 0 is no last stage, so its
  // working set is the layer's unsharded gradient alone.
  Layout fsdp;
  fsdp.dp = 8;
  fsdp.pp = 2;
  fsdp.zero = 3;
  ASSERT_FALSE(static_cast<bool>(model.checkLayout(fsdp)));
  ASSERT_FALSE(static_cast<bool>(fp32.checkLayout(fsdp)));
  const double layerParams = 4.0 * 1024 * 1024 + 3.0 * 1024 * 4096 + 2 * 1024;
  StageEstimate s = model.stages(fsdp)[0];
  EXPECT_DOUBLE_EQ(s.workingSetBytes, 2 * layerParams);
  EXPECT_DOUBLE_EQ(fp32.stages(fsdp)[0].workingSetBytes, 4 * layerParams);
  EXPECT_DOUBLE_EQ(s.gradientBytes, fp32.stages(fsdp)[0].gradientBytes);
  // 400e6 parameters over 4 layers, each of the two microbatches (16
  // sequences over dp = 8) with two BF16 gathers and a BF16
  // reduce-scatter, 7/8 of 2 x 400e6 bytes each at 450 GB/s; an FP32
  // reduction moves twice that.
  ASSERT_EQ(fsdp.microbatches, 2);
  s.denseParameters = 400e6;
  s.expertParameters = 0;
  s.numLayers = 4;
  const double pass = 7.0 / 8 * 2 * 400e6 / 450e9;
  EXPECT_NEAR(model.dataParallel(fsdp, {&s}, 0, 0).total, 2 * 3 * pass, 1e-12);
  EXPECT_NEAR(fp32.dataParallel(fsdp, {&s}, 0, 0).total, 2 * 4 * pass, 1e-12);
}

TEST(ScalingBook, DataParallelThresholds) {
  // "How to Scale Your Model": C / W.
  ClusterSpec v5p = cluster("tpu-v5p");
  EXPECT_DOUBLE_EQ(
      dataParallelCriticalTokens(v5p.peakBf16, v5p.domainBandwidth / 3), 2550);
  EXPECT_DOUBLE_EQ(
      dataParallelCriticalTokens(v5p.peakBf16, v5p.domainBandwidth), 850);
  ClusterSpec h100 = cluster("h100-ib");
  EXPECT_NEAR(dataParallelCriticalTokens(h100.peakBf16, h100.domainBandwidth),
              2200, 5);
  EXPECT_NEAR(dataParallelCriticalTokens(
                  h100.peakBf16, h100.scaleOutBandwidth * h100.domainSize),
              2475, 5);
  ClusterSpec b200 = cluster("b200-ib");
  EXPECT_DOUBLE_EQ(dataParallelCriticalTokens(
                       b200.peakBf16, b200.scaleOutBandwidth * b200.domainSize),
                   5625);
  // An MoE multiplies the bound by E / k; EP over Z divides it by Z.
  EXPECT_DOUBLE_EQ(
      dataParallelCriticalTokens(v5p.peakBf16, v5p.domainBandwidth / 3, 256.0 / 8),
      2550 * 32);
  EXPECT_DOUBLE_EQ(dataParallelCriticalTokens(v5p.peakBf16,
                                              v5p.domainBandwidth / 3,
                                              256.0 / 8, 8),
                   2550 * 4);
}

TEST(ScalingBook, CostModelReproducesTheThreshold) {
  // The book's condition: the backward pass (4 x P x T FLOPs) hides the
  // all-reduce of 2P bytes of BF16 gradients. With this cost model's own
  // ring all-reduce over one v5p ICI axis (16 chips), compute and
  // communication break even at 2550 x (g - 1) / g tokens per chip.
  ClusterSpec v5p = ideal(cluster("tpu-v5p"));
  CostModel model(preset("llama3-8b"), v5p, training(16, 8192, 8192 * 16));
  const double params = 1e9;
  const double tokens = 2550.0 * 15 / 16;
  const double backward = 4 * params * tokens / v5p.peakBf16;
  EXPECT_NEAR(model.allReduceTime(2 * params, 16, 1) / backward, 1, 1e-12);

  // Across H100 nodes (the intra-node share made free), at 2475-ish
  // tokens: the same break-even, each GPU moving 1/8 over its own link.
  ClusterSpec h100 = ideal(cluster("h100-ib"));
  h100.domainBandwidth = 1e30;
  CostModel gpus(preset("llama3-8b"), h100, training(128, 8192, 8192 * 128));
  const double gpuTokens = 989e12 / 400e9 * 15.0 / 16;
  EXPECT_NEAR(gpus.allReduceTime(2 * params, 128, 1) /
                  (4 * params * gpuTokens / h100.peakBf16),
              1, 1e-9);
}

TEST(CostModelChecks, ImpossibleLayoutsSayWhy) {
  CostModel model(parse(kDense), cluster("h100-ib"), training(8, 2048, 2048 * 8));
  auto error = [&](Layout layout) {
    llvm::Error e = model.checkLayout(layout);
    return e ? llvm::toString(std::move(e)) : std::string();
  };
  Layout wrongCount;
  EXPECT_NE(error(wrongCount).find("--devices is 8"), std::string::npos);
  Layout badTp;
  badTp.dp = 2;
  badTp.tp = 4;
  badTp.pp = 1;
  badTp.cp = 1;
  EXPECT_EQ(error(badTp), "");
  badTp.tp = 8;
  badTp.dp = 1;
  EXPECT_EQ(error(badTp), "");
  Layout ep;
  ep.dp = 8;
  ep.ep = 2;
  EXPECT_NE(error(ep).find("mixture-of-experts"), std::string::npos);
  Layout deep;
  deep.pp = 8;
  EXPECT_NE(error(deep).find("8 stages (pp x vpp) for 2 layers"),
            std::string::npos);
  CostModel odd(parse(kDense), cluster("h100-ib"), training(8, 2048, 2048 * 12));
  Layout dp8;
  dp8.dp = 8;
  llvm::Error e = odd.checkLayout(dp8);
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("12 sequences do not split"),
            std::string::npos);
}

TEST(Descriptions, ErrorsNameTheField) {
  auto modelError = [](llvm::StringRef json) {
    llvm::Expected<ModelSpec> m = parseModelSpec(json);
    return m ? std::string() : llvm::toString(m.takeError());
  };
  EXPECT_EQ(modelError(R"({"layers": 2})"), "hidden: missing");
  EXPECT_EQ(modelError(R"({"layers": 0, "hidden": 8})"),
            "layers: expected an integer in [1, 16777216], got 0");
  // Each field has its range, and its error names it: 2^24 MTP modules took
  // 17 GB of head operators, and every MLA dimension was "kv_lora_rank".
  EXPECT_EQ(modelError(R"({"layers": 2, "hidden": 8, "ffn_hidden": 8,
                            "heads": 2, "vocab": 8, "mtp_layers": 1025})"),
            "mtp_layers: expected an integer in [0, 1024], got 1025");
  EXPECT_EQ(modelError(R"({"layers": 2, "hidden": 8, "ffn_hidden": 8,
                            "heads": 2, "vocab": 8,
                            "mla": {"kv_lora_rank": 8, "qk_nope_head_dim": 8,
                                    "qk_rope_head_dim": 16777217,
                                    "v_head_dim": 8}})"),
            "mla.qk_rope_head_dim: expected an integer in [0, 16777216], got "
            "16777217");
  EXPECT_EQ(modelError(R"({"layers": 2, "hidden": 8, "ffn_hidden": 8,
                            "heads": 2, "vocab": 8, "mlp": "swish"})"),
            "mlp: expected \"gated\" or \"plain\", got \"swish\"");
  EXPECT_EQ(modelError(R"({"layers": 2, "hidden": 8, "ffn_hidden": 8,
                            "heads": 2, "vocab": 8,
                            "moe": {"experts": 4, "top_k": 8}})"),
            "moe.top_k: more than experts");
  EXPECT_NE(modelError("{").find("malformed JSON"), std::string::npos);
  EXPECT_EQ(modelError("[1]"), "expected a JSON object at the top level");

  auto clusterError = [](llvm::StringRef json) {
    llvm::Expected<ClusterSpec> c = parseClusterSpec(json);
    return c ? std::string() : llvm::toString(c.takeError());
  };
  EXPECT_EQ(clusterError(R"({"domain_size": 8})"), "device: missing");
  EXPECT_EQ(clusterError(R"({"device": {"peak_flops": {"bf16": 1e15},
      "hbm_bytes": 8e10, "hbm_bandwidth": 3e12}, "domain_size": 8,
      "domain_bandwidth": 4e11, "scale_out_bandwidth": 5e10,
      "topology": "ring"})"),
            "topology: expected \"switch\" or \"torus3d\", got \"ring\"");
  EXPECT_EQ(clusterError(R"({"device": {"peak_flops": {"bf16": -1},
      "hbm_bytes": 8e10, "hbm_bandwidth": 3e12}})"),
            "device.peak_flops.bf16: expected a number in [1000000000, "
            "1e+18], got -1");

  llvm::Expected<Layout> layout = parseLayout("dp=2,tq=4");
  ASSERT_FALSE(static_cast<bool>(layout));
  EXPECT_EQ(llvm::toString(layout.takeError()),
            "--layout: unknown key 'tq' (expected dp, tp, pp, vpp, ep, cp, "
            "etp, sp, split, first, last, offload or hsdp)");
  layout = parseLayout("dp=2,dp=4");
  ASSERT_FALSE(static_cast<bool>(layout));
  EXPECT_EQ(llvm::toString(layout.takeError()), "--layout: 'dp' given twice");
}

} // namespace
