//===- MegatronArgs.cpp - a plan as Megatron-Core's flags -----------------===//
//
// The flags are Megatron-LM's (megatron/training/arguments.py); the layout
// string follows its PipelineParallelLayerLayout: stages in pipeline order
// (stage s on rank s mod pp, chunk s / pp), `|` between stages, `E` the
// embedding (first), `t` a decoder layer, `m` an MTP layer (after every
// decoder, in the last stage), `L` the loss (last), `x*n` and `(...)*n`
// repeats, commas cosmetic. With a layout Megatron takes the virtual
// pipeline size from it, so no VPP flag is written.
//
//===----------------------------------------------------------------------===//

#include "lib/Export/MegatronArgs.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

using namespace sched;

/// `symbol` repeated `count` times: "", "t", "t*15".
static std::string repeated(char symbol, int64_t count) {
  if (count <= 0)
    return "";
  if (count == 1)
    return std::string(1, symbol);
  return fmt::format("{}*{}", symbol, count);
}

std::string sched::megatronLayout(const LaunchPlan &plan) {
  const size_t numStages = plan.stageLayers.size();
  std::vector<std::string> stages;
  for (size_t s = 0; s < numStages; ++s) {
    std::string text = s == 0 ? "E" : "";
    text += repeated('t', plan.stageLayers[s]);
    if (s + 1 == numStages)
      text += repeated('m', plan.mtpLayers) + "L";
    stages.push_back(std::move(text));
  }
  // Runs of equal stages before the last fold into "(X|)*n".
  std::string layout;
  for (size_t s = 0; s < numStages;) {
    if (s + 1 == numStages) {
      layout += stages[s];
      break;
    }
    size_t end = s + 1;
    while (end + 1 < numStages && stages[end] == stages[s])
      ++end;
    const size_t run = end - s;
    layout += run > 1 && !stages[s].empty()
                  ? fmt::format("({}|)*{}", stages[s], run)
                  : [&] {
                      std::string plain;
                      for (size_t i = s; i < end; ++i)
                        plain += stages[i] + "|";
                      return plain;
                    }();
    s = end;
  }
  return layout;
}

/// Why Megatron-Core cannot run `plan`, or "".
static std::string megatronRefusal(const LaunchPlan &plan) {
  static constexpr llvm::StringLiteral kSchedules[] = {
      "no-pp", "combined-1f1b", "1f1b", "interleaved-1f1b",
      "interleaved-combined-1f1b"};
  if (!llvm::is_contained(kSchedules, plan.strategy))
    return fmt::format(
        "Megatron-Core has no {} schedule (it runs 1F1B, interleaved 1F1B "
        "and their combined-1F1B overlap){}",
        plan.strategy,
        plan.replicas > 1 ? ""
                          : "; --emit torchtitan or torch-csv runs it on "
                            "PyTorch's pipelining");
  if (plan.vPlacement || plan.replicas > 1)
    return "Megatron-Core places stage s on rank s mod pp; this plan's "
           "stages run on a V or in two replicas";
  if (plan.recompute == "named")
    return "Megatron-Core has no saved-name recompute policy (a MaxText "
           "remat_policy); plan with --recompute none, selective, full, "
           "block:N or Megatron's modules";
  if (plan.recompute == "op")
    return "Megatron-Core has no per-operator checkpointing policy "
           "(torchtitan's selective_ac_option \"op\"); plan with --recompute "
           "none, selective, full, block:N or Megatron's modules";
  if (llvm::is_contained(plan.recomputeModules, "dots"))
    return "Megatron-Core has no recompute module for JAX's dots policy "
           "(checkpoint_dots_with_no_batch_dims)";
  if (plan.offloadLayers > 0)
    return fmt::format("the plan offloads the activations of {} layers to "
                       "host memory, which this emitter does not state as "
                       "Megatron flags",
                       plan.offloadLayers);
  if (static_cast<int64_t>(plan.stageLayers.size()) != plan.pp * plan.vpp)
    return fmt::format("the plan lists {} stages for pp={} x vpp={}",
                       plan.stageLayers.size(), plan.pp, plan.vpp);
  return "";
}

/// Appends the recompute flags of `plan` to `flags`.
static void recomputeFlags(const LaunchPlan &plan,
                           std::vector<std::string> &flags) {
  if (plan.recompute == "full")
    flags.push_back("--recompute-granularity full --recompute-method uniform "
                    "--recompute-num-layers 1");
  else if (plan.recompute == "block")
    flags.push_back(fmt::format("--recompute-granularity full "
                                "--recompute-method block "
                                "--recompute-num-layers {}",
                                plan.blockLayers));
  else if (plan.recompute == "modules")
    flags.push_back(fmt::format("--recompute-granularity selective "
                                "--recompute-modules {}",
                                fmt::join(plan.recomputeModules, " ")));
}

llvm::Error sched::writeMegatronArgs(llvm::raw_ostream &os,
                                     const LaunchPlan &plan) {
  if (std::string refusal = megatronRefusal(plan); !refusal.empty())
    return llvm::createStringError("--emit megatron: " + refusal);
  std::vector<std::string> flags;
  auto add = [&](std::string flag) { flags.push_back(std::move(flag)); };
  add(fmt::format("--tensor-model-parallel-size {}", plan.tp));
  if (plan.tp > 1 && plan.sequenceParallel)
    add("--sequence-parallel");
  add(fmt::format("--pipeline-model-parallel-size {}", plan.pp));
  add(fmt::format("--context-parallel-size {}", plan.cp));
  if (plan.moe) {
    add(fmt::format("--expert-model-parallel-size {}", plan.ep));
    add(fmt::format("--expert-tensor-parallel-size {}", plan.etp));
  }
  add(fmt::format("--num-layers {}", plan.numLayers));
  if (plan.mtpLayers > 0)
    add(fmt::format("--mtp-num-layers {}", plan.mtpLayers));
  if (plan.pp > 1)
    add(fmt::format("--pipeline-model-parallel-layout \"{}\"",
                    megatronLayout(plan)));
  add(fmt::format("--micro-batch-size {}", plan.microbatchSize));
  add(fmt::format("--global-batch-size {}", plan.globalBatchSequences));
  add(fmt::format("--seq-length {}", plan.seqLen));
  if (plan.strategy == "combined-1f1b" ||
      plan.strategy == "interleaved-combined-1f1b")
    add("--overlap-moe-expert-parallel-comm");
  if (plan.zero >= 3)
    add("--use-torch-fsdp2");
  else if (plan.zero >= 1)
    add("--use-distributed-optimizer");
  if (plan.zero >= 1) {
    add("--overlap-grad-reduce");
    add("--overlap-param-gather");
  }
  if (plan.shardGroup > 0 && plan.shardGroup < plan.dp * plan.cp)
    add(fmt::format("--num-distributed-optimizer-instances {}",
                    plan.dp * plan.cp / plan.shardGroup));
  if (plan.tp > 1 && plan.tensorParallelOverlap)
    add("--tp-comm-overlap");
  if (plan.bf16MainGrads || plan.bf16Moments || plan.bf16FirstMoment)
    add("--use-precision-aware-optimizer");
  if (plan.bf16MainGrads)
    add("--main-grads-dtype bf16");
  if (plan.bf16Moments)
    add("--exp-avg-dtype bf16 --exp-avg-sq-dtype bf16");
  if (plan.bf16FirstMoment)
    add("--exp-avg-dtype bf16");
  recomputeFlags(plan, flags);
  add("--bf16");
  if (plan.precision == "fp8")
    add("--fp8-format e4m3");
  if (plan.fp8ParamGather != "off")
    add(fmt::format("--fp8-recipe {} --fp8-param-gather", plan.fp8ParamGather));
  if (plan.precision == "fp4")
    add("--fp4-format e2m1 --fp4-recipe nvfp4");

  os << "# Megatron-Core flags for " << plan.title << "\n"
     << fmt::format("# {} devices: dp={} x tp={} x pp={} x cp={}; {} "
                    "microbatches of {} per step\n",
                    plan.dp * plan.tp * plan.pp * plan.cp, plan.dp, plan.tp,
                    plan.pp, plan.cp, plan.microbatches, plan.microbatchSize)
     << "# Source this file and pass \"${SCHEDC_MEGATRON_ARGS[@]}\" to "
        "pretrain_gpt.py with the\n# model, data and optimizer flags "
        "(written by schedc plan --emit megatron).\n"
     << "SCHEDC_MEGATRON_ARGS=(\n";
  for (const std::string &flag : flags)
    os << "  " << flag << "\n";
  os << ")\n";
  return llvm::Error::success();
}
