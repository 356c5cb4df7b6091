//===- GenerateCommand.cpp - schedc generate ------------------------------===//
//
// Builds a sched.pipeline from flags, lowers it with the strategy's pass
// and emits the schedule.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedOps.h"
#include "lib/Export/TorchCsv.h"
#include "lib/Render/TextGrid.h"
#include "lib/Schedule/CostSpec.h"
#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"
#include "tools/schedc/Commands.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace sched;
namespace cl = llvm::cl;

cl::SubCommand sched::generateCommand(
    "generate", "Generate a pipeline schedule for a strategy");

/// The help of --strategy: every strategy the generators know.
static const std::string strategyHelp =
    "Pipeline strategy: " + strategyNames();

static cl::opt<std::string>
    strategyFlag("strategy", cl::sub(generateCommand), cl::cat(schedcOptions),
                 cl::desc(strategyHelp), cl::value_desc("name"));
static cl::opt<int64_t> ppFlag("pp", cl::sub(generateCommand),
                               cl::cat(schedcOptions),
                               cl::desc("Pipeline ranks P (>= 1)"));
static cl::opt<int64_t>
    vppFlag("vpp", cl::sub(generateCommand),
            cl::cat(schedcOptions), cl::init(1),
            cl::desc("Stages per rank (virtual pipeline), default 1"));
static cl::opt<int64_t>
    microbatchesFlag("microbatches", cl::sub(generateCommand),
                     cl::cat(schedcOptions),
                     cl::desc("Microbatches M per step (>= 1)"));
static cl::opt<std::string> emitFlag(
    "emit", cl::sub(generateCommand), cl::cat(schedcOptions), cl::init("mlir"),
    cl::desc("Output form: mlir (sched dialect), text (a grid, a row per "
             "rank and a column per time step), torch-csv (PyTorch "
             "pipelining CSV, compute only) or torch-csv-comms (the same "
             "with a SEND/RECV cell per transfer)"),
    cl::value_desc("mlir|text|torch-csv|torch-csv-comms"));
static cl::opt<std::string> costFlag(
    "cost", cl::sub(generateCommand), cl::cat(schedcOptions),
    cl::desc("Per-stage times, the same for every stage: f=1,b=2 or "
             "f=1,i=1,w=1 (default: all 1)"),
    cl::value_desc("spec"));
static cl::opt<std::string> outputFlag("o", cl::sub(generateCommand),
                                       cl::cat(schedcOptions),
                                       cl::init("-"),
                                       cl::desc("Output file (default stdout)"),
                                       cl::value_desc("file"));

/// The most actions one generate call may produce: about 1.5 GiB of IR.
static constexpr int64_t kMaxActions = 50'000'000;

/// The most actions per (stage, microbatch): an F and either a B or an I
/// and a W, plus, with transfers, a send and a receive each way.
static int64_t maxActionsPerSlot() {
  return emitFlag == "torch-csv-comms" ? 3 + 4 : 3;
}

/// Checks the flags; returns an error message or an empty string.
static std::string checkFlags() {
  for (const cl::Option *flag :
       {static_cast<const cl::Option *>(&strategyFlag),
        static_cast<const cl::Option *>(&ppFlag),
        static_cast<const cl::Option *>(&microbatchesFlag)})
    if (flag->getNumOccurrences() == 0)
      return "--" + flag->ArgStr.str() + " is required";
  if (!parseStrategy(strategyFlag))
    return "unknown strategy '" + strategyFlag +
           "'; expected one of: " + strategyNames();
  if (ppFlag < 1)
    return "--pp must be at least 1, got " + std::to_string(ppFlag);
  if (vppFlag < 1)
    return "--vpp must be at least 1, got " + std::to_string(vppFlag);
  if (microbatchesFlag < 1)
    return "--microbatches must be at least 1, got " +
           std::to_string(microbatchesFlag);
  if (emitFlag != "mlir" && emitFlag != "text" && emitFlag != "torch-csv" &&
      emitFlag != "torch-csv-comms")
    return "unknown --emit '" + emitFlag +
           "'; expected mlir, text, torch-csv or torch-csv-comms";
  // Up to maxActionsPerSlot() actions per stage and microbatch, checked
  // without overflow.
  const int64_t perSlot = maxActionsPerSlot();
  const int64_t stages = ppFlag * std::min<int64_t>(vppFlag, kMaxActions);
  if (ppFlag > kMaxActions || vppFlag > kMaxActions ||
      microbatchesFlag > kMaxActions || stages > kMaxActions ||
      perSlot * stages > kMaxActions / microbatchesFlag)
    return "the schedule would hold more than " +
           std::to_string(kMaxActions) + " actions (up to " +
           std::to_string(perSlot) +
           " x pp x vpp x microbatches); that is not a training step";
  return "";
}

/// Declares every stage of `pipeline` with the times of `spec`.
static void declareStageCosts(OpBuilder &builder, PipelineOp pipeline,
                              const CostSpec &spec) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&pipeline.getBody().front());
  for (uint64_t s = 0, e = pipeline.getNumStages(); s < e; ++s)
    StageOp::create(builder, pipeline.getLoc(), s, /*layers=*/1,
                    llvm::APFloat(spec.forward),
                    llvm::APFloat(spec.backwardInput),
                    llvm::APFloat(spec.backwardWeight), /*activation=*/0,
                    /*weight_grad=*/0, /*parameters=*/0, /*output=*/nullptr);
}

/// Writes every schedule of `module` in the form --emit asks for.
static LogicalResult emitSchedules(ModuleOp module, llvm::raw_ostream &os) {
  if (emitFlag == "mlir") {
    module->print(os);
    return success();
  }
  for (auto scheduleOp : module.getOps<ScheduleOp>()) {
    FailureOr<Schedule> schedule = readSchedule(scheduleOp);
    if (failed(schedule))
      return failure();
    llvm::Error error =
        emitFlag == "text"
            ? printTextGrid(os, *schedule)
            : writeTorchCsv(os, *schedule,
                            emitFlag == "torch-csv"
                                ? TorchCsvContent::Compute
                                : TorchCsvContent::ComputeAndComms);
    if (error)
      return scheduleOp.emitError() << llvm::toString(std::move(error));
  }
  return success();
}

int sched::runGenerate() {
  if (std::string problem = checkFlags(); !problem.empty())
    return usageError(problem);
  std::optional<CostSpec> costs;
  if (costFlag.getNumOccurrences()) {
    llvm::Expected<CostSpec> parsed = parseCostSpec(costFlag);
    if (!parsed)
      return usageError(llvm::toString(parsed.takeError()));
    if (parsed->comm)
      return usageError("--cost comm is a simulate option: a generated "
                        "pipeline declares stage times only");
    costs = *parsed;
  }

  MLIRContext context;
  context.getOrLoadDialect<SchedDialect>();
  installDiagnosticPrinter(context);
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto pipeline = PipelineOp::create(
      builder, loc, builder.getStringAttr("pipeline"),
      static_cast<uint64_t>(ppFlag), static_cast<uint64_t>(vppFlag),
      static_cast<uint64_t>(microbatchesFlag), Placement::Loop,
      IntegerAttr());
  builder.createBlock(&pipeline.getBody());
  if (failed(pipeline.verify()))
    return ExitUsage;
  if (costs)
    declareStageCosts(builder, pipeline, *costs);

  registerSchedPasses();
  auto pm = PassManager::on<ModuleOp>(&context);
  std::string passes = "sched-lower-" + strategyFlag;
  if (emitFlag == "torch-csv-comms")
    passes += ",sched-insert-p2p";
  if (failed(parsePassPipeline(passes, pm)) || failed(pm.run(*module)))
    return ExitUsage;

  std::string error;
  auto output = openOutputFile(outputFlag, &error);
  if (!output)
    return usageError(error);
  if (failed(emitSchedules(*module, output->os())))
    return ExitUsage;
  output->keep();
  return ExitOk;
}
