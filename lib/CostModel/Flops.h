//===- Flops.h - model and hardware FLOPs, as Megatron counts them -*- C++
//-*-===//
//
// One FLOP definition (docs/cost-model.md, "FLOPs"): Megatron-LM's
// `num_floating_point_operations` — 3 passes (forward, data gradient,
// weight gradient) x 2 FLOPs per multiply-add x every GEMM of the model
// (attention projections, dense MLPs, the top_k routed experts and the
// shared experts, the output layer, the multi-token-prediction modules'
// layer, projection and logits), the attention core counted causally (half
// the score matrix; a sliding-window layer its band). Norms, the router and the
// embedding lookup are not counted. MFU's numerator is this; hardware FLOPs add
// what recomputation runs again.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_COSTMODEL_FLOPS_H
#define LIB_COSTMODEL_FLOPS_H

#include "lib/CostModel/Layout.h"
#include "lib/CostModel/ModelSpec.h"

namespace sched {

/// The keys one query meets on average in a causal layer of `seqLen`
/// tokens: seqLen / 2 (Megatron counts half the score matrix), or, in a
/// layer that attends within a window of W keys, the band's
/// (seqLen·W − W²/2) / seqLen (W ≥ seqLen: the whole causal half).
double meanKeysPerQuery(double seqLen, int64_t window);

/// The model FLOPs of one token, forward and backward, at `seqLen`.
double megatronFlopsPerToken(const ModelSpec &model, int64_t seqLen);

/// The FLOPs the devices execute per token under `recompute`: the model
/// FLOPs plus the recomputed forward (the attention core for selective, the
/// whole layer stack for full, every second weight GEMM for torchtitan's
/// per-operator policy, which counts Q, K and V apart under
/// `separateProjections`).
double hardwareFlopsPerToken(const ModelSpec &model, int64_t seqLen,
                             Recompute recompute,
                             bool separateProjections = false);

} // namespace sched

#endif // LIB_COSTMODEL_FLOPS_H
