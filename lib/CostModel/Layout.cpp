//===- Layout.cpp - training configuration and parallel layout ------------===//

#include "lib/CostModel/Layout.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <string>

using namespace sched;

namespace {
struct ModuleName {
  Recompute::Module module;
  const char *name;
};
} // namespace

/// Megatron-Core's names (--recompute-modules), in the order names print.
static constexpr ModuleName kModuleNames[] = {
    {Recompute::CoreAttention, "core_attn"},
    {Recompute::LayerNorm, "layernorm"},
    {Recompute::MlaUpProjection, "mla_up_proj"},
    {Recompute::Mlp, "mlp"},
    {Recompute::MoeActivation, "moe_act"},
    {Recompute::SharedExperts, "shared_experts"},
    {Recompute::Moe, "moe"},
    {Recompute::Dots, "dots"},
};

namespace {
struct CheckpointName {
  uint16_t names;
  const char *name;
};
} // namespace

/// MaxText's checkpoint names, in the order names print; `qkv_proj` and
/// `mlpwi` name two or three tensors at once.
static constexpr CheckpointName kCheckpointNames[] = {
    {Recompute::LayerInput, "decoder_layer_input"},
    {Recompute::QueryProj | Recompute::KeyProj | Recompute::ValueProj,
     "qkv_proj"},
    {Recompute::QueryProj, "query_proj"},
    {Recompute::KeyProj, "key_proj"},
    {Recompute::ValueProj, "value_proj"},
    {Recompute::Context, "context"},
    {Recompute::OutProj, "out_proj"},
    {Recompute::MlpWi0 | Recompute::MlpWi1, "mlpwi"},
    {Recompute::MlpWi0, "mlpwi_0"},
    {Recompute::MlpWi1, "mlpwi_1"},
    {Recompute::MlpWo, "mlpwo"},
};

static std::string savedNamesText(Recompute recompute) {
  std::string text = "save:";
  bool first = true;
  // Each tensor once, by the widest name that covers it with one place.
  uint16_t left = recompute.savedNames();
  for (const CheckpointName &c : kCheckpointNames) {
    if ((left & c.names) != c.names)
      continue;
    const uint16_t host = recompute.hostNames() & c.names;
    if (host != 0 && host != c.names)
      continue;
    if (c.names == Recompute::LayerInput && !host)
      continue; // always kept on the device
    text += (first ? "" : ",") + std::string(c.name) +
            (host ? "=offload" : "");
    first = false;
    left &= ~c.names;
  }
  return text;
}

static llvm::Expected<Recompute> parseSavedNames(llvm::StringRef list) {
  llvm::SmallVector<llvm::StringRef> items;
  list.split(items, ',', -1, /*KeepEmpty=*/true);
  uint16_t saved = 0, host = 0;
  for (llvm::StringRef item : items) {
    auto [name, place] = item.split('=');
    name = name.trim();
    place = place.trim();
    if (name.empty() && place.empty() && items.size() == 1)
      break; // "save:" keeps only the layer input
    const CheckpointName *found =
        llvm::find_if(kCheckpointNames, [&](const CheckpointName &c) {
          return name == c.name;
        });
    if (found == std::end(kCheckpointNames))
      return llvm::createStringError(
          "save:'" + name.take_front(64) +
          "' is not a checkpoint name (decoder_layer_input, qkv_proj, "
          "query_proj, key_proj, value_proj, context, out_proj, mlpwi, "
          "mlpwi_0, mlpwi_1, mlpwo; name=offload keeps it in host memory)");
    if (!place.empty() && place != "device" && place != "offload")
      return llvm::createStringError(
          "save:" + name.take_front(64) + "=" + place.take_front(64) +
          ": a saved tensor stays on the device or goes to host memory "
          "(=device or =offload)");
    saved |= found->names;
    if (place == "offload")
      host |= found->names;
    else
      host &= ~found->names;
  }
  return Recompute::saving(saved, host);
}

/// What `dots` implies besides itself: the norms and the attention core
/// are not weight GEMMs.
static constexpr uint8_t kDotsImplies =
    Recompute::LayerNorm | Recompute::CoreAttention;

std::string sched::recomputeName(Recompute recompute) {
  if (recompute.isNamed())
    return savedNamesText(recompute);
  if (recompute.isPerOperator())
    return "op";
  if (recompute.isBlock())
    return "block:" + std::to_string(recompute.blockSize());
  if (recompute.isFull())
    return "full";
  if (recompute.isNone())
    return "none";
  if (recompute == Recompute::Selective)
    return "selective";
  uint8_t set = recompute.moduleSet();
  if (set & Recompute::Dots)
    set &= ~kDotsImplies;
  std::string name;
  for (const ModuleName &m : kModuleNames)
    if (set & m.module)
      name += (name.empty() ? "" : ",") + std::string(m.name);
  return name;
}

llvm::Expected<Recompute> sched::parseRecompute(llvm::StringRef name) {
  name = name.trim();
  if (name == "none")
    return Recompute::None;
  if (name == "full")
    return Recompute::Full;
  if (name == "selective")
    return Recompute::Selective;
  if (name == "op")
    return Recompute::perOperator();
  if (name.consume_front("save:"))
    return parseSavedNames(name);
  if (name.consume_front("block:")) {
    int64_t layers = 0;
    if (name.getAsInteger(10, layers) || layers < 1 ||
        layers > Recompute::kMaxBlockLayers)
      return llvm::createStringError(
          "block:" + name.take_front(64) +
          ": the layers recomputed per stage must be an integer in [1, "
          "2^24]");
    return Recompute::block(layers);
  }
  llvm::SmallVector<llvm::StringRef> items;
  name.split(items, ',', -1, /*KeepEmpty=*/true);
  uint8_t set = 0;
  for (llvm::StringRef item : items) {
    item = item.trim();
    const ModuleName *found =
        llvm::find_if(kModuleNames, [&](const ModuleName &m) {
          return item == m.name;
        });
    if (found == std::end(kModuleNames))
      return llvm::createStringError(
          "'" + item.take_front(64) +
          "' is not none, selective, op, full, block:N, save:NAMES or a "
          "recompute module (core_attn, layernorm, mla_up_proj, mlp, moe_act, "
          "shared_experts, moe, dots, joined by commas)");
    set |= found->module;
  }
  if (set & Recompute::Dots)
    set |= kDotsImplies;
  return Recompute::modules(set);
}

llvm::StringRef sched::attentionKernelName(AttentionKernel kernel) {
  return kernel == AttentionKernel::Unfused ? "unfused" : "flash";
}

std::optional<AttentionKernel>
sched::parseAttentionKernel(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<AttentionKernel>>(name)
      .Case("flash", AttentionKernel::Flash)
      .Case("unfused", AttentionKernel::Unfused)
      .Default(std::nullopt);
}

llvm::StringRef sched::activationCachingName(ActivationCaching caching) {
  switch (caching) {
  case ActivationCaching::DeepSeekV3:
    return "deepseek-v3";
  case ActivationCaching::KimiK2:
    return "kimi-k2";
  case ActivationCaching::TransformerEngine:
    break;
  }
  return "transformer-engine";
}

std::optional<ActivationCaching>
sched::parseActivationCaching(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ActivationCaching>>(name)
      .Case("transformer-engine", ActivationCaching::TransformerEngine)
      .Case("deepseek-v3", ActivationCaching::DeepSeekV3)
      .Case("kimi-k2", ActivationCaching::KimiK2)
      .Default(std::nullopt);
}

llvm::StringRef sched::moeDispatcherName(MoeDispatcher dispatcher) {
  return dispatcher == MoeDispatcher::AllToAll ? "alltoall" : "flex";
}

std::optional<MoeDispatcher> sched::parseMoeDispatcher(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<MoeDispatcher>>(name)
      .Case("flex", MoeDispatcher::Flex)
      .Case("alltoall", MoeDispatcher::AllToAll)
      .Default(std::nullopt);
}

llvm::StringRef sched::fp8ParamsName(Fp8Params params) {
  switch (params) {
  case Fp8Params::None:
    return "off";
  case Fp8Params::Tensorwise:
    return "tensorwise";
  case Fp8Params::Mxfp8:
    return "mxfp8";
  }
  llvm_unreachable("unknown Fp8Params");
}

std::optional<Fp8Params> sched::parseFp8Params(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Fp8Params>>(name)
      .Case("off", Fp8Params::None)
      .Case("tensorwise", Fp8Params::Tensorwise)
      .Case("mxfp8", Fp8Params::Mxfp8)
      .Default(std::nullopt);
}

llvm::StringRef sched::cudaGraphsName(CudaGraphs graphs) {
  switch (graphs) {
  case CudaGraphs::None:
    return "none";
  case CudaGraphs::MoeRouter:
    return "moe-router";
  case CudaGraphs::Layer:
    return "layer";
  case CudaGraphs::Step:
    return "step";
  }
  llvm_unreachable("unknown CudaGraphs");
}

std::optional<CudaGraphs> sched::parseCudaGraphs(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<CudaGraphs>>(name)
      .Case("none", CudaGraphs::None)
      .Case("moe-router", CudaGraphs::MoeRouter)
      .Case("layer", CudaGraphs::Layer)
      .Case("step", CudaGraphs::Step)
      .Default(std::nullopt);
}

std::optional<double> sched::parseOptimizerMoments(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<double>>(name)
      .Case("fp32", 4)
      .Case("bf16", 2)
      .Case("mu-bf16", 3)
      .Default(std::nullopt);
}

std::string Layout::str() const {
  std::string text = llvm::formatv("dp={0},tp={1},pp={2},vpp={3},ep={4},cp={5}",
                                   dp, tp, pp, vpp, ep, cp)
                         .str();
  if (std::string more = extras(); !more.empty())
    text += "," + more;
  return text;
}

std::string Layout::extras() const {
  llvm::SmallVector<std::string> items;
  if (!sequenceParallel)
    items.push_back("sp=0");
  if (firstStageLayers >= 0)
    items.push_back("first=" + std::to_string(firstStageLayers));
  if (lastStageLayers >= 0)
    items.push_back("last=" + std::to_string(lastStageLayers));
  if (megatronSplit && firstStageLayers < 0 && lastStageLayers < 0)
    items.push_back("split=even");
  if (offloadLayers > 0)
    items.push_back("offload=" + std::to_string(offloadLayers));
  if (shardGroup > 0)
    items.push_back("hsdp=" + std::to_string(shardGroup));
  if (etp > 1)
    items.push_back("etp=" + std::to_string(etp));
  return llvm::join(items, ",");
}

llvm::Expected<Layout> sched::parseLayout(llvm::StringRef text) {
  Layout layout;
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',', -1, /*KeepEmpty=*/false);
  if (items.empty())
    return llvm::createStringError(
        "--layout: expected key=value pairs such as dp=64,tp=8,pp=16");
  llvm::SmallVector<llvm::StringRef> seen;
  for (llvm::StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    value = value.trim();
    if (llvm::is_contained(seen, key))
      return llvm::createStringError("--layout: '" + key + "' given twice");
    seen.push_back(key);
    if (key == "sp") {
      if (value != "0" && value != "1")
        return llvm::createStringError("--layout: sp='" + value +
                                       "' is not 0 or 1");
      layout.sequenceParallel = value == "1";
      continue;
    }
    if (key == "split") {
      if (value != "even" && value != "balanced")
        return llvm::createStringError("--layout: split='" + value +
                                       "' is not even or balanced");
      layout.megatronSplit = value == "even";
      continue;
    }
    if (key == "hsdp") {
      int64_t n = 0;
      if (value.getAsInteger(10, n) || n < 1 || n > (int64_t(1) << 24))
        return llvm::createStringError("--layout: hsdp='" + value +
                                       "' is not an integer in [1, 2^24]");
      layout.shardGroup = n;
      continue;
    }
    if (key == "first" || key == "last" || key == "offload") {
      int64_t n = 0;
      if (value.getAsInteger(10, n) || n < 0 || n > (int64_t(1) << 24))
        return llvm::createStringError("--layout: " + key + "='" + value +
                                       "' is not an integer in [0, 2^24]");
      if (key == "offload") {
        layout.offloadLayers = n;
        continue;
      }
      (key == "first" ? layout.firstStageLayers : layout.lastStageLayers) = n;
      layout.megatronSplit = true;
      continue;
    }
    int64_t *field = llvm::StringSwitch<int64_t *>(key)
                         .Case("dp", &layout.dp)
                         .Case("tp", &layout.tp)
                         .Case("pp", &layout.pp)
                         .Case("vpp", &layout.vpp)
                         .Case("ep", &layout.ep)
                         .Case("cp", &layout.cp)
                         .Case("etp", &layout.etp)
                         .Default(nullptr);
    if (!field)
      return llvm::createStringError(
          "--layout: unknown key '" + key +
          "' (expected dp, tp, pp, vpp, ep, cp, etp, sp, split, first, last, "
          "offload or hsdp)");
    int64_t n = 0;
    if (value.getAsInteger(10, n) || n < 1 || n > (int64_t(1) << 24))
      return llvm::createStringError("--layout: " + key + "='" + value +
                                     "' is not an integer in [1, 2^24]");
    *field = n;
  }
  // Each factor fits, but four of 2^24 wrap past 2^64: multiply while the
  // product stays within the devices --devices takes.
  constexpr int64_t kMaxDevices = int64_t(1) << 24;
  int64_t devices = 1;
  for (int64_t factor : {layout.dp, layout.tp, layout.pp, layout.cp}) {
    if (factor > kMaxDevices / devices)
      return llvm::createStringError(
          "--layout: dp x tp x pp x cp is more than 2^24 devices (" +
          layout.str() + ")");
    devices *= factor;
  }
  if (llvm::is_contained(seen, "split") && !layout.megatronSplit &&
      (layout.firstStageLayers >= 0 || layout.lastStageLayers >= 0))
    return llvm::createStringError(
        "--layout: first and last set Megatron's split; split=balanced "
        "contradicts them");
  return layout;
}
