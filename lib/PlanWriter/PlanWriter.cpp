//===- PlanWriter.cpp - the recommended plan, through the IR --------------===//

#include "lib/PlanWriter/PlanWriter.h"

#include "dialects/Sched/SchedDialect.h"
#include "dialects/Sched/SchedOps.h"
#include "lib/CostModel/Memory.h"
#include "lib/Export/JsonPlan.h"
#include "lib/Export/TorchCsv.h"
#include "lib/Planner/Evaluation.h"
#include "lib/Render/ChromeTrace.h"
#include "lib/Render/PictureLabels.h"
#include "lib/Render/SvgTimeline.h"
#include "lib/Schedule/DataParallelAxes.h"
#include "lib/ScheduleIR/ScheduleIR.h"
#include "lib/Simulate/Simulate.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"

#include <fmt/format.h>

#include <cmath>

using namespace mlir;
using namespace sched;

char PlanDiagnosedError::ID = 0;

/// The data-parallel replicas of a written plan: one `dp` axis, or (HSDP)
/// `dp_replicate` x `dp_shard` in replicas of the plan (a plan rank holds
/// the tp x cp ranks of one replica).
struct ReplicaAxes {
  /// The replicas of one shard group; 0 without hybrid sharding.
  int64_t shard = 0;
  int64_t replicate = 0;
};

/// The candidate's replicas as mesh axes. A shard group of dp x cp ranks
/// (Layout::shardGroup, cp innermost) holds shardGroup / cp whole
/// replicas, or lies inside one when it divides cp. A group that splits
/// the cp ranks of several replicas (cp=4, hsdp=6) has no such axes: the
/// engine reduces in groups the plan's replicas cannot name, so the plan
/// is refused (docs/planner.md, "Written plans").
static llvm::Expected<ReplicaAxes> replicaAxes(const Layout &layout) {
  if (layout.shardGroup <= 0 || layout.shardReplicas() <= 1)
    return ReplicaAxes();
  int64_t shard = 0;
  if (layout.shardGroup % layout.cp == 0)
    shard = layout.shardGroup / layout.cp;
  else if (layout.cp % layout.shardGroup == 0)
    shard = 1;
  if (shard == 0 || layout.dp % shard != 0)
    return llvm::createStringError(
        llvm::formatv("--write-plan: hsdp={0} splits the cp={1} ranks of a "
                      "data-parallel replica between shard groups, which a "
                      "runtime plan cannot say (its dp_shard x dp_replicate "
                      "axes count whole replicas): use an hsdp that is a "
                      "multiple of cp or divides it",
                      layout.shardGroup, layout.cp)
            .str());
  return ReplicaAxes{shard, layout.dp / shard};
}

/// One group of the data-parallel axis `name`: each plan rank's peers are
/// the same rank of the other replicas along it (docs/runtime-plan.md,
/// "Data parallelism").
static void createReplicaGroup(OpBuilder &builder, Location loc,
                               llvm::StringRef name, int64_t pp) {
  llvm::SmallVector<Attribute> sets;
  for (int64_t rank = 0; rank < pp; ++rank)
    sets.push_back(builder.getDenseI64ArrayAttr({rank}));
  GroupOp::create(builder, loc, builder.getStringAttr(name),
                  builder.getArrayAttr(sets));
}

/// Stage `stage`'s gradient reduction `kind` over `group`, of `bytes`,
/// declared after its last backward.
static void declareReduction(OpBuilder &builder, Location loc,
                             CollectiveKind kind, llvm::StringRef group,
                             double bytes, int64_t stage) {
  MLIRContext *context = builder.getContext();
  CollectiveOp::create(
      builder, loc, CollectiveKindAttr::get(context, kind),
      FlatSymbolRefAttr::get(context, group),
      builder.getI64IntegerAttr(static_cast<int64_t>(bytes)),
      CollectiveWhenAttr::get(context, CollectiveWhen::AfterBackward),
      builder.getI64IntegerAttr(stage));
}

/// The mesh, groups and per-stage gradient reductions of the candidate's
/// data-parallel replicas. Each stage's main gradients are all-reduced
/// (ZeRO-0) or reduce-scattered (ZeRO-1 to 3) over the replicas after the
/// stage's last backward; with HSDP they are reduce-scattered in the shard
/// group and the shard all-reduced across the shard groups, as the planner
/// costs them. ZeRO-3's parameter gathers are the lowering's
/// (sched-insert-collectives' gather-per-compute).
static void declareDataParallel(OpBuilder &builder, Location loc,
                                const CostModel &model, const Candidate &c,
                                llvm::ArrayRef<StageEstimate> stages,
                                ReplicaAxes hybrid) {
  const Layout &layout = c.layout;
  // Gradients travel in the bytes the stack reduces them in (Memory.h).
  const double gradientBytes = model.precisionRecipe().reducedGradientBytes;
  if (hybrid.shard == 0) {
    MeshOp::create(builder, loc, builder.getStrArrayAttr({kDataParallelAxis, "pp"}),
                   builder.getDenseI64ArrayAttr({layout.dp, layout.pp}));
    createReplicaGroup(builder, loc, kDataParallelAxis, layout.pp);
    for (const auto &[s, stage] : llvm::enumerate(stages))
      declareReduction(builder, loc,
                       layout.zero == 0 ? CollectiveKind::AllReduce
                                        : CollectiveKind::ReduceScatter,
                       kDataParallelAxis,
                       (stage.denseParameters + stage.expertParameters) *
                           gradientBytes,
                       static_cast<int64_t>(s));
    return;
  }
  MeshOp::create(
      builder, loc,
      builder.getStrArrayAttr({kReplicateAxis, kShardAxis, "pp"}),
      builder.getDenseI64ArrayAttr(
          {hybrid.replicate, hybrid.shard, layout.pp}));
  createReplicaGroup(builder, loc, kShardAxis, layout.pp);
  createReplicaGroup(builder, loc, kReplicateAxis, layout.pp);
  // The shard each rank keeps: dense parameters over the dense shard
  // group, expert parameters over the expert one (CostModel::shard).
  const double denseGroup = static_cast<double>(layout.denseShardGroup());
  const double expertGroup = static_cast<double>(layout.expertShardGroup());
  for (const auto &[s, stage] : llvm::enumerate(stages)) {
    declareReduction(builder, loc, CollectiveKind::ReduceScatter, kShardAxis,
                     (stage.denseParameters + stage.expertParameters) *
                         gradientBytes,
                     static_cast<int64_t>(s));
    declareReduction(builder, loc, CollectiveKind::AllReduce, kReplicateAxis,
                     (stage.denseParameters / denseGroup +
                      stage.expertParameters / expertGroup) *
                         gradientBytes,
                     static_cast<int64_t>(s));
  }
}

std::string sched::planTitle(const CostModel &model, const Candidate &c) {
  const TrainingSpec &t = model.getTraining();
  const ClusterSpec &cluster = model.getCluster();
  return fmt::format("{} on {} x {} ({}): {}, {}, step {:.2f} s",
                     model.getModel().name, groupThousands(t.devices),
                     cluster.deviceName, cluster.name, c.layout.str(),
                     c.scheduleName().str(), c.stepTime);
}

LaunchPlan sched::launchPlan(const CostModel &model, const Candidate &c) {
  const Layout &layout = c.layout;
  const TrainingSpec &training = model.getTraining();
  LaunchPlan plan;
  plan.title = planTitle(model, c);
  plan.dp = layout.dp;
  plan.tp = layout.tp;
  plan.pp = layout.pp;
  plan.vpp = c.strategy == Strategy::DualPipe ? 1 : layout.vpp;
  plan.ep = layout.ep;
  plan.etp = layout.etp;
  plan.cp = layout.cp;
  plan.strategy = c.scheduleName().str();
  plan.vPlacement = c.strategy != Strategy::DualPipe &&
                    defaultVpp(c.strategy) == 2 && plan.vpp == 2;
  plan.replicas = c.strategy == Strategy::DualPipe ? 2 : 1;
  plan.sequenceParallel = layout.sequenceParallel;
  plan.zero = layout.zero;
  plan.shardGroup = layout.shardGroup;
  plan.microbatchSize = layout.microbatchSize;
  plan.microbatches = layout.microbatches;
  plan.globalBatchSequences = training.globalBatchSequences();
  plan.seqLen = training.seqLen;
  for (const StageEstimate &stage : candidateStages(model, c))
    plan.stageLayers.push_back(stage.numLayers);
  plan.numLayers = model.getModel().layers;
  plan.mtpLayers = model.getModel().mtpLayers;
  plan.moe = model.getModel().moe.has_value();
  const Recompute recompute = layout.recompute;
  if (recompute.isNamed()) {
    plan.recompute = "named";
  } else if (recompute.isPerOperator()) {
    plan.recompute = "op";
  } else if (recompute.isBlock()) {
    plan.recompute = "block";
    plan.blockLayers = recompute.blockSize();
  } else if (recompute.isFull()) {
    plan.recompute = "full";
  } else if (!recompute.isNone()) {
    plan.recompute = "modules";
    const std::string names = recompute == Recompute::Selective
                                  ? std::string("core_attn")
                                  : recomputeName(recompute);
    llvm::SmallVector<llvm::StringRef> modules;
    llvm::StringRef(names).split(modules, ',');
    for (llvm::StringRef module : modules)
      plan.recomputeModules.push_back(module.str());
  }
  plan.offloadLayers = layout.offloadLayers;
  plan.precision = precisionName(training.precision).str();
  plan.fp8ParamGather = fp8ParamsName(training.fp8Params).str();
  plan.tensorParallelOverlap = training.tensorParallelOverlap;
  plan.bf16MainGrads = training.mainGradientBytes == 2;
  plan.bf16Moments = training.optimizerMomentBytes == 2;
  plan.bf16FirstMoment = training.optimizerMomentBytes == 3;
  return plan;
}

/// Writes the lowered `schedule` as PyTorch pipelining CSV with its
/// transfers. The data-parallel reductions and the optimizer step are not
/// cells: PyTorch's training loop runs them (DDP or FSDP, then
/// optimizer.step()). What else the CSV cannot say (pipeline replicas) is
/// refused by writeTorchCsv.
static llvm::Error writePlanCsv(llvm::raw_ostream &os,
                                const Schedule &schedule) {
  Schedule cells = schedule;
  for (RankProgram &rank : cells.ranks)
    llvm::erase_if(rank.actions, [](const Action &action) {
      switch (action.kind) {
      case ActionKind::AllReduce:
      case ActionKind::ReduceScatter:
      case ActionKind::AllGather:
      case ActionKind::Barrier:
      case ActionKind::OptimizerStep:
        return true;
      default:
        return false;
      }
    });
  if (llvm::Error error =
          writeTorchCsv(os, cells, TorchCsvContent::ComputeAndComms))
    return llvm::createStringError("--emit torch-csv: " +
                                   llvm::toString(std::move(error)));
  return llvm::Error::success();
}

bool sched::gathersParameters(const Candidate &candidate) {
  const Layout &layout = candidate.layout;
  if (layout.zero < 3 || layout.dp <= 1)
    return false;
  // A shard group inside one replica (hsdp a divisor of cp) gathers among
  // that replica's cp ranks, inside a plan rank, as tensor parallelism's
  // collectives do.
  if (layout.shardGroup > 0 && layout.shardReplicas() > 1)
    return layout.shardGroup % layout.cp == 0 &&
           layout.shardGroup / layout.cp > 1;
  return true;
}

/// The `parameters` of a stage in the written pipeline: the planner's
/// static bytes on one device, or for a ZeRO-3 stage what its UNSHARD
/// gathers (the stage's weights in the gather's precision), which the
/// verifier and the executor read as the full size of a sharded stage.
static int64_t writtenParameters(const CostModel &model, const Candidate &c,
                                 const StageEstimate &s,
                                 const StageCost &planned) {
  if (!gathersParameters(c))
    return planned.parameters;
  return std::llround(model.precisionRecipe().gatheredWeightBytes *
                      (s.denseParameters + s.expertParameters));
}

/// A sched.pipeline with the candidate's stage costs and sizes as the
/// planner simulated them (`planned`: DualPipe's replica copies and
/// overlap are the lowering's business).
static OwningOpRef<ModuleOp> buildPipeline(MLIRContext &context,
                                           const CostModel &model,
                                           const Candidate &c,
                                           const Schedule &planned,
                                           ReplicaAxes hybrid) {
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  std::vector<StageEstimate> stages = candidateStages(model, c);
  const int64_t vpp = c.strategy == Strategy::DualPipe ? 1 : c.layout.vpp;
  // ZeRO-3's memory is the planner's: the plan's UNSHARD gathers a whole
  // stage where FSDP and the planner gather layer by layer, so the
  // verifier's reading of it is no bound to check against the device.
  IntegerAttr memoryLimit =
      gathersParameters(c)
          ? IntegerAttr()
          : builder.getI64IntegerAttr(
                static_cast<int64_t>(model.memoryLimit()));
  auto pipeline = PipelineOp::create(
      builder, loc, builder.getStringAttr("plan"),
      static_cast<uint64_t>(c.layout.pp), static_cast<uint64_t>(vpp),
      static_cast<uint64_t>(c.layout.microbatches), Placement::Loop,
      memoryLimit);
  // Times in seconds and the planner's transfer time, so that a simulation
  // of the written plan (schedc simulate, show) is the planner's.
  pipeline->setAttr(kTimeUnitAttr, builder.getStringAttr("s"));
  pipeline->setAttr(kTransferTimeAttr,
                    builder.getF64FloatAttr(planned.transferTime));
  builder.createBlock(&pipeline.getBody());
  const int64_t numStages = c.layout.pp * vpp;
  if (c.layout.dp > 1)
    declareDataParallel(builder, loc, model, c,
                        llvm::ArrayRef(stages).take_front(numStages), hybrid);
  for (size_t s = 0; s < static_cast<size_t>(numStages); ++s) {
    const StageCost &cost = planned.stageCosts[s];
    StageOp::create(
        builder, loc, s, stages[s].numLayers, llvm::APFloat(cost.forward),
        llvm::APFloat(cost.backwardInput), llvm::APFloat(cost.backwardWeight),
        cost.activation, cost.weightGrad,
        writtenParameters(model, c, stages[s], cost),
        builder.getI64IntegerAttr(cost.output));
  }
  return module;
}

llvm::Error sched::writePlan(MLIRContext &context, const CostModel &model,
                             const Candidate &c, PlanOutputs outputs) {
  llvm::Expected<ReplicaAxes> hybrid = replicaAxes(c.layout);
  if (!hybrid)
    return hybrid.takeError();
  llvm::Expected<Schedule> planned = buildSchedule(model, c);
  if (!planned)
    return planned.takeError();
  planned->secondsPerUnit = 1;
  planned->transferTime =
      model.p2pTime(c.layout, candidateStages(model, c).front().outputBytes);
  OwningOpRef<ModuleOp> module =
      buildPipeline(context, model, c, *planned, *hybrid);
  registerSchedPasses();
  auto pm = PassManager::on<ModuleOp>(&context);
  std::string passes =
      "sched-insert-p2p,sched-insert-collectives{gather-per-compute=" +
      std::string(gathersParameters(c) ? "true" : "false") +
      "},sched-assign-buffers,sched-verify";
  if (c.synthesized) {
    // The order the planner synthesized and simulated, not solved for
    // again by sched-synthesize: the same problem, stated once.
    Schedule order = *planned;
    for (RankProgram &rank : order.ranks)
      llvm::erase_if(rank.actions,
                     [](const Action &a) { return !isCompute(a.kind); });
    PipelineOp pipeline = *module->getOps<PipelineOp>().begin();
    ScheduleOp scheduleOp = replacePipeline(pipeline, order);
    Builder builder(&context);
    scheduleOp->setAttr(
        "sched.synthesis",
        builder.getDictionaryAttr(
            {builder.getNamedAttr("gap",
                                  builder.getF64FloatAttr(c.synthesisGap)),
             builder.getNamedAttr("solvers", builder.getStringAttr("list"))}));
  } else {
    passes = "sched-lower-" + c.scheduleName().str() + "," + passes;
  }
  if (failed(parsePassPipeline(passes, pm)) || failed(pm.run(*module)))
    return llvm::make_error<PlanDiagnosedError>(/*rejected=*/true);
  ScheduleOp scheduleOp = *module->getOps<ScheduleOp>().begin();
  FailureOr<RuntimePlan> runtimePlan = readRuntimePlan(scheduleOp);
  if (failed(runtimePlan))
    return llvm::make_error<PlanDiagnosedError>(/*rejected=*/false);
  runtimePlan->verdict.verified = true;
  runtimePlan->verdict.p2p = "rendezvous";
  if (!gathersParameters(c))
    runtimePlan->verdict.memoryLimit = model.memoryLimit();

  if (outputs.ir)
    module->print(*outputs.ir);
  if (outputs.runtimePlan)
    if (llvm::Error error = writeJsonPlan(*outputs.runtimePlan, *runtimePlan))
      return error;
  if (!outputs.timeline && !outputs.trace && !outputs.torchCsv)
    return llvm::Error::success();
  // The pictures and the CSV show the lowered schedule, collectives and
  // optimizer steps included, at the times the IR declares.
  FailureOr<Schedule> lowered = readSchedule(scheduleOp);
  if (failed(lowered))
    return llvm::make_error<PlanDiagnosedError>(/*rejected=*/false);
  if (outputs.torchCsv)
    if (llvm::Error error = writePlanCsv(*outputs.torchCsv, *lowered)) {
      if (!outputs.refusals)
        return error;
      outputs.refusals->push_back(llvm::toString(std::move(error)));
    }
  if (!outputs.timeline && !outputs.trace)
    return llvm::Error::success();
  SimulationOptions timing;
  timing.blockingSends =
      model.getTraining().blocksPipelineSends(c.scheduleName());
  timing.recordMemory = true;
  llvm::Expected<Timeline> timeline = simulate(*lowered, timing);
  if (!timeline)
    return timeline.takeError();
  PictureLabels labels;
  labels.title = planTitle(model, c);
  labels.tail = std::max(0.0, c.stepTime - c.makespan);
  if (outputs.timeline)
    writeSvgTimeline(*outputs.timeline, "plan", *lowered, *timeline, labels);
  if (outputs.trace)
    writeChromeTrace(*outputs.trace, "plan", *lowered, *timeline, labels);
  return llvm::Error::success();
}
