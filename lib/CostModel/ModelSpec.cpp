//===- ModelSpec.cpp - transformer descriptions and presets ---------------===//
//
// Preset figures are the public architecture descriptions; docs/cost-model.md
// lists the source of each.
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/ModelSpec.h"
#include "lib/CostModel/DescriptionReader.h"
#include "lib/CostModel/HuggingFaceConfig.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

using namespace sched;

namespace {
struct Preset {
  llvm::StringLiteral name;
  ModelSpec (*make)();
};
} // namespace

static ModelSpec dense(llvm::StringRef name, int64_t layers, int64_t hidden,
                       int64_t ffn, int64_t heads, int64_t kvHeads,
                       int64_t vocab) {
  ModelSpec model;
  model.name = name.str();
  model.layers = layers;
  model.hidden = hidden;
  model.ffnHidden = ffn;
  model.heads = heads;
  model.kvHeads = kvHeads;
  model.headDim = hidden / heads;
  model.vocab = vocab;
  return model;
}

static ModelSpec llama3(llvm::StringRef name, int64_t layers, int64_t hidden,
                        int64_t ffn, int64_t heads) {
  ModelSpec model = dense(name, layers, hidden, ffn, heads, 8, 128256);
  model.seqLen = 8192;
  // Llama 3 paper, section 3.4.1: the batch grows to 16M tokens.
  model.globalBatchTokens = 16 * 1024 * 1024;
  return model;
}

/// DeepSeek-V3 and Kimi K2 share the layer shape: MLA with DeepSeek's
/// dimensions, 7168 hidden, expert FFN 2048, one shared expert.
static ModelSpec deepseekLike(llvm::StringRef name, int64_t heads,
                              int64_t experts, int64_t denseLayers,
                              int64_t vocab) {
  ModelSpec model = dense(name, 61, 7168, 18432, heads, heads, vocab);
  model.headDim = 128;
  model.moe = MoeSpec{experts, 8, 1, 2048, denseLayers, 0};
  model.mla = MlaSpec{1536, 512, 128, 64, 128};
  model.seqLen = 4096;
  return model;
}

/// OpenAI's gpt-oss models (the model card, arXiv 2508.10925, and the
/// HuggingFace config.json): every layer MoE with 4 of the experts, GQA
/// with 64 query heads of 64 and 8 KV heads, attention sinks, and every
/// second layer (the odd ones, 0-based) attending within 128 tokens.
static ModelSpec gptOss(llvm::StringRef name, int64_t layers, int64_t experts) {
  ModelSpec model = dense(name, layers, 2880, 2880, 64, 8, 201088);
  model.headDim = 64;
  model.moe = MoeSpec{experts, 4, 0, 2880, 0, 0};
  model.slidingWindow = 128;
  model.fullAttentionEvery = 2;
  model.attentionSinks = true;
  // GptOssExperts' gate_up_proj_bias and down_proj_bias, swiglu_limit 7.0,
  // rope_scaling {"rope_type": "yarn", "factor": 32.0} (config.json).
  model.expertBias = true;
  model.activationClamp = 7;
  model.yarnRope = true;
  // router_aux_loss_coef 0.9: a load-balancing loss over each forward's
  // tokens.
  model.auxLoss = AuxLossScope::Microbatch;
  return model;
}

static const Preset kPresets[] = {
    {"llama3-8b", [] { return llama3("llama3-8b", 32, 4096, 14336, 32); }},
    {"llama3-70b", [] { return llama3("llama3-70b", 80, 8192, 28672, 64); }},
    {"llama3-405b",
     [] { return llama3("llama3-405b", 126, 16384, 53248, 128); }},
    {"deepseek-v3",
     [] {
       ModelSpec model = deepseekLike("deepseek-v3", 128, 256, 3, 129280);
       model.mtpLayers = 1;
       model.auxLoss = AuxLossScope::AuxFree;
       // Section 2.1.2: each token goes to at most 4 nodes.
       model.moe->nodeLimit = 4;
       // DeepSeek-V3 report, section 4.2: 15360 sequences of 4K tokens.
       model.globalBatchTokens = 15360LL * 4096;
       return model;
     }},
    {"kimi-k2",
     [] {
       ModelSpec model = deepseekLike("kimi-k2", 64, 384, 1, 163840);
       // Kimi K2 report: a 67M-token global batch.
       model.globalBatchTokens = 16384LL * 4096;
       return model;
     }},
    {"gpt-oss-120b", [] { return gptOss("gpt-oss-120b", 36, 128); }},
    {"gpt-oss-20b", [] { return gptOss("gpt-oss-20b", 24, 32); }},
    {"gpt3-175b",
     [] {
       ModelSpec model = dense("gpt3-175b", 96, 12288, 49152, 96, 96, 50257);
       model.mlp = MlpKind::Plain;
       model.tiedEmbeddings = true;
       model.seqLen = 2048;
       // GPT-3 paper, table 2.1: 3.2M tokens.
       model.globalBatchTokens = 1536LL * 2048;
       return model;
     }},
};

std::vector<llvm::StringRef> sched::modelPresetNames() {
  std::vector<llvm::StringRef> names;
  for (const Preset &preset : kPresets)
    names.push_back(preset.name);
  return names;
}

std::optional<ModelSpec> sched::modelPreset(llvm::StringRef name) {
  for (const Preset &preset : kPresets)
    if (preset.name == name)
      return preset.make();
  return std::nullopt;
}

/// Sizes beyond these make the parameter and FLOP products overflow-prone
/// and are not models anyone trains: every count and dimension is at most
/// 2^24, experts of each kind 2^20.
static constexpr int64_t kMaxDim = int64_t(1) << 24;
static constexpr int64_t kMaxExperts = int64_t(1) << 20;
/// MTP modules are few (DeepSeek-V3 has one), and each adds its own
/// operators to the head (headOperators): 2^24 took 17 GB and over a
/// minute, 9e15 ran without end; 1,024 take 0.3 s.
static constexpr int64_t kMaxMtpLayers = 1024;

llvm::Expected<ModelSpec> sched::parseModelSpec(llvm::StringRef jsonText) {
  llvm::Expected<llvm::json::Value> json = parseDescriptionJson(jsonText);
  if (!json)
    return json.takeError();
  DescriptionReader in(*json->getAsObject());
  ModelSpec model;
  model.name = in.string("name", std::string("model"));
  model.layers = in.integer("layers", 1, std::nullopt, kMaxDim);
  model.hidden = in.integer("hidden", 1, std::nullopt, kMaxDim);
  model.ffnHidden = in.integer("ffn_hidden", 1, std::nullopt, kMaxDim);
  model.heads = in.integer("heads", 1, std::nullopt, kMaxDim);
  model.kvHeads = in.integer("kv_heads", 1, model.heads, kMaxDim);
  model.headDim = in.integer(
      "head_dim", 1, model.heads > 0 ? model.hidden / model.heads : 1, kMaxDim);
  if (model.headDim < 1)
    in.fail("head_dim", "hidden / heads is 0; give head_dim");
  model.vocab = in.integer("vocab", 1, std::nullopt, kMaxDim);
  model.tiedEmbeddings = in.boolean("tied_embeddings", false);
  std::string mlp = in.string("mlp", std::string("gated"));
  if (mlp == "gated")
    model.mlp = MlpKind::Gated;
  else if (mlp == "plain")
    model.mlp = MlpKind::Plain;
  else
    in.fail("mlp", "expected \"gated\" or \"plain\", got \"" + mlp + "\"");
  if (in.ok() && model.kvHeads > model.heads)
    in.fail("kv_heads", "more key/value heads than heads");
  if (in.ok() && model.heads % model.kvHeads != 0)
    in.fail("kv_heads", "does not divide heads");

  if (const llvm::json::Object *moe = in.nested("moe")) {
    DescriptionReader m(*moe, "moe.");
    MoeSpec spec;
    spec.experts = m.integer("experts", 1, std::nullopt, kMaxExperts);
    spec.topK = m.integer("top_k", 1, std::nullopt, kMaxExperts);
    spec.sharedExperts = m.integer("shared_experts", 0, 0, kMaxExperts);
    spec.expertFfnHidden =
        m.integer("expert_ffn_hidden", 1, model.ffnHidden, kMaxDim);
    spec.denseLayers = m.integer("dense_layers", 0, 0, kMaxDim);
    spec.nodeLimit = m.integer("node_limit", 0, 0, kMaxDim);
    if (m.ok() && spec.topK > spec.experts)
      m.fail("top_k", "more than experts");
    if (m.ok() && spec.denseLayers > model.layers)
      m.fail("dense_layers", "more than layers");
    in.adopt(m);
    model.moe = spec;
  }
  if (const llvm::json::Object *mla = in.nested("mla")) {
    DescriptionReader a(*mla, "mla.");
    MlaSpec spec;
    spec.qLoraRank = a.integer("q_lora_rank", 0, 0, kMaxDim);
    spec.kvLoraRank = a.integer("kv_lora_rank", 1, std::nullopt, kMaxDim);
    spec.qkNopeHeadDim =
        a.integer("qk_nope_head_dim", 1, std::nullopt, kMaxDim);
    spec.qkRopeHeadDim =
        a.integer("qk_rope_head_dim", 0, std::nullopt, kMaxDim);
    spec.vHeadDim = a.integer("v_head_dim", 1, std::nullopt, kMaxDim);
    in.adopt(a);
    model.mla = spec;
  }
  model.mtpLayers = in.integer("mtp_layers", 0, 0, kMaxMtpLayers);
  model.slidingWindow = in.integer("sliding_window", 1, 0, kMaxDim);
  model.fullAttentionEvery = in.integer("full_attention_every", 1, 0, kMaxDim);
  if (in.ok() && model.fullAttentionEvery > 0 && model.slidingWindow == 0)
    in.fail("full_attention_every",
            "needs sliding_window (the layers between the full ones are "
            "windowed)");
  model.attentionSinks = in.boolean("attention_sinks", false);
  model.expertBias = in.boolean("expert_bias", false);
  model.activationClamp =
      in.number("activation_clamp", 0, {1e-6, 1e6, /*allowZero=*/true});
  {
    const std::string rope = in.string("rope_scaling", "none");
    if (in.ok() && rope != "none" && rope != "yarn")
      in.fail("rope_scaling", "expected none or yarn, got '" +
                                  llvm::StringRef(rope).take_front(32) + "'");
    model.yarnRope = rope == "yarn";
  }
  if (in.ok() && model.expertBias && !model.moe)
    in.fail("expert_bias", "needs moe (the experts' biases)");
  if (in.ok() && model.mla && model.slidingWindow > 0)
    in.fail("sliding_window", "not modelled with mla");
  if (const llvm::json::Object *aux = in.nested("aux_loss")) {
    DescriptionReader a(*aux, "aux_loss.");
    std::string scope = a.string("scope");
    if (scope == "microbatch")
      model.auxLoss = AuxLossScope::Microbatch;
    else if (scope == "sequence")
      model.auxLoss = AuxLossScope::Sequence;
    else if (scope == "global_batch")
      model.auxLoss = AuxLossScope::GlobalBatch;
    else if (scope == "aux_free")
      model.auxLoss = AuxLossScope::AuxFree;
    else if (a.ok())
      a.fail("scope", "expected microbatch, sequence, global_batch or "
                      "aux_free, got \"" +
                          scope + "\"");
    in.adopt(a);
  }
  // The ranges of schedc plan's --seq-len and --global-batch-tokens.
  model.seqLen = in.integer("seq_len", 0, 0, int64_t(1) << 24);
  model.globalBatchTokens =
      in.integer("global_batch_tokens", 0, 0, int64_t(1) << 40);
  if (llvm::Error error = in.takeError())
    return std::move(error);
  return model;
}

/// The model of `text` when it is a HuggingFace config.json (its
/// importNote set), a ModelSpec with an empty importNote when it is not,
/// or why it cannot be read.
static llvm::Expected<ModelSpec> loadHuggingFaceModel(llvm::StringRef path,
                                                      llvm::StringRef text) {
  llvm::Expected<llvm::json::Value> json = parseDescriptionJson(text);
  if (!json) {
    // parseModelSpec reports it in its own words.
    llvm::consumeError(json.takeError());
    return ModelSpec();
  }
  const llvm::json::Object *object = json->getAsObject();
  if (!object || !isHuggingFaceConfig(*object))
    return ModelSpec();
  // The model's name: the checkpoint's directory, else the file's stem.
  llvm::StringRef name = llvm::sys::path::filename(
      llvm::sys::path::parent_path(path));
  if (name.empty() || name == ".")
    name = llvm::sys::path::stem(path);
  llvm::Expected<HuggingFaceTranslation> translation =
      translateHuggingFaceConfig(*object, name);
  if (!translation)
    return llvm::createStringError(path + ": " +
                                   llvm::toString(translation.takeError()));
  std::string description;
  llvm::raw_string_ostream os(description);
  os << llvm::json::Value(std::move(translation->description));
  llvm::Expected<ModelSpec> model = parseModelSpec(description);
  if (!model)
    return llvm::createStringError(
        path + ": the HuggingFace config's model: " +
        llvm::toString(model.takeError()));
  model->importNote =
      "read " + path.str() + " as a HuggingFace " +
      object->getString("model_type")->str() + " config; used " +
      llvm::join(translation->mapped, ", ") + "; not used: " +
      (translation->unused.empty() ? std::string("none")
                                   : llvm::join(translation->unused, ", "));
  return model;
}

llvm::Expected<ModelSpec> sched::loadModelSpec(llvm::StringRef nameOrPath) {
  if (std::optional<ModelSpec> preset = modelPreset(nameOrPath))
    return *preset;
  if (!nameOrPath.ends_with(".json")) {
    std::string names;
    for (llvm::StringRef name : modelPresetNames())
      names += (names.empty() ? "" : ", ") + name.str();
    return llvm::createStringError("unknown model '" + nameOrPath +
                                   "' (presets: " + names +
                                   "; or a .json file)");
  }
  llvm::Expected<std::string> text = readDescriptionFile(nameOrPath);
  if (!text)
    return text.takeError();
  if (llvm::Expected<ModelSpec> hf = loadHuggingFaceModel(nameOrPath, *text);
      !hf || !hf->importNote.empty())
    return hf;
  llvm::Expected<ModelSpec> model = parseModelSpec(*text);
  if (!model)
    return llvm::createStringError(nameOrPath + ": " +
                                   llvm::toString(model.takeError()));
  return model;
}
