//===- TorchtitanConfig.cpp - a plan as a torchtitan job config -----------===//
//
// Field names and their rules are torchtitan's JobConfig
// (torchtitan/config/job_config.py): the device mesh is
// dp_replicate x dp_shard x cp x tp x pp; expert parallelism borrows from
// dp_shard x cp (etp = tp) or dp_shard x cp x tp (etp = 1); the stages'
// modules are named as torchtitan's decoder models name them
// (tok_embeddings, layers.N, norm, output).
//
//===----------------------------------------------------------------------===//

#include "lib/Export/TorchtitanConfig.h"

#include "llvm/ADT/StringSwitch.h"

#include <fmt/format.h>

using namespace sched;

llvm::StringRef sched::torchScheduleName(llvm::StringRef strategy) {
  return llvm::StringSwitch<llvm::StringRef>(strategy)
      .Case("gpipe", "GPipe")
      .Case("1f1b", "1F1B")
      .Case("interleaved-1f1b", "Interleaved1F1B")
      .Case("looped-bfs", "LoopedBFS")
      .Case("interleaved-zb", "InterleavedZeroBubble")
      .Case("zb-v", "ZBVZeroBubble")
      .Case("dualpipe-v", "DualPipeV")
      .Default("");
}

/// The data-parallel degrees: {replicate, shard}.
struct DataParallelDegrees {
  int64_t replicate = 1;
  int64_t shard = 1;
};

/// How torchtitan's FSDP2 states `plan`'s data parallelism, or why it
/// cannot.
static llvm::Expected<DataParallelDegrees>
dataParallelDegrees(const LaunchPlan &plan) {
  if (plan.zero == 0)
    return DataParallelDegrees{plan.dp, 1};
  if (plan.shardGroup <= 0 || plan.shardGroup >= plan.dp * plan.cp)
    return DataParallelDegrees{1, plan.dp};
  if (plan.shardGroup % plan.cp != 0)
    return llvm::createStringError(fmt::format(
        "hsdp={} splits the cp={} ranks of a replica between shard groups; "
        "torchtitan's data_parallel_shard_degree counts whole replicas",
        plan.shardGroup, plan.cp));
  const int64_t shard = plan.shardGroup / plan.cp;
  return DataParallelDegrees{plan.dp / shard, shard};
}

/// Why torchtitan's device mesh cannot hold `plan`'s experts, or "".
static std::string expertRefusal(const LaunchPlan &plan,
                                 DataParallelDegrees dp) {
  if (!plan.moe || plan.ep == 1)
    return "";
  if (plan.etp != 1 && plan.etp != plan.tp)
    return fmt::format("torchtitan's expert tensor parallelism is 1 or tp; "
                       "the plan has etp={} with tp={}",
                       plan.etp, plan.tp);
  const int64_t borrow = dp.shard * plan.cp * (plan.etp == 1 ? plan.tp : 1);
  const int64_t unit = plan.cp * (plan.etp == 1 ? plan.tp : 1);
  if (plan.ep % unit != 0 || borrow % plan.ep != 0)
    return fmt::format(
        "torchtitan takes expert parallelism from data_parallel_shard_degree "
        "x cp{} = {}, which ep={} must divide as a multiple of {}{}",
        plan.etp == 1 ? " x tp" : "", borrow, plan.ep, unit,
        plan.zero == 0 ? " (with ZeRO-0 the data-parallel ranks replicate "
                         "and shard nothing)"
                       : "");
  return "";
}

/// Why torchtitan cannot run `plan` (apart from its data parallelism and
/// experts), or "".
static std::string torchtitanRefusal(const LaunchPlan &plan,
                                     llvm::StringRef csvPath) {
  if (plan.replicas > 1)
    return "torchtitan runs one chain of pipeline stages; the plan runs two "
           "replicas (DualPipe)";
  if (plan.precision == "fp4")
    return "the plan runs NVFP4 GEMMs (Transformer Engine's recipe), which "
           "this emitter does not state as torchtitan's quantization";
  if (plan.pp > 1 && torchScheduleName(plan.strategy).empty() &&
      csvPath.empty())
    return fmt::format("PyTorch has no {} schedule class and no CSV of the "
                       "plan was written (add torch-csv to --emit)",
                       plan.strategy);
  if (plan.pp == 1 && plan.strategy == "combined-1f1b")
    return "torchtitan has no combined 1F1B (a forward overlapped with "
           "another microbatch's backward without a pipeline)";
  if (plan.mtpLayers > 0)
    return fmt::format("torchtitan's models have no multi-token-prediction "
                       "module; the plan places {} MTP layer(s)",
                       plan.mtpLayers);
  if (plan.offloadLayers > 0)
    return "torchtitan does not offload activations to host memory";
  if (plan.recompute != "none" && plan.recompute != "full" &&
      plan.recompute != "op")
    return "torchtitan's activation checkpointing is none, full, or "
           "selective per op (--recompute op); the plan recomputes " +
           (plan.recompute == "block"
                ? fmt::format("{} layers per stage", plan.blockLayers)
            : plan.recompute == "named"
                ? std::string("by MaxText's saved names")
                : fmt::format("Megatron's modules {}",
                              fmt::join(plan.recomputeModules, ",")));
  return "";
}

/// The module names of each stage, as a TOML array of arrays.
static std::string modulesPerStage(const LaunchPlan &plan) {
  std::string out = "[\n";
  int64_t layer = 0;
  for (size_t s = 0; s < plan.stageLayers.size(); ++s) {
    std::vector<std::string> names;
    if (s == 0)
      names.push_back("\"tok_embeddings\"");
    for (int64_t i = 0; i < plan.stageLayers[s]; ++i)
      names.push_back(fmt::format("\"layers.{}\"", layer++));
    if (s + 1 == plan.stageLayers.size()) {
      names.push_back("\"norm\"");
      names.push_back("\"output\"");
    }
    out += fmt::format("  [{}],\n", fmt::join(names, ", "));
  }
  return out + "]";
}

llvm::Error sched::writeTorchtitanConfig(llvm::raw_ostream &os,
                                         const LaunchPlan &plan,
                                         llvm::StringRef csvPath) {
  auto refuse = [](const std::string &why) {
    return llvm::createStringError("--emit torchtitan: " + why);
  };
  llvm::Expected<DataParallelDegrees> dp = dataParallelDegrees(plan);
  if (!dp)
    return refuse(llvm::toString(dp.takeError()));
  if (std::string why = expertRefusal(plan, *dp); !why.empty())
    return refuse(why);
  if (std::string why = torchtitanRefusal(plan, csvPath); !why.empty())
    return refuse(why);

  const int64_t localBatch =
      plan.globalBatchSequences / (plan.dp > 0 ? plan.dp : 1);
  os << "# torchtitan job config for " << plan.title << "\n"
     << "# Merge into your model's config (model, optimizer, data), then run "
        "train.py\n# with --job.config_file (written by schedc plan --emit "
        "torchtitan).\n\n";
  os << "[training]\n"
     << fmt::format("local_batch_size = {}\n", localBatch)
     << fmt::format("global_batch_size = {}\n", plan.globalBatchSequences)
     << fmt::format("seq_len = {}\n", plan.seqLen) << "\n";
  os << "[parallelism]\n"
     << fmt::format("data_parallel_replicate_degree = {}\n", dp->replicate)
     << fmt::format("data_parallel_shard_degree = {}\n", dp->shard);
  if (plan.zero > 0 && dp->shard > 1)
    // ZeRO-3 gathers the weights again for the backward; ZeRO-1 and 2
    // keep them gathered (FSDP2's nearest: ZeRO-2).
    os << fmt::format("fsdp_reshard_after_forward = \"{}\"\n",
                      plan.zero >= 3 ? "always" : "never");
  os << fmt::format("tensor_parallel_degree = {}\n", plan.tp)
     << fmt::format("enable_async_tensor_parallel = {}\n",
                    plan.tp > 1 && plan.tensorParallelOverlap ? "true"
                                                              : "false")
     << fmt::format("context_parallel_degree = {}\n", plan.cp);
  if (plan.moe)
    os << fmt::format("expert_parallel_degree = {}\n", plan.ep)
       << fmt::format("expert_tensor_parallel_degree = {}\n", plan.etp);
  os << fmt::format("pipeline_parallel_degree = {}\n", plan.pp);
  if (plan.pp > 1) {
    llvm::StringRef name = torchScheduleName(plan.strategy);
    if (name.empty())
      os << "# PyTorch has no class for " << plan.strategy
         << ": its runtime runs the plan's CSV.\n"
         << "pipeline_parallel_schedule = \"_PipelineScheduleRuntime\"\n"
         << fmt::format("pipeline_parallel_schedule_csv = \"{}\"\n",
                        csvPath.str());
    else
      os << fmt::format("pipeline_parallel_schedule = \"{}\"\n", name.str());
    os << fmt::format("pipeline_parallel_microbatch_size = {}\n",
                      plan.microbatchSize)
       << "# The modules of each stage, in stage order (stage s on rank "
       << (plan.vPlacement ? "min(s, 2pp-1-s): a V" : "s mod pp") << ").\n"
       << "module_fqns_per_model_part = " << modulesPerStage(plan) << "\n";
  }
  os << "\n[activation_checkpoint]\n"
     << fmt::format("mode = \"{}\"\n", plan.recompute == "full" ? "full"
                                       : plan.recompute == "none"
                                           ? "none"
                                           : "selective");
  if (plan.recompute == "op")
    os << "selective_ac_option = \"op\"\n";
  return llvm::Error::success();
}
