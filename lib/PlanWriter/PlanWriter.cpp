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
  for (size_t s = 0; s < static_cast<size_t>(c.layout.pp * vpp); ++s) {
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
