//===- LaunchPlan.h - what a training framework needs of a plan -*- C++ -*-===//
//
// A planned layout and schedule in the terms launchers take: parallel
// degrees, batch, the layers of each pipeline stage, sharding, recompute
// and overlap. `schedc plan --emit` fills it from a candidate
// (lib/PlanWriter) and the emitters beside it write it for Megatron-Core
// (MegatronArgs.h) and torchtitan (TorchtitanConfig.h). Plain data: no
// cost model, no IR.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_EXPORT_LAUNCHPLAN_H
#define LIB_EXPORT_LAUNCHPLAN_H

#include <cstdint>
#include <string>
#include <vector>

namespace sched {

/// A plan as launchers take it.
struct LaunchPlan {
  /// What was planned, for the header comment: "DeepSeek-V3 on 2,048 x
  /// H800 (h800-ib): ..., step 16.950 s".
  std::string title;
  int64_t dp = 1, tp = 1, pp = 1, vpp = 1, ep = 1, etp = 1, cp = 1;
  /// The pipeline strategy's name (lib/Generate/Strategy.h).
  std::string strategy;
  /// Stages run on a V (stage r and 2pp-1-r on rank r), not in a loop.
  bool vPlacement = false;
  /// Pipeline replicas (DualPipe: 2).
  int64_t replicas = 1;
  bool sequenceParallel = true;
  /// ZeRO stage 0-3, and with hybrid sharding the ranks of one shard
  /// group (dp x cp ranks; 0: no hybrid sharding).
  int zero = 1;
  int64_t shardGroup = 0;
  int64_t microbatchSize = 1;
  int64_t microbatches = 1;
  int64_t globalBatchSequences = 1;
  int64_t seqLen = 1;
  /// Decoder layers of each stage in stage order (pp x vpp entries); the
  /// first stage holds the embedding, the last the loss and `mtpLayers`.
  std::vector<int64_t> stageLayers;
  int64_t numLayers = 0;
  int64_t mtpLayers = 0;
  /// The model has routed experts.
  bool moe = false;
  /// Recomputation: "none", "full", "block" (blockLayers per stage), or
  /// "modules" with Megatron's module names; "op" for torchtitan's
  /// per-operator policy (torchtitan's alone); "named" for a MaxText
  /// saved-name policy, which neither launcher takes.
  std::string recompute = "none";
  int64_t blockLayers = 0;
  std::vector<std::string> recomputeModules;
  /// Layers whose activations go to host memory.
  int64_t offloadLayers = 0;
  /// The transformer GEMMs' precision, as `schedc plan --precision` names
  /// it: "bf16", "fp8" or "fp4" (NVFP4, Transformer Engine's
  /// NVFP4BlockScaling on every layer).
  std::string precision = "bf16";
  /// FP8 parameters, as `schedc plan --fp8-param-gather` names them:
  /// "off", "tensorwise" or "mxfp8".
  std::string fp8ParamGather = "off";
  bool tensorParallelOverlap = true;
  /// Main gradients and Adam's moments in bf16 (else fp32); or only the
  /// first moment in bf16 (`--optimizer-moments mu-bf16`).
  bool bf16MainGrads = false;
  bool bf16Moments = false;
  bool bf16FirstMoment = false;
};

} // namespace sched

#endif // LIB_EXPORT_LAUNCHPLAN_H
