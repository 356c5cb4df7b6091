//===- GenerateCommand.cpp - schedc generate ------------------------------===//
//
// Builds a sched.pipeline from flags, lowers it with the strategy's pass
// and emits the schedule.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedOps.h"
#include "lib/Render/TextGrid.h"
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

static cl::opt<std::string>
    strategyFlag("strategy", cl::sub(generateCommand),
                 cl::desc("Pipeline strategy (gpipe, 1f1b)"),
                 cl::value_desc("name"));
static cl::opt<int64_t> ppFlag("pp", cl::sub(generateCommand),
                               cl::desc("Pipeline ranks P (>= 1)"));
static cl::opt<int64_t>
    vppFlag("vpp", cl::sub(generateCommand), cl::init(1),
            cl::desc("Stages per rank (virtual pipeline), default 1"));
static cl::opt<int64_t>
    microbatchesFlag("microbatches", cl::sub(generateCommand),
                     cl::desc("Microbatches M per step (>= 1)"));
static cl::opt<std::string>
    emitFlag("emit", cl::sub(generateCommand), cl::init("mlir"),
             cl::desc("Output form: mlir (sched dialect) or text (a grid, "
                      "a row per rank and a column per time step)"),
             cl::value_desc("mlir|text"));
static cl::opt<std::string> outputFlag("o", cl::sub(generateCommand),
                                       cl::init("-"),
                                       cl::desc("Output file (default stdout)"),
                                       cl::value_desc("file"));

/// The most actions one generate call may produce: about 1.5 GiB of IR.
static constexpr int64_t kMaxActions = 50'000'000;

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
  if (emitFlag != "mlir" && emitFlag != "text")
    return "unknown --emit '" + emitFlag + "'; expected mlir or text";
  // Two actions (forward and backward) per stage and microbatch, checked
  // without overflow.
  const int64_t stages = ppFlag * std::min<int64_t>(vppFlag, kMaxActions);
  if (ppFlag > kMaxActions || vppFlag > kMaxActions ||
      microbatchesFlag > kMaxActions || stages > kMaxActions ||
      2 * stages > kMaxActions / microbatchesFlag)
    return "the schedule would hold more than " +
           std::to_string(kMaxActions) +
           " actions (2 x pp x vpp x microbatches); that is not a training "
           "step";
  return "";
}

int sched::runGenerate() {
  if (std::string problem = checkFlags(); !problem.empty())
    return usageError(problem);

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

  registerSchedPasses();
  auto pm = PassManager::on<ModuleOp>(&context);
  if (failed(parsePassPipeline("sched-lower-" + strategyFlag, pm)) ||
      failed(pm.run(*module)))
    return ExitUsage;

  std::string error;
  auto output = openOutputFile(outputFlag, &error);
  if (!output)
    return usageError(error);
  if (emitFlag == "mlir") {
    module->print(output->os());
  } else {
    for (auto scheduleOp : module->getOps<ScheduleOp>()) {
      FailureOr<Schedule> schedule = readSchedule(scheduleOp);
      if (failed(schedule))
        return ExitUsage;
      if (llvm::Error err = printTextGrid(output->os(), *schedule))
        return usageError(llvm::toString(std::move(err)));
    }
  }
  output->keep();
  return ExitOk;
}
