//===- SoftwareStack.h - what a training framework runs ---------*- C++ -*-===//
//
// A software stack is what one framework version runs beneath a layout:
// its attention kernel, whether tensor-parallel collectives overlap their
// GEMMs, which pipeline schedules it has and which of them hold a rank on
// its point-to-point transfers, its allocator and the dtypes of its main
// gradients and Adam moments. Each fact of a built-in stack is read from
// the framework's source or documentation; docs/cost-model.md, "Software
// stacks", cites each. `schedc plan --stack NAME|FILE` applies one; the
// single-fact flags (--attention, --p2p-overlap, ...) override a fact.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_COSTMODEL_SOFTWARESTACK_H
#define LIB_COSTMODEL_SOFTWARESTACK_H

#include "lib/CostModel/Layout.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace sched {

struct SoftwareStack : StackFacts {
  /// "megatron-core", or the `name` of a stack file.
  std::string name;
  /// The framework version the facts were read from.
  std::string version;

  /// Sets the facts on `training`.
  void apply(TrainingSpec &training) const;
  /// The stack as JSON (what --json reports).
  llvm::json::Object toJson() const;
};

/// The built-in stacks: megatron-core, megatron-lm-2022, torchtitan,
/// deepspeed, maxtext, deepseek-v3.
llvm::ArrayRef<SoftwareStack> builtinStacks();
/// Their names, joined by ", ".
std::string builtinStackNames();

/// A cuDNN release as a stack file spells it ("9.11", or "9.13.1": the
/// patch is dropped) as major + minor / 100; none when malformed.
std::optional<double> parseCudnnRelease(llvm::StringRef text);
/// The release back as "9.11".
std::string cudnnReleaseName(double release);

/// A built-in stack by name, or a stack file (.json): an object with
/// `name`, optional `base` (a built-in stack whose facts it starts from)
/// and any of `attention` ("flash"/"unfused"), `cudnn` (the release the
/// fused attention runs: "9.11"), `tp_overlap` (bool),
/// `blocking_p2p` ("all", "none" or a list of schedule names),
/// `schedules` (a list), `allocator` ("caching"/"expandable"),
/// `main_grads` ("fp32"/"bf16"), `optimizer_moments` ("fp32"/"bf16"/
/// "mu-bf16"), `weights`
/// ("bf16": beside an FP32 master copy; "fp32": the parameters themselves),
/// `gradient_reduction` ("main": in the main gradients' dtype; "bf16"),
/// `activation_caching` ("transformer-engine"/"deepseek-v3"/"kimi-k2"),
/// `moe_dispatcher` ("flex"/"alltoall"), `cross_entropy` ("fused"/
/// "unfused"), `cpu_offload` ("te-v1"/"te-v2"), `offload_alone` (bool),
/// `projections` and `expert_projections` ("fused"/"separate"),
/// `expert_bias`, `activation_clamp` and `yarn_rope` ("fused"/"eager"),
/// `cuda_graphs`
/// ("none"/"moe-router"/"layer"/"step"), `moe_host_forward` (an object of
/// seconds: `router`, `dispatch`, `combine`, `per_local_expert`). Errors name
/// the field, or list the built-in stacks.
llvm::Expected<SoftwareStack> loadSoftwareStack(llvm::StringRef nameOrPath);

} // namespace sched

#endif // LIB_COSTMODEL_SOFTWARESTACK_H
