//===- PlanWriter.cpp - the recommended plan, through the IR --------------===//

#include "lib/PlanWriter/PlanWriter.h"

#include "dialects/Sched/SchedDialect.h"
#include "dialects/Sched/SchedOps.h"
#include "lib/Export/JsonPlan.h"
#include "lib/Planner/Evaluation.h"
#include "lib/Render/SvgTimeline.h"
#include "lib/ScheduleIR/ScheduleIR.h"
#include "lib/Simulate/Simulate.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace sched;

char PlanDiagnosedError::ID = 0;

/// A sched.pipeline with the candidate's stage costs and sizes as the
/// planner simulated them (`planned`: DualPipe's replica copies and
/// overlap are the lowering's business).
static OwningOpRef<ModuleOp> buildPipeline(MLIRContext &context,
                                           const CostModel &model,
                                           const Candidate &c,
                                           const Schedule &planned) {
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  std::vector<StageEstimate> stages = candidateStages(model, c);
  const int64_t vpp = c.strategy == Strategy::DualPipe ? 1 : c.layout.vpp;
  auto pipeline = PipelineOp::create(
      builder, loc, builder.getStringAttr("plan"),
      static_cast<uint64_t>(c.layout.pp), static_cast<uint64_t>(vpp),
      static_cast<uint64_t>(c.layout.microbatches), Placement::Loop,
      builder.getI64IntegerAttr(static_cast<int64_t>(model.memoryLimit())));
  builder.createBlock(&pipeline.getBody());
  const int64_t numStages = c.layout.pp * vpp;
  if (c.layout.dp > 1) {
    // The step's data-parallel replicas: each plan rank's peers are the
    // same rank of the other replicas (docs/runtime-plan.md).
    MeshOp::create(builder, loc, builder.getStrArrayAttr({"dp", "pp"}),
                   builder.getDenseI64ArrayAttr({c.layout.dp, c.layout.pp}));
    llvm::SmallVector<Attribute> sets;
    for (int64_t rank = 0; rank < c.layout.pp; ++rank)
      sets.push_back(builder.getDenseI64ArrayAttr({rank}));
    GroupOp::create(builder, loc, builder.getStringAttr("dp"),
                    builder.getArrayAttr(sets));
    // Each stage's main gradients are all-reduced (ZeRO-0) or
    // reduce-scattered (ZeRO-1 to 3, HSDP) over the replicas after the
    // stage's last backward. ZeRO-3's parameter gathers stay the engine's:
    // the planner counts them per layer, as FSDP2 and Megatron gather,
    // while the plan format's unshard holds a whole stage
    // (docs/planner.md, "Written plans").
    for (int64_t s = 0; s < numStages; ++s) {
      const double gradient =
          (stages[s].denseParameters + stages[s].expertParameters) *
          model.getTraining().mainGradientBytes;
      CollectiveOp::create(
          builder, loc,
          CollectiveKindAttr::get(
              &context, c.layout.zero == 0 ? CollectiveKind::AllReduce
                                           : CollectiveKind::ReduceScatter),
          FlatSymbolRefAttr::get(&context, "dp"),
          builder.getI64IntegerAttr(static_cast<int64_t>(gradient)),
          CollectiveWhenAttr::get(&context, CollectiveWhen::AfterBackward),
          builder.getI64IntegerAttr(s));
    }
  }
  for (size_t s = 0; s < static_cast<size_t>(numStages); ++s) {
    const StageCost &cost = planned.stageCosts[s];
    StageOp::create(builder, loc, s, stages[s].numLayers,
                    llvm::APFloat(cost.forward),
                    llvm::APFloat(cost.backwardInput),
                    llvm::APFloat(cost.backwardWeight), cost.activation,
                    cost.weightGrad, cost.parameters,
                    builder.getI64IntegerAttr(cost.output));
  }
  return module;
}

llvm::Error sched::writePlan(MLIRContext &context, const CostModel &model,
                             const Candidate &c, PlanOutputs outputs) {
  llvm::Expected<Schedule> planned = buildSchedule(model, c);
  if (!planned)
    return planned.takeError();
  OwningOpRef<ModuleOp> module = buildPipeline(context, model, c, *planned);
  registerSchedPasses();
  auto pm = PassManager::on<ModuleOp>(&context);
  const std::string passes = "sched-lower-" + c.scheduleName().str() +
                             ",sched-insert-p2p,sched-insert-collectives,"
                             "sched-assign-buffers,sched-verify";
  if (failed(parsePassPipeline(passes, pm)) || failed(pm.run(*module)))
    return llvm::make_error<PlanDiagnosedError>(/*rejected=*/true);
  FailureOr<RuntimePlan> runtimePlan =
      readRuntimePlan(*module->getOps<ScheduleOp>().begin());
  if (failed(runtimePlan))
    return llvm::make_error<PlanDiagnosedError>(/*rejected=*/false);
  runtimePlan->verdict.verified = true;
  runtimePlan->verdict.p2p = "rendezvous";
  runtimePlan->verdict.memoryLimit = model.memoryLimit();

  module->print(outputs.ir);
  if (llvm::Error error = writeJsonPlan(outputs.runtimePlan, *runtimePlan))
    return error;
  SimulationOptions timing;
  timing.comm = model.p2pTime(c.layout,
                              candidateStages(model, c).front().outputBytes);
  timing.recordMemory = true;
  llvm::Expected<Timeline> timeline = simulate(*planned, timing);
  if (!timeline)
    return timeline.takeError();
  writeSvgTimeline(outputs.timeline, "plan", *planned, *timeline);
  return llvm::Error::success();
}
