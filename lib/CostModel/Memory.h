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

namespace sched {

struct PrecisionRecipe {
  /// Bytes of a stored weight: BF16 beside the optimizer's FP32 master
  /// copy (Megatron), or the FP32 parameter itself (MaxText).
  double weightBytes = 2;
  /// Bytes of a weight as FSDP gathers it: BF16 in both recipes.
  double gatheredWeightBytes = 2;
  double mainGradientBytes = 4;
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
/// GEMMs cast their inputs, the stored weights stay BF16), with the main
/// gradients and Adam's moments in the dtypes the run keeps them in:
/// FP32 by default; BF16 under Megatron's precision-aware optimizer
/// (--main-grads-dtype, --exp-avg-dtype, --exp-avg-sq-dtype bf16) as
/// DeepSeek-V3 trains (report, section 3.3.3) and Megatron-Bridge's
/// DeepSeek-V3 recipe sets.
inline PrecisionRecipe megatronRecipe(double mainGradientBytes = 4,
                                      double momentBytes = 4) {
  PrecisionRecipe recipe;
  recipe.mainGradientBytes = mainGradientBytes;
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
  bytes.weights = recipe.weightBytes * (zero >= 3 ? sharded : parameters);
  bytes.gradients =
      recipe.mainGradientBytes * (zero >= 2 ? sharded : parameters);
  bytes.optimizer = recipe.optimizerBytes * (zero >= 1 ? sharded : parameters);
  return bytes;
}

} // namespace sched

#endif // LIB_COSTMODEL_MEMORY_H
