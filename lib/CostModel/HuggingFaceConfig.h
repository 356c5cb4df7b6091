//===- HuggingFaceConfig.h - a model from a HuggingFace config --*- C++ -*-===//
//
// `schedc plan --model config.json` takes the config.json that
// HuggingFace checkpoints carry (Llama, Qwen2/Qwen3, Qwen2-MoE/Qwen3-MoE,
// Mixtral, DeepSeek-V3, GPT-OSS): its fields become the model description
// of ModelSpec.h (layers, hidden, FFN, heads, GQA, MoE, MLA, MTP), which
// the description reader then checks as it checks any model file. The
// fields the cost model has no use for are named, not silently dropped.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_COSTMODEL_HUGGINGFACECONFIG_H
#define LIB_COSTMODEL_HUGGINGFACECONFIG_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace sched {

/// A HuggingFace config translated into a model description.
struct HuggingFaceTranslation {
  /// The description, in the fields parseModelSpec reads.
  llvm::json::Object description;
  /// "hf_field -> field" for each field used.
  std::vector<std::string> mapped;
  /// The HuggingFace fields the cost model does not use, sorted.
  std::vector<std::string> unused;
};

/// Whether `config` looks like a HuggingFace config (it has `model_type`).
bool isHuggingFaceConfig(const llvm::json::Object &config);

/// Translates `config`; `name` names the model when the config does not.
/// Fails naming a missing or malformed field, or a model type it does not
/// know, with the families it reads.
llvm::Expected<HuggingFaceTranslation>
translateHuggingFaceConfig(const llvm::json::Object &config,
                           llvm::StringRef name);

} // namespace sched

#endif // LIB_COSTMODEL_HUGGINGFACECONFIG_H
