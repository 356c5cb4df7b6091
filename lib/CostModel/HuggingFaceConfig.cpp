//===- HuggingFaceConfig.cpp - a model from a HuggingFace config ----------===//
//
// Field names are those of the transformers library's configuration
// classes (LlamaConfig, Qwen3MoeConfig, MixtralConfig, DeepseekV3Config,
// GptOssConfig, ...), as their config.json files write them.
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/HuggingFaceConfig.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <fmt/format.h>

using namespace sched;

namespace {
/// The model families read, by `model_type`.
enum class Family { Dense, Mixtral, QwenMoe, DeepSeek, GptOss };

/// Fields that describe the file, not the model: neither used nor worth
/// naming as unused.
constexpr llvm::StringLiteral kMetadata[] = {"architectures", "model_type",
                                             "transformers_version",
                                             "_name_or_path", "auto_map"};

/// Reads the fields of one config, remembering which it used.
class ConfigReader {
public:
  explicit ConfigReader(const llvm::json::Object &config) : config(config) {}

  /// The integer `field`, or nothing when absent; fails when present and
  /// not a non-negative integer.
  llvm::Expected<std::optional<int64_t>> optional(llvm::StringRef field) {
    const llvm::json::Value *value = config.get(field);
    if (!value || value->kind() == llvm::json::Value::Null)
      return std::nullopt;
    used.insert(field);
    std::optional<int64_t> number = value->getAsInteger();
    if (!number || *number < 0)
      return llvm::createStringError(
          fmt::format("{}: expected a non-negative integer", field.str()));
    return number;
  }

  /// The integer `field`; fails when absent.
  llvm::Expected<int64_t> required(llvm::StringRef field) {
    llvm::Expected<std::optional<int64_t>> value = optional(field);
    if (!value)
      return value.takeError();
    if (!*value)
      return llvm::createStringError(
          fmt::format("{}: missing (a HuggingFace config of this model type "
                      "has it)",
                      field.str()));
    return **value;
  }

  /// Marks `field` as used (read by its caller directly).
  void use(llvm::StringRef field) {
    if (config.get(field))
      used.insert(field);
  }

  const llvm::json::Object &object() const { return config; }

  /// The fields neither used nor metadata, sorted.
  std::vector<std::string> unused() const {
    std::vector<std::string> names;
    for (const auto &[key, value] : config)
      if (!used.contains(key) &&
          !llvm::is_contained(kMetadata, llvm::StringRef(key)))
        names.push_back(key.str());
    llvm::sort(names);
    return names;
  }

private:
  const llvm::json::Object &config;
  llvm::StringSet<> used;
};
} // namespace

bool sched::isHuggingFaceConfig(const llvm::json::Object &config) {
  return config.getString("model_type").has_value();
}

static std::optional<Family> familyOf(llvm::StringRef type) {
  if (llvm::is_contained({"llama", "qwen2", "qwen3", "mistral"}, type))
    return Family::Dense;
  if (type == "mixtral")
    return Family::Mixtral;
  if (type == "qwen2_moe" || type == "qwen3_moe")
    return Family::QwenMoe;
  if (type == "deepseek_v3")
    return Family::DeepSeek;
  if (type == "gpt_oss")
    return Family::GptOss;
  return std::nullopt;
}

/// A field of the description's `moe` object and the HF field it comes
/// from.
struct MoeField {
  llvm::StringLiteral ours;
  llvm::StringLiteral theirs;
  bool required;
};

/// The MoE fields of `family`, in the order they are reported.
static llvm::ArrayRef<MoeField> moeFieldsOf(Family family) {
  static constexpr MoeField kLocalExperts[] = {
      {"experts", "num_local_experts", true},
      {"top_k", "num_experts_per_tok", true}};
  static constexpr MoeField kQwen[] = {
      {"experts", "num_experts", true},
      {"top_k", "num_experts_per_tok", true},
      {"expert_ffn_hidden", "moe_intermediate_size", true}};
  // Node-limited routing: a token's experts lie in topk_group groups.
  static constexpr MoeField kDeepSeek[] = {
      {"experts", "n_routed_experts", true},
      {"top_k", "num_experts_per_tok", true},
      {"expert_ffn_hidden", "moe_intermediate_size", true},
      {"shared_experts", "n_shared_experts", false},
      {"dense_layers", "first_k_dense_replace", false},
      {"node_limit", "topk_group", false}};
  switch (family) {
  case Family::Dense:
    return {};
  case Family::Mixtral:
  case Family::GptOss:
    return kLocalExperts;
  case Family::QwenMoe:
    return kQwen;
  case Family::DeepSeek:
    return kDeepSeek;
  }
  return {};
}

/// Sets `out[ours]` from the required HF field `theirs`.
#define SCHEDC_MAP(ours, theirs)                                               \
  do {                                                                         \
    llvm::Expected<int64_t> value = in.required(theirs);                       \
    if (!value)                                                                \
      return value.takeError();                                                \
    out[ours] = *value;                                                        \
    mapped.push_back(std::string(theirs) + " -> " + (ours));                   \
  } while (false)

/// Sliding-window attention into `out`: `layer_types` (as transformers
/// writes it for GPT-OSS, Gemma and Qwen3) says which layers attend within
/// `sliding_window`; without it a `sliding_window` windows every layer
/// (Mistral 7B v0.1) unless `use_sliding_window` is false (Qwen2/Qwen3,
/// whose configs state a window they do not use).
static llvm::Error mapSlidingWindow(ConfigReader &in, llvm::json::Object &out,
                                    std::vector<std::string> &mapped) {
  const llvm::json::Object &config = in.object();
  in.use("use_sliding_window");
  if (config.getBoolean("use_sliding_window") == std::optional<bool>(false)) {
    in.use("sliding_window");
    in.use("layer_types");
    in.use("max_window_layers");
    return llvm::Error::success();
  }
  llvm::Expected<std::optional<int64_t>> window = in.optional("sliding_window");
  if (!window)
    return window.takeError();
  std::vector<bool> windowed;
  if (const llvm::json::Array *types = config.getArray("layer_types")) {
    in.use("layer_types");
    for (const llvm::json::Value &type : *types) {
      std::optional<llvm::StringRef> name = type.getAsString();
      if (name == std::optional<llvm::StringRef>("sliding_attention"))
        windowed.push_back(true);
      else if (name == std::optional<llvm::StringRef>("full_attention"))
        windowed.push_back(false);
      else
        return llvm::createStringError(
            "layer_types: expected \"sliding_attention\" or "
            "\"full_attention\" entries");
    }
  }
  const bool anyWindowed =
      windowed.empty() || llvm::is_contained(windowed, true);
  if (!*window || **window == 0 || !anyWindowed)
    return llvm::Error::success();
  std::optional<int64_t> layers = config.getInteger("num_hidden_layers");
  if (!windowed.empty() &&
      layers != std::optional<int64_t>(static_cast<int64_t>(windowed.size())))
    return llvm::createStringError(
        fmt::format("layer_types: {} entries, but num_hidden_layers is {}",
                    windowed.size(), layers.value_or(0)));
  out["sliding_window"] = **window;
  mapped.push_back("sliding_window -> sliding_window");
  if (windowed.empty() || !llvm::is_contained(windowed, false))
    return llvm::Error::success();
  // Every N-th layer full (1-based), the others windowed.
  const auto firstFull = llvm::find(windowed, false) - windowed.begin();
  const int64_t every = static_cast<int64_t>(firstFull) + 1;
  for (size_t i = 0; i < windowed.size(); ++i)
    if (windowed[i] != ((static_cast<int64_t>(i) + 1) % every != 0))
      return llvm::createStringError(
          "layer_types: only every N-th layer full and the others windowed "
          "can be described; write a model description instead");
  out["full_attention_every"] = every;
  mapped.push_back("layer_types -> full_attention_every");
  return llvm::Error::success();
}

llvm::Expected<HuggingFaceTranslation>
sched::translateHuggingFaceConfig(const llvm::json::Object &config,
                                  llvm::StringRef name) {
  const llvm::StringRef type = *config.getString("model_type");
  std::optional<Family> family = familyOf(type);
  if (!family)
    return llvm::createStringError(fmt::format(
        "model_type '{}' is not a family schedc reads from a HuggingFace "
        "config (llama, mistral, qwen2, qwen3, qwen2_moe, qwen3_moe, "
        "mixtral, deepseek_v3, gpt_oss); write a model description instead "
        "(docs/planner.md)",
        type.take_front(64).str()));
  ConfigReader in(config);
  HuggingFaceTranslation result;
  llvm::json::Object &out = result.description;
  std::vector<std::string> &mapped = result.mapped;
  out["name"] = name.str();

  SCHEDC_MAP("layers", "num_hidden_layers");
  SCHEDC_MAP("hidden", "hidden_size");
  SCHEDC_MAP("heads", "num_attention_heads");
  SCHEDC_MAP("vocab", "vocab_size");
  llvm::Expected<std::optional<int64_t>> kvHeads =
      in.optional("num_key_value_heads");
  if (!kvHeads)
    return kvHeads.takeError();
  if (*kvHeads) {
    out["kv_heads"] = **kvHeads;
    mapped.push_back("num_key_value_heads -> kv_heads");
  }
  llvm::Expected<std::optional<int64_t>> headDim = in.optional("head_dim");
  if (!headDim)
    return headDim.takeError();
  if (*headDim) {
    out["head_dim"] = **headDim;
    mapped.push_back("head_dim -> head_dim");
  }
  if (std::optional<bool> tied = config.getBoolean("tie_word_embeddings")) {
    in.use("tie_word_embeddings");
    out["tied_embeddings"] = *tied;
    mapped.push_back("tie_word_embeddings -> tied_embeddings");
  }
  // Every family here gates its MLP (SwiGLU).
  out["mlp"] = "gated";
  in.use("hidden_act");

  llvm::json::Object moe;
  auto mapMoe = [&](llvm::StringRef ours, llvm::StringRef theirs,
                    bool required) -> llvm::Error {
    llvm::Expected<std::optional<int64_t>> value = in.optional(theirs);
    if (!value)
      return value.takeError();
    if (!*value) {
      if (!required)
        return llvm::Error::success();
      return llvm::createStringError(fmt::format(
          "{}: missing (a {} config has it)", theirs.str(), type.str()));
    }
    moe[ours] = **value;
    mapped.push_back(theirs.str() + " -> moe." + ours.str());
    return llvm::Error::success();
  };
  // Every family here has a dense FFN width (Mixtral's and GPT-OSS's is
  // each expert's too).
  SCHEDC_MAP("ffn_hidden", "intermediate_size");
  for (const MoeField &field : moeFieldsOf(*family))
    if (llvm::Error e = mapMoe(field.ours, field.theirs, field.required))
      return e;
  switch (*family) {
  case Family::Dense:
  case Family::Mixtral:
  case Family::GptOss:
    break;
  case Family::QwenMoe: {
    // Qwen2-MoE's shared expert: one FFN of its own width, counted in
    // routed-expert widths.
    llvm::Expected<std::optional<int64_t>> shared =
        in.optional("shared_expert_intermediate_size");
    if (!shared)
      return shared.takeError();
    if (*shared && **shared > 0) {
      const int64_t width = *moe.getInteger("expert_ffn_hidden");
      moe["shared_experts"] = (**shared + width - 1) / width;
      mapped.push_back("shared_expert_intermediate_size -> moe.shared_experts");
    }
    // Dense layers: only a leading run of them is a description's.
    if (const llvm::json::Array *dense = config.getArray("mlp_only_layers")) {
      in.use("mlp_only_layers");
      for (size_t i = 0; i < dense->size(); ++i)
        if ((*dense)[i].getAsInteger() != static_cast<int64_t>(i))
          return llvm::createStringError(
              "mlp_only_layers: only a leading run of dense layers (0, 1, "
              "..., k-1) can be described; this config lists others");
      moe["dense_layers"] = static_cast<int64_t>(dense->size());
      if (!dense->empty())
        mapped.push_back("mlp_only_layers -> moe.dense_layers");
    }
    break;
  }
  case Family::DeepSeek: {
    llvm::json::Object mla;
    for (auto [ours, theirs] : {std::pair<llvm::StringRef, llvm::StringRef>{
                                    "q_lora_rank", "q_lora_rank"},
                                {"kv_lora_rank", "kv_lora_rank"},
                                {"qk_nope_head_dim", "qk_nope_head_dim"},
                                {"qk_rope_head_dim", "qk_rope_head_dim"},
                                {"v_head_dim", "v_head_dim"}}) {
      llvm::Expected<std::optional<int64_t>> value = in.optional(theirs);
      if (!value)
        return value.takeError();
      if (!*value)
        continue;
      mla[ours] = **value;
      mapped.push_back(theirs.str() + " -> mla." + ours.str());
    }
    out["mla"] = std::move(mla);
    llvm::Expected<std::optional<int64_t>> mtp =
        in.optional("num_nextn_predict_layers");
    if (!mtp)
      return mtp.takeError();
    if (*mtp) {
      out["mtp_layers"] = **mtp;
      mapped.push_back("num_nextn_predict_layers -> mtp_layers");
    }
    break;
  }
  }
  if (llvm::Error error = mapSlidingWindow(in, out, mapped))
    return error;
  if (*family == Family::GptOss) {
    // GptOssAttention's `sinks`: one learned logit per head (no field
    // states it; every gpt_oss model has them).
    out["attention_sinks"] = true;
    mapped.push_back("model_type gpt_oss -> attention_sinks");
    // GptOssExperts' gate_up_proj_bias and down_proj_bias (every gpt_oss
    // model has them) and the clamp of its gated activation.
    out["expert_bias"] = true;
    mapped.push_back("model_type gpt_oss -> expert_bias");
    if (std::optional<double> limit = config.getNumber("swiglu_limit");
        limit && *limit > 0) {
      in.use("swiglu_limit");
      out["activation_clamp"] = *limit;
      mapped.push_back("swiglu_limit -> activation_clamp");
    }
  }
  // A YaRN-scaled rotary embedding (rope_scaling's rope_type, or the
  // older `type`), which Megatron-Core cannot fuse (mscale != 1).
  if (const llvm::json::Object *rope = config.getObject("rope_scaling")) {
    std::optional<llvm::StringRef> type = rope->getString("rope_type");
    if (!type)
      type = rope->getString("type");
    if (type == std::optional<llvm::StringRef>("yarn")) {
      in.use("rope_scaling");
      out["rope_scaling"] = "yarn";
      mapped.push_back("rope_scaling.rope_type yarn -> rope_scaling");
    }
  }
  if (!moe.empty()) {
    // The load-balancing loss: DeepSeek-V3's bias balancing without a loss
    // (topk_method noaux_tc), else a per-microbatch auxiliary loss where
    // the router has a coefficient (the transformers implementations
    // compute it over each forward's tokens).
    if (config.getString("topk_method") ==
        std::optional<llvm::StringRef>("noaux_tc")) {
      in.use("topk_method");
      out["aux_loss"] = llvm::json::Object{{"scope", "aux_free"}};
      mapped.push_back("topk_method -> aux_loss.scope aux_free");
    } else if (std::optional<double> coefficient =
                   config.getNumber("router_aux_loss_coef");
               coefficient && *coefficient > 0) {
      in.use("router_aux_loss_coef");
      out["aux_loss"] = llvm::json::Object{{"scope", "microbatch"}};
      mapped.push_back("router_aux_loss_coef -> aux_loss.scope microbatch");
    }
    out["moe"] = std::move(moe);
  }
  result.unused = in.unused();
  return result;
}
#undef SCHEDC_MAP
