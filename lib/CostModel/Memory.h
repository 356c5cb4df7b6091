//===- Memory.h - what a device keeps: the precision recipe -----*- C++ -*-===//
//
// Static memory per parameter as Megatron's distributed optimizer keeps it
// (docs/cost-model.md, "Memory"): BF16 weights (2 bytes), FP32 main
// gradients (4), and the FP32 master weights and Adam's two moments (12),
// sharded over the data-parallel group by the ZeRO stage: 6 + 12/d bytes
// per parameter with ZeRO-1 (NVIDIA/Megatron-LM
// docs/user-guide/features/dist_optimizer.md). Gradients are reduced in
// FP32 (Megatron's default for BF16 training), weights gathered in BF16.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_COSTMODEL_MEMORY_H
#define LIB_COSTMODEL_MEMORY_H

#include <cstdint>

namespace sched {

struct PrecisionRecipe {
  /// Bytes of a stored weight, sharded under ZeRO-3: BF16 beside the
  /// optimizer's FP32 master copy (Megatron), or the FP32 parameter itself
  /// (MaxText).
  double weightBytes = 2;
  /// Bytes per weight every rank keeps whatever the sharding (MXFP8
  /// parameters' scales, withFp8Params).
  double unshardedWeightBytes = 0;
  /// Bytes of a weight as FSDP gathers it for a pass and holds it while
  /// gathered: BF16 in both recipes, less with FP8 parameters.
  double gatheredWeightBytes = 2;
  /// Bytes of a weight as ZeRO-1 and ZeRO-2 all-gather it after the update.
  double updateGatherBytes = 2;
  /// Bytes of a transposed copy kept beside every unsharded weight: FP8
  /// tensorwise parameters on a device without non-TN FP8 GEMMs (Hopper).
  double transposeBytes = 0;
  double mainGradientBytes = 4;
  /// Bytes of a gradient as the data-parallel group reduces it, and as
  /// ZeRO-3 holds a layer's unsharded before its reduce-scatter: the main
  /// gradients' (Megatron's DDP and FSDP, FSDP2's `reduce_dtype`), or BF16
  /// where a framework reduces the GEMM's output before casting it
  /// (MaxText: withBf16GradientReduction).
  double reducedGradientBytes = 4;
  /// FP32 master weights (4) and Adam's two moments (4 + 4, or 2 + 2 when
  /// kept in BF16).
  double optimizerBytes = 12;
  /// Bytes the optimizer update reads and writes per (sharded) parameter:
  /// gradient, master, momentum and variance read, master, moments and the
  /// BF16 weight written: 30 with FP32 gradients and moments (KERNELS.md
  /// 3c).
  double optimizerTraffic = 30;
};

/// Megatron's mixed-precision recipe (BF16 and FP8 training alike: FP8
/// GEMMs cast their inputs; the weights stay BF16 unless they are FP8
/// parameters, withFp8Params), with the main
/// gradients and Adam's moments in the dtypes the run keeps them in:
/// FP32 by default; BF16 under Megatron's precision-aware optimizer
/// (--main-grads-dtype, --exp-avg-dtype, --exp-avg-sq-dtype bf16) as
/// DeepSeek-V3 trains (report, section 3.3.3) and Megatron-Bridge's
/// DeepSeek-V3 recipe sets.
inline PrecisionRecipe megatronRecipe(double mainGradientBytes = 4,
                                      double momentBytes = 4) {
  PrecisionRecipe recipe;
  recipe.mainGradientBytes = mainGradientBytes;
  recipe.reducedGradientBytes = mainGradientBytes;
  recipe.optimizerBytes = 4 + 2 * momentBytes;
  recipe.optimizerTraffic =
      mainGradientBytes + 4 + 2 * momentBytes + 4 + 2 * momentBytes + 2;
  return recipe;
}

/// MaxText's recipe (`weight_dtype: float32`, base.yml; every row's
/// recipe): the parameters are stored once, in FP32, and are what optax's
/// AdamW updates (the train state holds the parameters and the moments, no
/// master copy); each layer casts them to BF16 where it uses them
/// (`jnp.asarray(kernel, self.dtype)`, linears.py and moe.py), so FSDP
/// gathers the BF16 cast. 4 bytes of weights and 2 x momentBytes of
/// optimizer state per parameter, where Megatron keeps 2 + 12; the update
/// reads the gradient, the parameter and the moments and writes the
/// parameter and the moments (no BF16 copy to write).
inline PrecisionRecipe fp32WeightsRecipe(double mainGradientBytes = 4,
                                         double momentBytes = 4) {
  PrecisionRecipe recipe;
  recipe.weightBytes = 4;
  recipe.mainGradientBytes = mainGradientBytes;
  recipe.reducedGradientBytes = mainGradientBytes;
  recipe.optimizerBytes = 2 * momentBytes;
  recipe.optimizerTraffic =
      mainGradientBytes + 4 + 2 * momentBytes + 4 + 2 * momentBytes;
  return recipe;
}

/// The recipe a stack keeps (`fp32Weights`: MaxText's).
inline PrecisionRecipe precisionRecipe(bool fp32Weights,
                                       double mainGradientBytes,
                                       double momentBytes) {
  return fp32Weights ? fp32WeightsRecipe(mainGradientBytes, momentBytes)
                     : megatronRecipe(mainGradientBytes, momentBytes);
}

/// `recipe` with its gradients reduced in BF16 (MaxText: each layer casts
/// its FP32 kernel to BF16 before its GEMM, `jnp.asarray(kernel,
/// self.dtype)` in linears.py @a0fceb5, so autodiff gives the kernel a BF16
/// cotangent that the FSDP gather's transpose reduce-scatters before the
/// cast's transpose widens it to FP32; docs/cost-model.md, "Gradient
/// reduction dtype"). The sharded gradient the optimizer reads keeps the
/// main gradients' bytes.
inline PrecisionRecipe withBf16GradientReduction(PrecisionRecipe recipe) {
  recipe.reducedGradientBytes = 2;
  return recipe;
}

/// Megatron's `--fp8-param-gather` (Megatron-Bridge's FP8 precision
/// configs set it for current scaling and MXFP8, not for blockwise
/// scaling: `mixed_precision.py` at every tag v0.1.0rc3-v0.4.2): the
/// parameters are Transformer Engine FP8 tensors (`quantized_model_init`),
/// stored and gathered as such; the optimizer's FP32 master copy is
/// unchanged (docs/cost-model.md, "FP8 parameters").
enum class Fp8Params : uint8_t {
  /// BF16 parameters (Megatron's default).
  None,
  /// A `Float8Tensor` (current or delayed scaling): one byte a parameter,
  /// gathered as one (Megatron-FSDP's uint8 buffers; the distributed
  /// optimizer's uint8 param buffer). Without non-TN FP8 GEMMs (Hopper)
  /// Transformer Engine adds the transpose after each gather
  /// (`post_all_gather_processing`), one byte more beside it.
  Tensorwise,
  /// An `MXFP8Tensor`: row-wise and column-wise data (1 + 1 bytes) and an
  /// E8M0 scale per 32 elements of each (2/32), the scales whole on every
  /// rank (TE's `_cast_master_weights_to_fp8_mxfp8_scaling` all-reduces
  /// their amaxes). Megatron-FSDP shards both data buffers and gathers the
  /// row-wise one for the forward and the column-wise one (its transpose
  /// buffer) for the backward, one byte each; the distributed optimizer
  /// gathers BF16 in the gradient buffer and quantizes after it
  /// (`reuse_grad_buf_for_mxfp8_param_ag`).
  Mxfp8,
};

/// `recipe` with its weights kept as `params` (a Megatron recipe's BF16
/// weights otherwise); `transposeOnGather`: the device lacks non-TN FP8
/// GEMMs, so a tensorwise weight keeps its transpose while unsharded.
inline PrecisionRecipe withFp8Params(PrecisionRecipe recipe, Fp8Params params,
                                     bool transposeOnGather) {
  switch (params) {
  case Fp8Params::None:
    break;
  case Fp8Params::Tensorwise:
    recipe.weightBytes = 1;
    recipe.gatheredWeightBytes = 1;
    recipe.updateGatherBytes = 1;
    recipe.transposeBytes = transposeOnGather ? 1 : 0;
    break;
  case Fp8Params::Mxfp8:
    recipe.weightBytes = 2;
    recipe.unshardedWeightBytes = 2.0 / 32;
    recipe.gatheredWeightBytes = 1;
    recipe.updateGatherBytes = 2;
    break;
  }
  return recipe;
}

/// Static bytes of `parameters` on one device: all of them held, and the
/// share `sharded` of them when sharded over the data-parallel group.
struct StaticBytes {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
};

/// Under ZeRO stage `zero`: 1 shards the optimizer state, 2 also the main
/// gradients, 3 also the weights.
inline StaticBytes staticBytes(const PrecisionRecipe &recipe, int zero,
                               double parameters, double sharded) {
  StaticBytes bytes;
  bytes.weights =
      recipe.unshardedWeightBytes * parameters +
      (zero >= 3 ? recipe.weightBytes * sharded
                 : (recipe.weightBytes + recipe.transposeBytes) * parameters);
  bytes.gradients =
      recipe.mainGradientBytes * (zero >= 2 ? sharded : parameters);
  bytes.optimizer = recipe.optimizerBytes * (zero >= 1 ? sharded : parameters);
  return bytes;
}

} // namespace sched

#endif // LIB_COSTMODEL_MEMORY_H
