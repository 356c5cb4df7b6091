//===- PlanCommand.cpp - schedc plan --------------------------------------===//
//
// Answers "which layout and which schedule, and do we need pipeline
// parallelism?" for a model on a cluster (docs/planner.md): runs the search
// of lib/Planner and prints a table (or JSON) with a recommendation;
// --layout evaluates one layout, --explain breaks a candidate into its
// terms, --sweep shows where PP stops paying, --write-plan writes the
// recommended schedule, lowered from a sched.pipeline by the passes and
// verified, with its picture. Exit status 0 with a recommendation, 1 when
// nothing fits, 2 for bad flags, descriptions or impossible layouts.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedDialect.h"
#include "lib/CostModel/CostModel.h"
#include "lib/CostModel/SoftwareStack.h"
#include "lib/Export/MegatronArgs.h"
#include "lib/Export/TorchtitanConfig.h"
#include "lib/Limits/DiagnosticExcerpt.h"
#include "lib/PlanWriter/PlanWriter.h"
#include "lib/Planner/ErrorBands.h"
#include "lib/Planner/FewerDevices.h"
#include "lib/Planner/Planner.h"
#include "lib/Planner/Recommendation.h"
#include "lib/Planner/Sweep.h"
#include "lib/Render/PictureLabels.h"
#include "lib/Render/SweepPlot.h"
#include "lib/Report/PlanReport.h"
#include "lib/Report/WrappedText.h"
#include "tools/schedc/Commands.h"
#include "tools/schedc/OutputPrefix.h"
#include "tools/schedc/PhaseProgress.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

using namespace mlir;
using namespace sched;
namespace cl = llvm::cl;

cl::SubCommand sched::planCommand(
    "plan", "Choose a parallel layout and schedule for a model on a cluster");

static cl::opt<std::string>
    modelFlag("model", cl::sub(planCommand), cl::cat(schedcOptions),
              cl::desc("Model: a preset (llama3-8b, llama3-70b, llama3-405b, "
                       "deepseek-v3, kimi-k2, gpt-oss-120b, gpt-oss-20b, "
                       "gpt3-175b) or a .json file"),
              cl::value_desc("name|file"));
static cl::opt<std::string> clusterFlag(
    "cluster", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Cluster: a preset (h100-ib, h800-ib, a100-ib, h200-ib, "
             "b200-ib, gb200-nvl72, tpu-v4, tpu-v5p; measured: "
             "h200-torch2.11-2026-11-27) or a .json file"),
    cl::value_desc("name|file"));
static cl::opt<int64_t> devicesFlag("devices", cl::sub(planCommand),
                                    cl::cat(schedcOptions),
                                    cl::desc("Devices to train on"));
static cl::opt<int64_t>
    batchTokensFlag("global-batch-tokens", cl::sub(planCommand),
                    cl::cat(schedcOptions),
                    cl::desc("Tokens per step (default: the model's)"));
static cl::opt<int64_t> batchFlag(
    "global-batch", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Sequences per step (instead of --global-batch-tokens)"));
static cl::opt<int64_t>
    seqLenFlag("seq-len", cl::sub(planCommand), cl::cat(schedcOptions),
               cl::desc("Sequence length (default: the model's, else 4096)"));
static cl::opt<std::string>
    precisionFlag("precision", cl::sub(planCommand), cl::cat(schedcOptions),
                  cl::desc("Matmul precision: bf16, fp8 or fp4 (NVFP4, "
                           "Blackwell; default bf16)"),
                  cl::init("bf16"));
static cl::opt<std::string> stackFlag(
    "stack", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("The software stack the run uses: megatron-core, "
             "megatron-lm-2022, torchtitan, deepspeed, maxtext, deepseek-v3, "
             "kimi-k2, "
             "or a .json "
             "stack file; sets the attention kernel, TP overlap, blocking "
             "p2p, allocator, gradient and moment dtypes and the schedules "
             "searched (docs/cost-model.md, \"Software stacks\"); the "
             "flags below override single facts"),
    cl::value_desc("name|file"));
static cl::opt<std::string> attentionFlag(
    "attention", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Attention kernel: flash (fused, the default) or unfused "
             "(batched GEMMs around a softmax over the materialized scores, "
             "as Megatron-LM ran before flash attention)"),
    cl::init("flash"));
static cl::opt<std::string> tpOverlapFlag(
    "tp-overlap", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Tensor-parallel collectives pipelined with the GEMMs beside "
             "them (Transformer Engine userbuffers): on (default) or off"),
    cl::init("on"));
static cl::opt<std::string> p2pOverlapFlag(
    "p2p-overlap", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Pipeline transfers overlap the computation after them: on "
             "(default; PyTorch's runtime, Megatron's interleaved schedule) "
             "or off (each send holds its rank until it completes, as "
             "Megatron-Core's non-interleaved 1F1B)"),
    cl::init("on"));
static cl::opt<std::string> allocatorFlag(
    "allocator", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("PyTorch's CUDA allocator: caching (its default) or expandable "
             "(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True), which "
             "fragments less and so leaves more memory usable"),
    cl::init("caching"));
static cl::opt<std::string> mainGradsFlag(
    "main-grads", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("dtype of the main gradients, reduced and accumulated: fp32 "
             "(Megatron's default) or bf16 (its precision-aware optimizer)"),
    cl::init("fp32"));
static cl::opt<std::string> optimizerMomentsFlag(
    "optimizer-moments", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("dtype of Adam's two moments: fp32 (default), bf16 (as "
             "DeepSeek-V3 trains) or mu-bf16 (the first in bf16, the "
             "second in fp32: optax's mu_dtype, as MaxText recipes set)"),
    cl::init("fp32"));
static cl::opt<std::string> moeDispatchDtypeFlag(
    "moe-dispatch-dtype", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("What the expert dispatch moves under --precision fp8: bf16 "
             "(the layer's activations, quantized by the experts after the "
             "exchange: Megatron-Core's dispatchers; default) or fp8 "
             "(quantized before it, as DeepSeek-V3 trains); the combine is "
             "bf16 either way"),
    cl::init("bf16"));
static cl::opt<std::string> fp8ParamGatherFlag(
    "fp8-param-gather", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Megatron's --fp8-param-gather under --precision fp8: the "
             "parameters are kept and gathered as the FP8 recipe's tensors: "
             "off (BF16; default), tensorwise (current or delayed scaling: 1 "
             "byte, and its transpose on Hopper) or mxfp8 (row- and "
             "column-wise data and their scales: 2.06 bytes; FSDP gathers "
             "one byte a pass, ZeRO-1 BF16)"),
    cl::init("off"));
static cl::opt<std::string> moeDispatcherFlag(
    "moe-dispatcher", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("How MoE tokens reach their experts: flex (DeepEP/HybridEP: "
             "once per rank or node holding an expert; default) or alltoall "
             "(Megatron-Core's all-to-all dispatcher: every top-k copy)"),
    cl::init("flex"));
static cl::opt<std::string> cudaGraphsFlag(
    "cuda-graphs", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("What the run captures in CUDA graphs: none (default), "
             "moe-router (the MoE router and preprocessing), layer (whole "
             "layers) or step (the whole iteration); an MoE block launched "
             "eagerly waits on the host (a stack's fact; docs/cost-model.md)"),
    cl::init("none"));
static cl::opt<int> topFlag("top", cl::sub(planCommand), cl::cat(schedcOptions),
                            cl::desc("Candidates to list (default 10)"),
                            cl::init(10));
static cl::opt<bool> jsonFlag("json", cl::sub(planCommand),
                              cl::cat(schedcOptions),
                              cl::desc("Print the result as JSON"));
static cl::opt<std::string>
    layoutFlag("layout", cl::sub(planCommand), cl::cat(schedcOptions),
               cl::desc("Evaluate this layout instead of searching: "
                        "dp=64,tp=8,pp=16,vpp=2,ep=1,cp=1"),
               cl::value_desc("spec"));
static cl::opt<std::string>
    scheduleFlag("strategy", cl::sub(planCommand), cl::cat(schedcOptions),
                 cl::desc("Only this pipeline strategy (or no-pp, or "
                          "synthesized: a schedule solved for each layout's "
                          "costs and memory, docs/synthesis.md), as "
                          "generate's --strategy names them"),
                 cl::value_desc("name"));
/// The flag's name before it matched generate's (issue 30).
static cl::alias scheduleAlias("schedule", cl::cat(schedcOptions), cl::NotHidden,
                               cl::desc("Alias for --strategy"),
                               cl::aliasopt(scheduleFlag));
static cl::opt<bool> synthesizeFlag(
    "synthesize", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Also search synthesized schedules, solved for each layout's "
             "stage costs, transfer time and memory (docs/synthesis.md); "
             "each solve is bounded in work, not time, so deep pipelines "
             "with many microbatches take minutes (docs/limits.md)"));
static cl::opt<int64_t> microbatchSizeFlag(
    "microbatch-size", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Sequences per microbatch (default: searched)"));
static cl::opt<int> zeroFlag("zero", cl::sub(planCommand),
                             cl::cat(schedcOptions),
                             cl::desc("ZeRO stage 0-3 (default: searched)"));
static cl::opt<std::string> recomputeFlag(
    "recompute", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("none, selective, full, block:N, or Megatron's recompute "
             "modules joined by commas: core_attn, layernorm, mla_up_proj, "
             "mlp, moe_act, shared_experts, moe; dots (JAX's "
             "checkpoint_dots_with_no_batch_dims); or save:NAME,... "
             "(MaxText's remat_policy custom: checkpoint names kept, "
             "NAME=offload in host memory) (default: searched)"));
static cl::opt<bool> explainFlag(
    "explain", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Break the recommended (or --layout) candidate's step time and "
             "memory into their terms"));
static cl::opt<std::string> sweepFlag(
    "sweep", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Show the best step time with and without PP as the cluster's "
             "domain_size or scale_out_bandwidth changes"),
    cl::value_desc("domain_size|scale_out_bandwidth"));
static cl::opt<std::string> sweepValuesFlag(
    "sweep-values", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Comma-separated values for --sweep (default: a range around "
             "the cluster's)"),
    cl::value_desc("list"));
static cl::opt<std::string> sweepPlotFlag(
    "o", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("With --sweep, also draw the sweep as an SVG plot to this file: "
             "step time with and without PP against the swept value"),
    cl::value_desc("file.svg"));
static cl::opt<std::string> writePlanFlag(
    "write-plan", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Write the recommended schedule, lowered from a sched.pipeline "
             "and verified, to PREFIX.mlir and as a runtime plan to "
             "PREFIX.json, and its timeline to PREFIX.svg"),
    cl::value_desc("prefix"));
static cl::opt<std::string> emitPlanFlag(
    "emit", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("With --write-plan, the forms to write, comma-separated: mlir "
             "(PREFIX.mlir), json (runtime plan, PREFIX.json), svg "
             "(timeline, PREFIX.svg), trace (Chrome trace in real time, "
             "PREFIX.trace), torch-csv (PyTorch pipelining CSV with "
             "transfers, PREFIX.csv), megatron (Megatron-Core flags, "
             "PREFIX.megatron.sh), torchtitan (job config, "
             "PREFIX.torchtitan.toml); default mlir,json,svg"),
    cl::value_desc("forms"), cl::init("mlir,json,svg"));
static cl::opt<bool> verifyAllFlag(
    "verify-all", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Prove every listed candidate with the verifier, not only the "
             "recommendation and the best with and without PP"));
static cl::opt<bool> exhaustiveFlag(
    "exhaustive", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Simulate every candidate that fits, pruning none by its bounds "
             "(slow; the answer is the same as the default exact search)"));
static cl::opt<bool> noFewerDevicesFlag(
    "no-fewer-devices", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Do not search device counts below --devices (multiples of 64 "
             "to 512, down to 90%) for a shorter step with devices idle"));
static cl::opt<int> maxEvaluationsFlag(
    "max-lowered", cl::sub(planCommand), cl::cat(schedcOptions),
    cl::desc("Most candidates lowered and simulated (default: no cap, an "
             "exact search); a capped search says its answer is unproved"),
    cl::init(0));

//===----------------------------------------------------------------------===//
// Formatting
//===----------------------------------------------------------------------===//

/// A time with its unit ("16.37 s", "572.2 ms"): PlanReport's.
static std::string seconds(double s) { return formatDuration(s); }

static std::string gb(double bytes) {
  return llvm::formatv("{0:f1}", bytes / 1e9).str();
}

static std::string percent(double ratio) {
  return llvm::formatv("{0:f1}%", 100 * ratio).str();
}

/// How far to trust the recommendation's step time: the held-out errors
/// of its class (ErrorBands.h).
static std::string bandLine(const CostModel &model, const Candidate &rec) {
  const ErrorClass errorClass = errorClassOf(model);
  const ErrorBand band = errorBandFor(errorClass);
  if (!band.known)
    return "none (no held-out runs compiled in)";
  std::string thin;
  if (!band.validated())
    thin = llvm::formatv("; class {0} unvalidated ({1} held-out runs)",
                         errorClass.key(), band.exactRuns)
               .str();
  auto signedPercent = [](double fraction) {
    return llvm::formatv("{0}{1:f0}%", fraction >= 0 ? "+" : "",
                         100 * fraction)
        .str();
  };
  return llvm::formatv("a published step of {0} to {1} ({2} .. {3}) on the "
                       "{4} held-out runs of {5}{6}",
                       seconds(band.stepLow(rec.stepTime)),
                       seconds(band.stepHigh(rec.stepTime)),
                       signedPercent(band.low), signedPercent(band.high),
                       band.runs, band.basis, thin)
      .str();
}

static void printTable(llvm::raw_ostream &os, const CostModel &model,
                       const PlanResult &result,
                       const std::optional<FewerDevices> &fewer) {
  printPlanSetting(os, model);
  printSearchSummary(os, result);
  os << "\n";
  printCandidateTable(os, result.ranked);
  os << "\n";
  printRecommendation(
      os, result,
      result.recommended >= 0
          ? bandLine(model, result.ranked[result.recommended])
          : std::string());
  if (fewer)
    printFewerDevices(os, *fewer, model.getTraining().devices);
}

static llvm::json::Object candidateJson(const Candidate &c,
                                       const ErrorBand &band) {
  const StepBreakdown &t = c.time;
  llvm::json::Object object{
      {"layout",
       llvm::json::Object{
           {"dp", c.layout.dp},
           {"tp", c.layout.tp},
           {"pp", c.layout.pp},
           {"vpp", c.layout.vpp},
           {"ep", c.layout.ep},
           {"etp", c.layout.etp},
           {"cp", c.layout.cp},
           {"zero", c.layout.zero},
           {"hsdp", c.layout.shardGroup},
           {"recompute", recomputeName(c.layout.recompute)},
           {"microbatch_size", c.layout.microbatchSize},
           {"microbatches", c.layout.microbatches},
           {"sequence_parallel", c.layout.sequenceParallel},
           {"stage_split", c.layout.megatronSplit ? "megatron" : "balanced"},
           {"first_stage_layers",
            c.layout.firstStageLayers >= 0
                ? llvm::json::Value(c.layout.firstStageLayers)
                : llvm::json::Value(nullptr)},
           {"last_stage_layers",
            c.layout.lastStageLayers >= 0
                ? llvm::json::Value(c.layout.lastStageLayers)
                : llvm::json::Value(nullptr)},
           {"offload_layers", c.layout.offloadLayers},
           {"text", c.layout.str()}}},
      {"schedule", c.scheduleName()},
      {"step_time_s", c.stepTime},
      {"makespan_s", c.makespan},
      {"mfu", c.mfu},
      {"tflops_per_device", c.tflopsPerDevice},
      {"tokens_per_second_per_device", c.tokensPerSecondPerDevice},
      {"peak_memory_bytes", c.memory.peak},
      {"fits", c.fits},
      {"verdict", c.verdict},
      {"proof_z3_resources", static_cast<int64_t>(c.proofResources)},
      {"bubble_ratio", c.bubbleRatio},
      {"band", band.toJson(c.stepTime, c.tflopsPerDevice)},
      {"breakdown",
       llvm::json::Object{{"compute_s", t.compute},
                          {"bubble_s", t.bubble},
                          {"tensor_parallel_s", t.tensorParallel},
                          {"context_parallel_s", t.contextParallel},
                          {"expert_parallel_s", t.expertParallel},
                          {"host_s", t.host},
                          {"pipeline_parallel_s", t.pipelineParallel},
                          {"data_parallel_s", t.dataParallel},
                          {"optimizer_s", t.optimizer},
                          {"weights_bytes", c.memory.weights},
                          {"gradients_bytes", c.memory.gradients},
                          {"optimizer_state_bytes", c.memory.optimizer},
                          {"activations_bytes", c.memory.activations},
                          {"memory_limit_bytes", c.memory.limit}}},
  };
  if (c.synthesized)
    object["synthesis_gap"] = c.synthesisGap;
  return object;
}

static void printJson(llvm::raw_ostream &os, const CostModel &model,
                      const PlanResult &result,
                      const std::optional<FewerDevices> &fewer) {
  const ErrorClass errorClass = errorClassOf(model);
  const ErrorBand band = errorBandFor(errorClass);
  llvm::json::Array candidates;
  for (const Candidate &c : result.ranked)
    candidates.push_back(candidateJson(c, band));
  llvm::json::Object out{
      {"model", model.getModel().name},
      {"cluster", model.getCluster().name},
      {"devices", model.getTraining().devices},
      {"global_batch_tokens", model.getTraining().globalBatchTokens},
      {"seq_len", model.getTraining().seqLen},
      {"precision", precisionName(model.getTraining().precision)},
      {"fp8_param_gather", fp8ParamsName(model.getTraining().fp8Params)},
      {"stack", model.getTraining().stack.empty()
                    ? llvm::json::Value(nullptr)
                    : llvm::json::Value(model.getTraining().stack)},
      {"error_class", errorClass.toJson()},
      {"band_source", errorBandSource()},
      {"candidates", std::move(candidates)},
      {"recommended", result.recommended >= 0
                          ? llvm::json::Value(candidateJson(
                                result.ranked[result.recommended], band))
                          : llvm::json::Value(nullptr)},
      {"recommended_index", result.recommended},
      {"fewer_devices", fewer ? llvm::json::Value(llvm::json::Object{
                                    {"devices", fewer->devices},
                                    {"best", candidateJson(fewer->best, band)}})
                              : llvm::json::Value(nullptr)},
      {"reason", result.reason},
      {"search", llvm::json::Object{{"considered", result.considered},
                                    {"pruned_memory", result.prunedMemory},
                                    {"pruned_bound", result.prunedBound},
                                    {"pruned_size", result.prunedSize},
                                    {"memory_checked", result.memoryChecked},
                                    {"lowered", result.lowered},
                                    {"verified", result.verified},
                                    {"truncated", result.truncated},
                                    {"left_by_cap", result.leftByCap},
                                    {"seconds", result.seconds}}},
  };
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
}

/// The compute of one microbatch through every stage by operator class,
/// the FLOPs per token, and where the efficiencies come from.
static void explainOperators(llvm::raw_ostream &os, const CostModel &model,
                             const Candidate &c) {
  StageTerms all;
  double weight = 0;
  for (const StageEstimate &s : candidateStages(model, c)) {
    for (const StageTerms *t : {&s.forwardTerms, &s.backwardTerms}) {
      all.matmul += t->matmul;
      all.attention += t->attention;
      all.memoryBound += t->memoryBound;
      all.recompute += t->recompute;
    }
    weight += s.backwardWeight;
  }
  all.matmul += weight;
  const double total =
      all.matmul + all.attention + all.memoryBound + all.recompute;
  os << "compute of one microbatch through every stage, by operator class:\n";
  for (auto [name, value, note] :
       {std::tuple<llvm::StringRef, double, llvm::StringRef>{
            "GEMMs", all.matmul, "forward, data and weight gradients"},
        {"attention core", all.attention, "forward and backward"},
        {"memory-bound", all.memoryBound,
         "norms, activations, casts, permutes, loss"},
        {"recomputation", all.recompute, "the forward run again"}})
    os << llvm::formatv("  {0,-26} {1,9} s {2,6}  {3}\n", name,
                        llvm::formatv("{0:f4}", value).str(),
                        total > 0 ? percent(value / total) : "-", note);
  os << llvm::formatv(
      "FLOPs per token: {0:f1} G model (Megatron's count), {1:f1} G "
      "executed (with recomputation)\n",
      model.modelFlopsPerToken() / 1e9,
      model.hardwareFlopsPerToken(c.layout) / 1e9);
  os << "efficiencies: " << model.getCluster().efficiency.profile
     << " (docs/cost-model.md)\n";
  if (!model.getCluster().efficiency.measuredStack.empty())
    os << "  measured under " << model.getCluster().efficiency.measuredStack
       << "\n";
}

/// The stages per microbatch as the candidate's schedule runs them: the
/// times the simulation (and a written plan's sched.stage ops) use, with
/// the expert all-to-all an overlapping schedule hides taken out, beside
/// the stage alone where that differs.
static void explainStages(llvm::raw_ostream &os, const CostModel &model,
                          const Candidate &c) {
  std::vector<StageEstimate> stages = candidateStages(model, c);
  llvm::Expected<Schedule> planned = buildSchedule(model, c);
  if (!planned) {
    llvm::consumeError(planned.takeError());
    return;
  }
  const std::vector<StageCost> &run = planned->stageCosts;
  bool hides = false;
  for (size_t s = 0; s < stages.size() && s < run.size(); ++s)
    hides |= std::fabs(run[s].forward - stages[s].forward) > 1e-12 ||
             std::fabs(run[s].backwardInput - stages[s].backwardInput) > 1e-12;
  os << fmt::format("stages (per microbatch, one device; F, I, W as {} runs "
                    "them{}):\n",
                    c.scheduleName().str(),
                    hides ? ", the expert all-to-all hidden under the "
                            "overlapped partner; alone in ()"
                          : "");
  os << fmt::format("  {:>5} {:>8} {:>19} {:>19} {:>9} {:>11} {:>10}\n",
                    "stage", "layers", "F (ms)", "I (ms)", "W (ms)", "act (MB)",
                    "static (GB)");
  auto withAlone = [&](double asRun, double alone) {
    std::string text = fmt::format("{:.2f}", asRun * 1e3);
    if (hides)
      text += fmt::format(" ({:.2f})", alone * 1e3);
    return text;
  };
  for (size_t s = 0; s < stages.size() && s < run.size(); ++s) {
    const StageEstimate &e = stages[s];
    os << fmt::format(
        "  {:>5} {:>8} {:>19} {:>19} {:>9.2f} {:>11} {:>10.1f}\n", s,
        e.numLayers == 0 ? std::string("-")
                         : fmt::format("{}-{}", e.firstLayer,
                                       e.firstLayer + e.numLayers - 1),
        withAlone(run[s].forward, e.forward),
        withAlone(run[s].backwardInput, e.backwardInput),
        run[s].backwardWeight * 1e3,
        groupThousands(std::llround(e.activationBytes / 1e6)),
        e.staticBytes() / 1e9);
  }
}

static void explain(llvm::raw_ostream &os, const CostModel &model,
                    const Candidate &c) {
  os << "\nexplain: " << c.layout.str() << " zero=" << c.layout.zero
     << " recompute=" << recomputeName(c.layout.recompute) << " microbatch "
     << c.layout.microbatchSize << " x " << c.layout.microbatches << ", "
     << c.scheduleName() << "\n";
  const StepBreakdown &t = c.time;
  const double step = c.stepTime;
  if (!c.evaluated)
    os << "step time: not simulated (the schedule does not fit in memory)\n";
  auto term = [&](llvm::StringRef name, double value, llvm::StringRef note) {
    os << llvm::formatv("  {0,-26} {1,9} s {2,6}  {3}\n", name,
                        llvm::formatv("{0:f4}", value).str(),
                        step > 0 ? percent(value / step) : "-", note);
  };
  if (c.evaluated) {
    os << "step time on the device that bounds it:\n";
    term("compute", t.compute, "matmuls, attention, memory-bound, recompute");
    term("tensor parallel", t.tensorParallel,
         "sequence-parallel all-gather "
         "and reduce-scatter");
    term("context parallel", t.contextParallel,
         "ring attention not hidden "
         "under attention");
    term("expert parallel", t.expertParallel,
         "all-to-all dispatch and combine");
    term("host", t.host, "MoE blocks waiting on their eager launches");
    term("pipeline bubble", t.bubble, "idle in the simulated schedule");
    term("pipeline transfers", t.pipelineParallel,
         "what send/recv add to the makespan");
    term("data parallel", t.dataParallel,
         "gradient reduce / weight gather not hidden");
    term("optimizer", t.optimizer, "the Adam update, memory-bound");
    os << llvm::formatv("  {0,-26} {1,9} s   (makespan {2} s)\n", "step",
                        llvm::formatv("{0:f4}", step).str(),
                        llvm::formatv("{0:f4}", c.makespan).str());
    os << llvm::formatv("  MFU {0}, {1:f0} TFLOP/s and {2:f0} tokens/s per "
                        "device\n",
                        percent(c.mfu), c.tflopsPerDevice,
                        c.tokensPerSecondPerDevice);
  }
  explainOperators(os, model, c);
  const MemoryBreakdown &m = c.memory;
  os << "memory of the fullest device:\n";
  for (auto [name, value] :
       {std::pair<llvm::StringRef, double>{"weights", m.weights},
        {"gradients", m.gradients},
        {"optimizer state", m.optimizer},
        {"working set (backward)", m.workingSet},
        {"activations (schedule)", m.activations}})
    os << llvm::formatv("  {0,-26} {1,9} GB\n", name, gb(value));
  os << llvm::formatv("  {0,-26} {1,9} GB of {2} GB usable{3}\n", "peak",
                      gb(m.peak), gb(m.limit), c.fits ? "" : " (does not fit)");
  const Efficiency &e = model.getCluster().efficiency;
  const bool expandable = model.getTraining().expandableSegments;
  os << llvm::formatv(
      "  usable = ({0} GB memory - {1} GB reserved) x {2:f3} ({3})\n",
      gb(model.getCluster().hbmBytes), gb(e.reservedMemory),
      expandable ? e.usableMemoryExpandable : e.usableMemory,
      !e.measuredAllocator ? "XLA's compile-time HBM budget"
      : expandable         ? "expandable-segments allocator"
                           : "caching allocator");
  if (!model.getCluster().memoryNote.empty())
    os << "  memory: " << model.getCluster().memoryNote << "\n";
  if (!c.fits)
    os << "  overflow: " << c.overflow << "\n";
  explainStages(os, model, c);
}

//===----------------------------------------------------------------------===//
// The recommended plan, through the IR
//===----------------------------------------------------------------------===//

/// The forms --emit names with their file suffixes, in the order they are
/// written.
static constexpr std::pair<llvm::StringLiteral, llvm::StringLiteral>
    kPlanForms[] = {{"mlir", ".mlir"},
                    {"json", ".json"},
                    {"svg", ".svg"},
                    {"trace", ".trace"},
                    {"torch-csv", ".csv"},
                    {"megatron", ".megatron.sh"},
                    {"torchtitan", ".torchtitan.toml"}};

/// The forms of --emit, or why it names one we do not write.
static llvm::Expected<llvm::SmallVector<llvm::StringRef>> planForms() {
  llvm::SmallVector<llvm::StringRef> forms;
  llvm::StringRef(emitPlanFlag).split(forms, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef &form : forms) {
    form = form.trim();
    if (!llvm::any_of(kPlanForms,
                      [&](const auto &known) { return known.first == form; }))
      return llvm::createStringError(
          "--emit: unknown form '" + form.take_front(64) +
          "'; expected mlir, json, svg, trace, torch-csv, megatron or "
          "torchtitan");
  }
  if (forms.empty())
    return llvm::createStringError("--emit: no form given");
  return forms;
}

/// Writes `c` lowered and verified in the forms --emit asks for, to
/// PREFIX plus each form's suffix (lib/PlanWriter/PlanWriter.h, and
/// lib/Export for the launchers' forms). A launcher's form the plan cannot
/// be stated in is refused with an error naming why, after the others are
/// written (exit status 2).
static int writePlanFiles(const CostModel &model, const Candidate &c,
                          llvm::StringRef prefix) {
  llvm::SmallVector<llvm::StringRef> forms = llvm::cantFail(planForms());
  MLIRContext context;
  context.getOrLoadDialect<SchedDialect>();
  installDiagnosticPrinter(context);
  std::map<std::string, std::unique_ptr<llvm::ToolOutputFile>> files;
  for (const auto &[form, suffix] : kPlanForms) {
    if (!llvm::is_contained(forms, form))
      continue;
    std::string error;
    files[form.str()] = openOutputFile((prefix + suffix).str(), &error);
    if (!files[form.str()])
      return usageError(error);
  }
  auto stream = [&](llvm::StringRef form) -> llvm::raw_ostream * {
    auto it = files.find(form.str());
    return it == files.end() ? nullptr : &it->second->os();
  };
  std::vector<std::string> refusals;
  PlanOutputs outputs{stream("mlir"),  stream("json"),      stream("svg"),
                      stream("trace"), stream("torch-csv"), &refusals};
  int status = ExitOk;
  llvm::handleAllErrors(
      writePlan(context, model, c, outputs),
      [&](const PlanDiagnosedError &diagnosed) {
        status = diagnosed.rejected ? ExitViolated : ExitUsage;
      },
      [&](const llvm::ErrorInfoBase &other) {
        status = usageError(other.message());
      });
  if (status != ExitOk)
    return status;
  // A form the plan cannot be stated in is refused, naming why; the
  // others are written.
  std::vector<std::string> refused;
  for (const std::string &refusal : refusals) {
    refused.push_back("torch-csv");
    status = usageError(refusal);
  }
  const LaunchPlan launch = launchPlan(model, c);
  auto launcher = [&](llvm::StringRef form, llvm::Error written) {
    if (!written)
      return;
    refused.push_back(form.str());
    status = usageError(llvm::toString(std::move(written)));
  };
  if (llvm::raw_ostream *os = stream("megatron"))
    launcher("megatron", writeMegatronArgs(*os, launch));
  const bool csvWritten =
      stream("torch-csv") && !llvm::is_contained(refused, "torch-csv");
  if (llvm::raw_ostream *os = stream("torchtitan"))
    launcher("torchtitan",
             writeTorchtitanConfig(*os, launch,
                                   csvWritten ? (prefix + ".csv").str() : ""));
  std::vector<std::string> written;
  for (const auto &[form, suffix] : kPlanForms) {
    auto it = files.find(form.str());
    if (it == files.end() || llvm::is_contained(refused, form.str()))
      continue;
    if (int keep = keepOutput(*it->second))
      return keep;
    written.push_back((prefix + suffix).str());
  }
  if (written.empty())
    return status;
  // With --json, standard output holds the JSON document alone.
  (jsonFlag ? llvm::errs() : llvm::outs())
      << wrapText("wrote " + llvm::join(written, ", ") +
                  " (verified under rendezvous " +
                  (gathersParameters(c) ? "with ZeRO-3's gathers; its memory "
                                          "is the planner's, against "
                                        : "against ") +
                  gb(model.memoryLimit()) + " GB)");
  return status;
}

//===----------------------------------------------------------------------===//
// The command
//===----------------------------------------------------------------------===//

static std::string checkPlanFlags() {
  for (const cl::Option *flag : {static_cast<const cl::Option *>(&modelFlag),
                                 static_cast<const cl::Option *>(&clusterFlag),
                                 static_cast<const cl::Option *>(&devicesFlag)})
    if (flag->getNumOccurrences() == 0)
      return "--" + flag->ArgStr.str() + " is required";
  if (devicesFlag < 1 || devicesFlag > (int64_t(1) << 24))
    return "--devices must be in [1, 2^24], got " + std::to_string(devicesFlag);
  if (batchTokensFlag.getNumOccurrences() && batchFlag.getNumOccurrences())
    return "give --global-batch-tokens or --global-batch, not both";
  if (batchTokensFlag.getNumOccurrences() &&
      (batchTokensFlag < 1 || batchTokensFlag > (int64_t(1) << 40)))
    return "--global-batch-tokens must be in [1, 2^40]";
  if (batchFlag.getNumOccurrences() &&
      (batchFlag < 1 || batchFlag > (int64_t(1) << 30)))
    return "--global-batch must be in [1, 2^30]";
  if (seqLenFlag.getNumOccurrences() &&
      (seqLenFlag < 1 || seqLenFlag > (int64_t(1) << 24)))
    return "--seq-len must be in [1, 2^24]";
  if (!parsePrecision(precisionFlag))
    return "--precision must be bf16, fp8 or fp4, got '" +
           clipForMessage(precisionFlag) + "'";
  if (mainGradsFlag != "fp32" && mainGradsFlag != "bf16")
    return "--main-grads must be fp32 or bf16, got '" +
           clipForMessage(mainGradsFlag) + "'";
  if (!parseOptimizerMoments(optimizerMomentsFlag))
    return "--optimizer-moments must be fp32, bf16 or mu-bf16, got '" +
           clipForMessage(optimizerMomentsFlag) + "'";
  for (const cl::opt<std::string> *flag : {&tpOverlapFlag, &p2pOverlapFlag})
    if (*flag != "on" && *flag != "off")
      return "--" + flag->ArgStr.str() + " must be on or off, got '" +
             llvm::StringRef(*flag).take_front(64).str() + "'";
  if (moeDispatchDtypeFlag != "bf16" && moeDispatchDtypeFlag != "fp8")
    return "--moe-dispatch-dtype must be bf16 or fp8, got '" +
           clipForMessage(moeDispatchDtypeFlag) + "'";
  const std::optional<Fp8Params> fp8Params = parseFp8Params(fp8ParamGatherFlag);
  if (!fp8Params)
    return "--fp8-param-gather must be off, tensorwise or mxfp8, got '" +
           clipForMessage(fp8ParamGatherFlag) + "'";
  if (*fp8Params != Fp8Params::None &&
      parsePrecision(precisionFlag) != Precision::FP8)
    return "--fp8-param-gather " + fp8ParamGatherFlag +
           " needs --precision fp8";
  if (!parseMoeDispatcher(moeDispatcherFlag))
    return "--moe-dispatcher must be flex or alltoall, got '" +
           clipForMessage(moeDispatcherFlag) + "'";
  if (!parseCudaGraphs(cudaGraphsFlag))
    return "--cuda-graphs must be none, moe-router, layer or step, got '" +
           clipForMessage(cudaGraphsFlag) + "'";
  if (allocatorFlag != "caching" && allocatorFlag != "expandable")
    return "--allocator must be caching or expandable, got '" +
           llvm::StringRef(allocatorFlag).take_front(64).str() + "'";
  if (!parseAttentionKernel(attentionFlag))
    return "--attention must be flash or unfused, got '" +
           clipForMessage(attentionFlag) + "'";
  if (topFlag < 1)
    return "--top must be at least 1";
  if (maxEvaluationsFlag.getNumOccurrences() && maxEvaluationsFlag < 1)
    return "--max-lowered must be at least 1";
  if (zeroFlag.getNumOccurrences() && (zeroFlag < 0 || zeroFlag > 3))
    return "--zero must be 0, 1, 2 or 3";
  if (recomputeFlag.getNumOccurrences())
    if (llvm::Expected<Recompute> recompute = parseRecompute(recomputeFlag);
        !recompute)
      return "--recompute: " + llvm::toString(recompute.takeError());
  if (microbatchSizeFlag.getNumOccurrences() &&
      (microbatchSizeFlag < 1 || microbatchSizeFlag > (1 << 20)))
    return "--microbatch-size must be in [1, 2^20]";
  if (scheduleFlag.getNumOccurrences() && !parseStrategy(scheduleFlag) &&
      scheduleFlag != "synthesized")
    return "unknown --strategy '" + clipForMessage(scheduleFlag) +
           "'; expected one of: " + strategyNames() + ", synthesized";
  if (sweepFlag.getNumOccurrences() && !parseSweepAxis(sweepFlag))
    return "--sweep must be domain_size or scale_out_bandwidth, got '" +
           clipForMessage(sweepFlag) + "'";
  if (sweepValuesFlag.getNumOccurrences() && !sweepFlag.getNumOccurrences())
    return "--sweep-values needs --sweep";
  if (sweepFlag.getNumOccurrences() && layoutFlag.getNumOccurrences())
    return "--sweep searches; it does not take --layout";
  // A sweep prints its table (and -o draws it); --json and --write-plan
  // were ignored silently.
  if (sweepFlag.getNumOccurrences() && jsonFlag)
    return "--sweep prints a table (-o FILE.svg draws it); it does not take "
           "--json";
  if (sweepFlag.getNumOccurrences() && writePlanFlag.getNumOccurrences())
    return "--sweep compares best layouts along a cluster figure and writes "
           "no plan; run without --sweep to --write-plan one";
  if (sweepPlotFlag.getNumOccurrences() && !sweepFlag.getNumOccurrences())
    return "-o draws a sweep; it needs --sweep (--write-plan writes a plan)";
  if (sweepPlotFlag.getNumOccurrences() && sweepPlotFlag.empty())
    return "-o: the file name is empty";
  if (writePlanFlag.getNumOccurrences())
    if (std::string problem = checkOutputPrefix(writePlanFlag);
        !problem.empty())
      return "--write-plan: " + problem;
  if (emitPlanFlag.getNumOccurrences() && !writePlanFlag.getNumOccurrences())
    return "--emit names the forms of --write-plan; give --write-plan PREFIX";
  if (llvm::Expected<llvm::SmallVector<llvm::StringRef>> forms = planForms();
      !forms)
    return llvm::toString(forms.takeError());
  return "";
}

/// The stack --stack names, its schedule names checked against the
/// strategies there are.
static llvm::Expected<SoftwareStack> loadStack() {
  llvm::Expected<SoftwareStack> stack = loadSoftwareStack(stackFlag);
  if (!stack)
    return stack.takeError();
  for (const std::vector<std::string> *names :
       {&stack->schedules, &stack->blockingSendSchedules})
    for (const std::string &name : *names)
      if (name != "*" && !parseStrategy(name))
        return llvm::createStringError(
            llvm::formatv("unknown schedule '{0}' (known: {1})",
                          llvm::StringRef(name).take_front(32),
                          strategyNames())
                .str());
  return stack;
}

static PlanOptions planOptions() {
  PlanOptions options;
  options.synthesize = synthesizeFlag;
  if (scheduleFlag == "synthesized")
    options.synthesize = options.onlySynthesized = true;
  else if (scheduleFlag.getNumOccurrences())
    options.strategy = *parseStrategy(scheduleFlag);
  if (microbatchSizeFlag.getNumOccurrences())
    options.microbatchSize = microbatchSizeFlag;
  if (zeroFlag.getNumOccurrences())
    options.zero = zeroFlag;
  if (recomputeFlag.getNumOccurrences())
    options.recompute = llvm::cantFail(parseRecompute(recomputeFlag));
  options.top = topFlag;
  options.verifyAll = verifyAllFlag;
  options.maxEvaluations = maxEvaluationsFlag;
  options.exhaustive = exhaustiveFlag;
  return options;
}

/// A swept value as the table and the plot write it.
static std::string sweptValueName(SweepAxis axis, double value) {
  if (axis == SweepAxis::DomainSize)
    return llvm::formatv("{0:f0}", value).str();
  return llvm::formatv("{0:f2} GB/s", value / 1e9).str();
}

/// Bytes/s in GB/s as a tick writes it: 0.1, 1, 12.5.
static std::string gigabytesTick(double bytesPerSecond) {
  std::string text = llvm::formatv("{0:f2}", bytesPerSecond / 1e9).str();
  while (text.back() == '0')
    text.pop_back();
  if (text.back() == '.')
    text.pop_back();
  return text;
}

/// The sweep as a plot: both lines, the crossover marked.
static SweepPlotData sweepPlotData(const CostModel &costs, SweepAxis axis,
                                   llvm::ArrayRef<SweepPoint> points,
                                   std::optional<double> stops,
                                   llvm::StringRef verdict) {
  SweepPlotData data;
  const TrainingSpec &t = costs.getTraining();
  data.title =
      llvm::formatv("{0} on {1} x {2} ({3}): best step time by {4}",
                    costs.getModel().name, t.devices,
                    costs.getCluster().deviceName, costs.getCluster().name,
                    axis == SweepAxis::DomainSize ? "domain size"
                                                  : "scale-out bandwidth")
          .str();
  data.xLabel = axis == SweepAxis::DomainSize
                    ? "high-bandwidth domain size (devices)"
                    : "scale-out bandwidth (GB/s per device, one direction)";
  data.yLabel = "step time (s)";
  SweepPlotSeries flat{"best without PP", "#d62728", {}};
  SweepPlotSeries piped{"best with PP", "#1f77b4", {}};
  for (const SweepPoint &point : points) {
    data.xValues.push_back(point.value);
    data.xTickLabels.push_back(axis == SweepAxis::DomainSize
                                   ? sweptValueName(axis, point.value)
                                   : gigabytesTick(point.value));
    flat.values.push_back(point.withoutPipeline
                              ? std::optional(point.withoutPipeline->stepTime)
                              : std::nullopt);
    piped.values.push_back(point.withPipeline
                               ? std::optional(point.withPipeline->stepTime)
                               : std::nullopt);
  }
  data.series = {flat, piped};
  // Where PP never paid, nothing stops: no mark at the first value.
  if (stops && *stops != points.front().value) {
    data.crossover = stops;
    data.crossoverLabel = "PP stops paying at " + sweptValueName(axis, *stops);
  }
  data.note = verdict.str();
  return data;
}

static int runSweep(const ModelSpec &model, const ClusterSpec &cluster,
                    const TrainingSpec &training) {
  const SweepAxis axis = *parseSweepAxis(sweepFlag);
  std::vector<double> values;
  if (sweepValuesFlag.getNumOccurrences()) {
    llvm::SmallVector<llvm::StringRef> items;
    llvm::StringRef(sweepValuesFlag).split(items, ',', -1, false);
    for (llvm::StringRef item : items) {
      double v = 0;
      if (item.trim().getAsDouble(v) || !(v > 0) || !std::isfinite(v))
        return usageError("--sweep-values: '" + clipForMessage(item) +
                          "' is not a positive number");
      if (llvm::Error error = checkSweepValue(axis, v))
        return usageError("--sweep-values: " +
                          llvm::toString(std::move(error)));
      values.push_back(v);
    }
    // In increasing order: where PP stops paying reads along it.
    llvm::sort(values);
    values.erase(std::unique(values.begin(), values.end()), values.end());
  } else {
    values = defaultSweepValues(axis, cluster, training);
  }
  // The plot's file is opened before the search: a path that cannot be
  // written is a usage error now, not after it.
  std::unique_ptr<llvm::ToolOutputFile> plotFile;
  if (sweepPlotFlag.getNumOccurrences()) {
    std::string error;
    plotFile = openOutputFile(sweepPlotFlag, &error);
    if (!plotFile)
      return usageError("-o: " + error);
  }
  PhaseProgress progress;
  progress.begin(fmt::format("sweeping {} over {} values", sweepFlag.getValue(),
                             values.size()));
  PlanOptions options = planOptions();
  options.progress = [&progress](size_t done, size_t total) {
    progress.update(done, total);
  };
  llvm::Expected<std::vector<SweepPoint>> points =
      sweep(model, cluster, training, axis, values, options);
  progress.end();
  if (!points)
    return usageError(llvm::toString(points.takeError()));
  llvm::raw_ostream &os = llvm::outs();
  const CostModel costs(model, cluster, training);
  printPlanSetting(os, costs);
  os << llvm::formatv("sweep of {0}: best step time with and without PP\n",
                      sweepFlag);
  os << llvm::formatv("{0,20} {1,12} {2,10} {3,12} {4,10}  {5}\n", sweepFlag,
                      "no PP (s)", "MFU", "PP (s)", "MFU", "PP gains");
  auto cell = [](const std::optional<Candidate> &c) {
    // Seconds, as the heading says, without a unit of their own.
    return c ? std::make_pair(fmt::format("{:.{}f}", c->stepTime,
                                          c->stepTime >= 1 ? 2 : 4),
                              percent(c->mfu))
             : std::make_pair(std::string("no fit"), std::string("-"));
  };
  for (const SweepPoint &point : *points) {
    auto [flatTime, flatMfu] = cell(point.withoutPipeline);
    auto [ppTime, ppMfu] = cell(point.withPipeline);
    std::string gain = "-";
    if (point.withoutPipeline && point.withPipeline)
      gain = percent(
          point.withoutPipeline->stepTime / point.withPipeline->stepTime - 1);
    else if (point.withPipeline)
      gain = "PP needed";
    os << llvm::formatv("{0,20} {1,12} {2,10} {3,12} {4,10}  {5}\n",
                        sweptValueName(axis, point.value), flatTime, flatMfu,
                        ppTime, ppMfu, gain);
  }
  os << "best layouts:\n";
  auto layoutName = [](const std::optional<Candidate> &c,
                       double slice) -> std::string {
    if (!c)
      return "none fits";
    std::string name = c->layout.str() + " " + c->scheduleName().str();
    if (slice > 0)
      name +=
          " (on slices of " + std::to_string(static_cast<int64_t>(slice)) + ")";
    return name;
  };
  for (const SweepPoint &point : *points)
    os << llvm::formatv(
        "{0,20}  no PP: {1}; PP: {2}\n", sweptValueName(axis, point.value),
        layoutName(point.withoutPipeline, point.withoutPipelineSlice),
        layoutName(point.withPipeline, point.withPipelineSlice));

  const std::optional<double> stops =
      pipelineStopsPaying(*points, kRecommendationTie);
  const std::string tie = percent(kRecommendationTie);
  std::string verdict;
  const bool nothingFits =
      llvm::none_of(*points, [](const SweepPoint &point) {
        return point.withoutPipeline || point.withPipeline;
      });
  if (nothingFits)
    verdict = "no layout fits at any value of the sweep";
  else if (!stops)
    verdict = "PP pays over the whole range: at " +
              sweptValueName(axis, points->back().value) +
              (points->back().withoutPipeline
                   ? " the best layout without PP is still more than " + tie +
                         " slower"
                   : " no layout without PP fits");
  else if (*stops == points->front().value)
    verdict = "PP does not pay anywhere in the range: the best layout "
              "without PP is within " +
              tie + " of the best with PP at every value";
  else
    verdict = "PP stops paying at " + sweptValueName(axis, *stops) +
              ": from there on the best layout without PP is within " + tie +
              " of the best with PP (the planner's tie)";
  os << verdict << "\n";
  if (!plotFile)
    return ExitOk;
  writeSweepPlot(plotFile->os(),
                 sweepPlotData(costs, axis, *points, stops, verdict));
  return keepOutput(*plotFile);
}

/// Plans for one cluster: prints the table (or JSON), explains and writes
/// the plan as asked. `planPrefix` is where --write-plan goes for it.
static int planOne(const ModelSpec &model, const ClusterSpec &cluster,
                   const TrainingSpec &training, llvm::StringRef planPrefix,
                   std::optional<PlanResult> &out) {
  CostModel costs(model, cluster, training);
  PlanOptions options = planOptions();
  if (layoutFlag.getNumOccurrences()) {
    llvm::Expected<Layout> layout = parseLayout(layoutFlag);
    if (!layout)
      return usageError(llvm::toString(layout.takeError()));
    if (recomputeFlag.getNumOccurrences())
      layout->recompute = *options.recompute;
    options.layout = *layout;
  }
  // A line on stderr per phase that runs past 2 s (PhaseProgress.h).
  PhaseProgress progress;
  progress.begin("searching the layouts of " + model.name + " on " +
                 cluster.name);
  options.progress = [&progress](size_t done, size_t total) {
    progress.update(done, total);
  };
  llvm::Expected<PlanResult> result = plan(costs, options);
  progress.end();
  if (!result) {
    const int status = usageError(llvm::toString(result.takeError()));
    // No layout of this count at all: say which smaller count has one.
    if (!options.layout && !noFewerDevicesFlag)
      if (std::optional<FewerDevices> fewer =
              suggestFewerDevices(model, cluster, training, options, INFINITY))
        llvm::errs() << llvm::formatv(
            "schedc: note: {0} of the {1} devices ({2} idle) run {3} {4} in "
            "{5}, MFU {6}\n",
            fewer->devices, training.devices, training.devices - fewer->devices,
            fewer->best.layout.str(), fewer->best.scheduleName(),
            seconds(fewer->best.stepTime), percent(fewer->best.mfu));
    return status;
  }

  // A count that factors badly: the best on fewer devices, where it is
  // faster (not with --layout, which fixes the count's factors).
  std::optional<FewerDevices> fewer;
  if (!options.layout && !noFewerDevicesFlag) {
    const double allDevices =
        result->ranked.empty() ? INFINITY : result->ranked.front().stepTime;
    progress.begin("searching fewer devices on " + cluster.name);
    fewer = suggestFewerDevices(model, cluster, training, options, allDevices);
    progress.end();
  }
  llvm::raw_ostream &os = llvm::outs();
  if (jsonFlag)
    printJson(os, costs, *result, fewer);
  else
    printTable(os, costs, *result, fewer);
  out = *result;

  if (result->ranked.empty()) {
    llvm::errs() << "schedc: no candidate fits in memory";
    if (!result->overflowing.empty())
      llvm::errs() << "; the nearest, "
                   << result->overflowing.front().layout.str() << " "
                   << result->overflowing.front().scheduleName() << ": "
                   << result->overflowing.front().overflow;
    llvm::errs() << "\n";
    if (explainFlag && !jsonFlag && !result->overflowing.empty() &&
        result->overflowing.front().memory.limit > 0)
      explain(os, costs, result->overflowing.front());
    return ExitViolated;
  }
  const Candidate &chosen = result->ranked[std::max(result->recommended, 0)];
  if (explainFlag && !jsonFlag)
    explain(os, costs, chosen);
  if (!planPrefix.empty()) {
    progress.begin("lowering, verifying and writing the plan for " +
                   cluster.name);
    return writePlanFiles(costs, chosen, planPrefix);
  }
  return ExitOk;
}

int sched::runPlan() {
  if (std::string problem = checkPlanFlags(); !problem.empty())
    return usageError(problem);
  llvm::Expected<ModelSpec> model = loadModelSpec(modelFlag);
  if (!model)
    return usageError(llvm::toString(model.takeError()));
  // A HuggingFace config: which of its fields were used, and which not.
  if (!model->importNote.empty())
    llvm::errs() << "schedc: note: " << model->importNote << "\n";
  std::vector<ClusterSpec> clusters;
  llvm::SmallVector<llvm::StringRef> names;
  llvm::StringRef(clusterFlag).split(names, ',', -1, /*KeepEmpty=*/false);
  if (names.empty())
    return usageError("--cluster: expected a preset name or a .json file");
  for (llvm::StringRef name : names) {
    llvm::Expected<ClusterSpec> cluster = loadClusterSpec(name.trim());
    if (!cluster)
      return usageError(llvm::toString(cluster.takeError()));
    clusters.push_back(*cluster);
  }
  if (clusters.size() > 1 && (jsonFlag || sweepFlag.getNumOccurrences()))
    return usageError("--json and --sweep take one --cluster");

  TrainingSpec training;
  training.devices = devicesFlag;
  training.seqLen = seqLenFlag.getNumOccurrences() ? seqLenFlag
                    : model->seqLen > 0            ? model->seqLen
                                                   : 4096;
  training.precision = *parsePrecision(precisionFlag);
  training.fp8Params = *parseFp8Params(fp8ParamGatherFlag);
  std::optional<SoftwareStack> stack;
  if (stackFlag.getNumOccurrences()) {
    llvm::Expected<SoftwareStack> loaded = loadStack();
    if (!loaded)
      return usageError("--stack: " + llvm::toString(loaded.takeError()));
    stack = std::move(*loaded);
    stack->apply(training);
  }
  // A flag given overrides the stack's fact; without a stack every flag
  // (given or at its default) sets its fact.
  auto sets = [&](const cl::Option &flag) {
    return !stack || flag.getNumOccurrences() > 0;
  };
  if (sets(attentionFlag))
    training.attention = *parseAttentionKernel(attentionFlag);
  if (sets(tpOverlapFlag))
    training.tensorParallelOverlap = tpOverlapFlag == "on";
  if (sets(allocatorFlag))
    training.expandableSegments = allocatorFlag == "expandable";
  if (sets(moeDispatcherFlag))
    training.moeDispatcher = *parseMoeDispatcher(moeDispatcherFlag);
  if (sets(cudaGraphsFlag))
    training.cudaGraphs = *parseCudaGraphs(cudaGraphsFlag);
  if (sets(p2pOverlapFlag))
    training.blockingSendSchedules =
        p2pOverlapFlag == "off" ? std::vector<std::string>{"*"}
                                : std::vector<std::string>{};
  if (sets(mainGradsFlag))
    training.mainGradientBytes = mainGradsFlag == "bf16" ? 2 : 4;
  if (sets(optimizerMomentsFlag))
    training.optimizerMomentBytes =
        *parseOptimizerMoments(optimizerMomentsFlag);
  if (sets(moeDispatchDtypeFlag))
    training.fp8ExpertDispatch = moeDispatchDtypeFlag == "fp8";
  if (stack && scheduleFlag.getNumOccurrences() &&
      !training.runsSchedule(scheduleFlag))
    return usageError(llvm::formatv("--strategy {0}: stack {1} does not run "
                                    "it (its schedules: {2})",
                                    scheduleFlag.getValue(), stack->name,
                                    llvm::join(stack->schedules, ", "))
                          .str());
  if (batchTokensFlag.getNumOccurrences())
    training.globalBatchTokens = batchTokensFlag;
  else if (batchFlag.getNumOccurrences())
    training.globalBatchTokens = batchFlag * training.seqLen;
  else if (model->globalBatchTokens > 0)
    training.globalBatchTokens = model->globalBatchTokens;
  else
    return usageError("the model names no global batch: give "
                      "--global-batch-tokens or --global-batch");

  if (sweepFlag.getNumOccurrences())
    return runSweep(*model, clusters.front(), training);

  std::vector<std::optional<PlanResult>> results(clusters.size());
  int status = ExitOk;
  for (size_t i = 0; i < clusters.size(); ++i) {
    if (i > 0)
      llvm::outs() << "\n";
    std::string prefix;
    if (writePlanFlag.getNumOccurrences())
      prefix = clusters.size() > 1
                   ? writePlanFlag + "-" + fileNameComponent(clusters[i].name)
                   : writePlanFlag.getValue();
    int one = planOne(*model, clusters[i], training, prefix, results[i]);
    if (one == ExitUsage)
      return one;
    status = std::max(status, one);
  }
  if (clusters.size() > 1)
    printPlanComparison(llvm::outs(), clusters, results);
  return status;
}
