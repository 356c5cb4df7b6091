//===- Layout.cpp - training configuration and parallel layout ------------===//

#include "lib/CostModel/Layout.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace sched;

llvm::StringRef sched::recomputeName(Recompute recompute) {
  switch (recompute) {
  case Recompute::None:
    return "none";
  case Recompute::Selective:
    return "selective";
  case Recompute::Full:
    return "full";
  }
  return "none";
}

std::optional<Recompute> sched::parseRecompute(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Recompute>>(name)
      .Case("none", Recompute::None)
      .Case("selective", Recompute::Selective)
      .Case("full", Recompute::Full)
      .Default(std::nullopt);
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

std::string Layout::str() const {
  return llvm::formatv("dp={0},tp={1},pp={2},vpp={3},ep={4},cp={5}{6}", dp,
                       tp, pp, vpp, ep, cp, sequenceParallel ? "" : ",sp=0")
      .str();
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
    int64_t *field = llvm::StringSwitch<int64_t *>(key)
                         .Case("dp", &layout.dp)
                         .Case("tp", &layout.tp)
                         .Case("pp", &layout.pp)
                         .Case("vpp", &layout.vpp)
                         .Case("ep", &layout.ep)
                         .Case("cp", &layout.cp)
                         .Default(nullptr);
    if (!field)
      return llvm::createStringError(
          "--layout: unknown key '" + key +
          "' (expected dp, tp, pp, vpp, ep, cp or sp)");
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
  return layout;
}
