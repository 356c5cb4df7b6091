//===- GenerateCommand.cpp - schedc generate ------------------------------===//
//
// Builds a sched.pipeline from flags, checks the request against the
// working-memory budget (lib/Limits), and emits the schedule: --emit mlir
// lowers the pipeline with the strategy's pass; --emit json lowers it to a
// runtime plan (transfers, collectives, buffers), verifies it and writes it
// only when verified; the text and CSV forms are written from the plain
// schedule, without building its IR.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedOps.h"
#include "lib/Export/JsonPlan.h"
#include "lib/Export/TorchCsv.h"
#include "lib/Generate/PlanMemory.h"
#include "lib/Limits/DiagnosticExcerpt.h"
#include "lib/Limits/ResourceLimits.h"
#include "lib/Lower/InsertTransfers.h"
#include "lib/Render/TextGrid.h"
#include "lib/Schedule/CostSpec.h"
#include "lib/ScheduleIR/ScheduleIR.h"
#include "lib/VerifyIR/VerifyIR.h"
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

cl::SubCommand
    sched::generateCommand("generate",
                           "Generate a pipeline schedule for a strategy");

/// The help of --strategy: every strategy the generators know.
static const std::string strategyHelp = "Pipeline strategy: " + strategyNames();

static cl::opt<std::string> strategyFlag("strategy", cl::sub(generateCommand),
                                         cl::cat(schedcOptions),
                                         cl::desc(strategyHelp),
                                         cl::value_desc("name"));
static cl::opt<int64_t> ppFlag("pp", cl::sub(generateCommand),
                               cl::cat(schedcOptions),
                               cl::desc("Pipeline ranks P (>= 1)"));
static cl::opt<int64_t>
    vppFlag("vpp", cl::sub(generateCommand), cl::cat(schedcOptions),
            cl::desc("Stages per rank (virtual pipeline); default 2 for the "
                     "V strategies (zb-v, v-half, v-min, dualpipe-v), else "
                     "1"));
static cl::opt<int64_t>
    microbatchesFlag("microbatches", cl::sub(generateCommand),
                     cl::cat(schedcOptions),
                     cl::desc("Microbatches M per step (>= 1)"));
static cl::opt<std::string> emitFlag(
    "emit", cl::sub(generateCommand), cl::cat(schedcOptions), cl::init("mlir"),
    cl::desc("Output form: mlir (sched dialect), text (a grid, a row per "
             "rank and a column per time step), torch-csv (PyTorch "
             "pipelining CSV, compute only), torch-csv-comms (the same "
             "with a SEND/RECV cell per transfer), json (a runtime plan "
             "with transfers, optimizer step and buffer slots; written only "
             "when verified under rendezvous, docs/runtime-plan.md), svg (a "
             "timeline at simulated times) or trace (Chrome trace JSON)"),
    cl::value_desc("mlir|text|torch-csv|torch-csv-comms|json|svg|trace"));
static cl::opt<bool> allowUnverifiedFlag(
    "allow-unverified", cl::sub(generateCommand), cl::cat(schedcOptions),
    cl::desc("--emit json: write the plan even when the verifier does not "
             "prove it (its verdict then says unverified)"));
static cl::opt<std::string>
    costFlag("cost", cl::sub(generateCommand), cl::cat(schedcOptions),
             cl::desc("Per-stage times, the same for every stage: f=1,b=2 or "
                      "f=1,i=1,w=1 (default: all 1)"),
             cl::value_desc("spec"));
static cl::opt<std::string> outputFlag("o", cl::sub(generateCommand),
                                       cl::cat(schedcOptions), cl::init("-"),
                                       cl::desc("Output file (default stdout)"),
                                       cl::value_desc("file"));

static cl::list<std::string> auxFlag(
    "aux", cl::sub(generateCommand), cl::cat(schedcOptions),
    cl::desc("An auxiliary-loss head: stage=N,scope=microbatch|sequence|"
             "global_batch|aux_free (repeatable; docs/aux-loss.md). A "
             "global_batch head the strategy's order breaks is an error "
             "unless --aux-legalize says how to keep it"),
    cl::value_desc("stage=N,scope=S"));
static cl::opt<std::string> auxLegalizeFlag(
    "aux-legalize", cl::sub(generateCommand), cl::cat(schedcOptions),
    cl::desc("Keep the global_batch heads the order breaks: reorder (all "
             "forwards, then all backwards at and below the head) or "
             "aux-free (DeepSeek's bias balancing: the head becomes "
             "aux_free with a bias update)"),
    cl::value_desc("reorder|aux-free"));

static cl::opt<std::string> memoryBudgetFlag(
    "memory-budget", cl::sub(generateCommand), cl::cat(schedcOptions),
    cl::init(kDefaultMemoryBudgetText.str()),
    cl::desc("Working memory the request may use: bytes, or a number with "
             "a K, M, G or T suffix (default 2G); a bigger request is "
             "refused before it starts (docs/limits.md)"),
    cl::value_desc("size"));

/// Checks the flags; returns an error message or an empty string.
static std::string checkFlags() {
  for (const cl::Option *flag :
       {static_cast<const cl::Option *>(&strategyFlag),
        static_cast<const cl::Option *>(&ppFlag),
        static_cast<const cl::Option *>(&microbatchesFlag)})
    if (flag->getNumOccurrences() == 0)
      return "--" + flag->ArgStr.str() + " is required";
  if (!parseStrategy(strategyFlag))
    return "unknown strategy '" + clipForMessage(strategyFlag) +
           "'; expected one of: " + strategyNames();
  if (ppFlag < 1)
    return "--pp must be at least 1, got " + std::to_string(ppFlag);
  if (vppFlag.getNumOccurrences() && vppFlag < 1)
    return "--vpp must be at least 1, got " + std::to_string(vppFlag);
  if (microbatchesFlag < 1)
    return "--microbatches must be at least 1, got " +
           std::to_string(microbatchesFlag);
  if (auxLegalizeFlag.getNumOccurrences() && auxLegalizeFlag != "reorder" &&
      auxLegalizeFlag != "aux-free")
    return "unknown --aux-legalize '" + clipForMessage(auxLegalizeFlag) +
           "'; expected reorder or aux-free";
  if (emitFlag != "mlir" && emitFlag != "text" && emitFlag != "torch-csv" &&
      emitFlag != "torch-csv-comms" && emitFlag != "json" &&
      emitFlag != "svg" && emitFlag != "trace")
    return "unknown --emit '" + clipForMessage(emitFlag) +
           "'; expected mlir, text, torch-csv, torch-csv-comms, json, svg or "
           "trace";
  if (allowUnverifiedFlag && emitFlag != "json")
    return "--allow-unverified applies to --emit json only";
  return "";
}

/// An --aux value: the head's stage and scope.
struct AuxFlag {
  int64_t stage = -1;
  AuxScope scope = AuxScope::Microbatch;
};

/// Parses "stage=N,scope=S"; returns an error message or an empty string.
static std::string parseAuxFlag(llvm::StringRef text, int64_t numStages,
                                AuxFlag &head) {
  const std::string usage = "--aux '" + text.str() +
                            "': expected stage=N,scope=microbatch|sequence|"
                            "global_batch|aux_free";
  bool stage = false, scope = false;
  llvm::SmallVector<llvm::StringRef> fields;
  text.split(fields, ',');
  for (llvm::StringRef field : fields) {
    auto [key, value] = field.trim().split('=');
    key = key.trim();
    value = value.trim();
    if (key == "stage" && !stage) {
      if (value.getAsInteger(10, head.stage) || head.stage < 0)
        return usage + " (stage '" + value.str() + "' is not a stage number)";
      stage = true;
    } else if (key == "scope" && !scope) {
      std::optional<AuxScope> parsed = symbolizeAuxScope(value);
      if (!parsed)
        return usage + " (unknown scope '" + value.str() + "')";
      head.scope = *parsed;
      scope = true;
    } else {
      return usage;
    }
  }
  if (!stage || !scope)
    return usage;
  if (head.stage >= numStages)
    return "--aux '" + text.str() + "': stage " + std::to_string(head.stage) +
           " does not exist; the pipeline has " + std::to_string(numStages) +
           " stages (0 to " + std::to_string(numStages - 1) + ")";
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

/// The request as a budget refusal names it: "generating 1f1b for --emit
/// json".
static std::string requestName() {
  return "generating " + strategyFlag + " for --emit " + emitFlag;
}

/// The memory path of the --emit form.
static MemoryPath emitPath() {
  if (emitFlag == "text")
    return MemoryPath::EmitText;
  if (emitFlag == "torch-csv")
    return MemoryPath::EmitTorchCsv;
  // The pictures simulate the schedule with its transfers, as the comms CSV
  // holds them.
  if (emitFlag == "torch-csv-comms" || emitFlag == "svg" || emitFlag == "trace")
    return MemoryPath::EmitTorchCsvComms;
  // --emit json starts from the plain schedule, whose plan instructions
  // its own estimate counts (lib/Generate/PlanMemory.h).
  if (emitFlag == "json")
    return MemoryPath::Generate;
  return MemoryPath::EmitMlir;
}

/// Lowers `module` with the strategy's pass, then keeps its aux heads as
/// --aux-legalize says.
static LogicalResult lower(ModuleOp module, int64_t budget) {
  registerSchedPasses();
  auto pm = PassManager::on<ModuleOp>(module.getContext());
  const bool legalize = auxLegalizeFlag.getNumOccurrences() > 0;
  std::string passes = "sched-lower-" + strategyFlag +
                       "{memory-budget=" + std::to_string(budget) +
                       " aux-conflicts=" + (legalize ? "keep" : "error") + "}";
  if (legalize)
    passes += ",sched-legalize-aux-loss{mode=" + auxLegalizeFlag + "}";
  return success(succeeded(parsePassPipeline(passes, pm)) &&
                 succeeded(pm.run(module)));
}

/// Lowers `module` with the strategy's pass and prints it.
static LogicalResult emitMlir(ModuleOp module, int64_t budget,
                              llvm::raw_ostream &os) {
  if (failed(lower(module, budget)))
    return failure();
  // The pass manager verified the module after the pass.
  module->print(os, OpPrintingFlags().assumeVerified());
  return success();
}

/// Lowers `module` to a runtime plan (the strategy's pass, then transfers,
/// collectives and buffers), verifies it under rendezvous and writes it as
/// JSON. Returns the exit status.
static int emitJsonPlan(ModuleOp module, int64_t budget,
                        llvm::raw_ostream &os) {
  if (failed(lower(module, budget)))
    return ExitUsage;
  auto pm = PassManager::on<ModuleOp>(module.getContext());
  if (failed(parsePassPipeline(
          "sched-insert-p2p,sched-insert-collectives,sched-assign-buffers",
          pm)) ||
      failed(pm.run(module)))
    return ExitUsage;
  auto scheduleOp = *module.getOps<ScheduleOp>().begin();
  VerifyOptions options;
  options.p2p = P2PSemantics::Rendezvous;
  // A runtime plan is one whole training step.
  options.wholeStep = true;
  const VerifyResult result = verifyScheduleOp(scheduleOp, options);
  const bool verified = result.verdict == Verdict::Verified;
  if (!verified && !allowUnverifiedFlag) {
    usageError(llvm::Twine("the ") + strategyFlag +
               " schedule is not verified under rendezvous (" +
               verdictName(result.verdict) +
               "); no plan written (--allow-unverified writes it anyway)");
    return result.verdict == Verdict::Violated ? ExitViolated : ExitUnknown;
  }
  FailureOr<RuntimePlan> plan = readRuntimePlan(scheduleOp);
  if (failed(plan))
    return ExitUsage;
  plan->verdict.verified = verified;
  plan->verdict.p2p = "rendezvous";
  if (llvm::Error error = writeJsonPlan(os, *plan))
    return usageError(llvm::toString(std::move(error)));
  return ExitOk;
}

/// Writes the plain schedule of `shape` as a grid or a CSV, without
/// building its IR. `size` is the request's, checked without its transfers:
/// those are counted here, on the schedule, before they are inserted.
static llvm::Error emitPlain(llvm::Expected<Schedule> schedule,
                             RequestSize size, int64_t budget,
                             llvm::raw_ostream &os) {
  if (!schedule)
    return schedule.takeError();
  if (emitFlag == "text")
    return printTextGrid(os, *schedule, budget, "--memory-budget=SIZE");
  if (emitFlag == "torch-csv")
    return writeTorchCsv(os, *schedule, TorchCsvContent::Compute);
  size.transfers = countPlanInstructions(*schedule).transfers;
  if (llvm::Error error = checkMemoryBudget(
          emitPath(), size, budget, requestName(), "--memory-budget=SIZE"))
    return error;
  llvm::Expected<Schedule> lowered = insertTransfers(*schedule);
  if (!lowered)
    return lowered.takeError();
  if (emitFlag == "svg" || emitFlag == "trace") {
    std::string error;
    if (writePicture(emitFlag, "pipeline", *lowered, SimulationOptions(), os,
                     error))
      return llvm::createStringError(error);
    return llvm::Error::success();
  }
  return writeTorchCsv(os, *lowered, TorchCsvContent::ComputeAndComms);
}

int sched::runGenerate() {
  if (std::string problem = checkFlags(); !problem.empty())
    return usageError(problem);
  llvm::Expected<int64_t> budget = parseMemorySize(memoryBudgetFlag);
  if (!budget)
    return usageError("--memory-budget: " + llvm::toString(budget.takeError()));
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
  const Strategy strategy = *parseStrategy(strategyFlag);
  // Both arms int64_t: with the flag against defaultVpp's int32_t the
  // conditional took int32_t, and --vpp 4294967298 wrapped to 2.
  const int64_t vpp = vppFlag.getNumOccurrences()
                          ? static_cast<int64_t>(vppFlag)
                          : static_cast<int64_t>(defaultVpp(strategy));

  MLIRContext context;
  context.getOrLoadDialect<SchedDialect>();
  installDiagnosticPrinter(context);
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto pipeline = PipelineOp::create(
      builder, loc, builder.getStringAttr("pipeline"),
      static_cast<uint64_t>(ppFlag), static_cast<uint64_t>(vpp),
      static_cast<uint64_t>(microbatchesFlag), Placement::Loop, IntegerAttr());
  builder.createBlock(&pipeline.getBody());
  if (failed(pipeline.verify()))
    return ExitUsage;
  if (costs)
    declareStageCosts(builder, pipeline, *costs);
  for (const std::string &text : auxFlag) {
    AuxFlag head;
    if (std::string problem = parseAuxFlag(text, pipeline.getNumStages(), head);
        !problem.empty())
      return usageError(problem);
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&pipeline.getBody().front());
    AuxHeadOp::create(builder,
                      NameLoc::get(builder.getStringAttr("--aux " + text)),
                      static_cast<uint64_t>(head.stage), head.scope,
                      FlatSymbolRefAttr(), IntegerAttr());
  }

  // Refuse what cannot be generated, or not within the budget, before
  // anything is allocated.
  const PipelineShape shape = readPipelineShape(pipeline);
  if (llvm::Error error = checkPipelineShape(strategy, shape)) {
    pipeline.emitOpError() << "cannot be lowered: "
                           << llvm::toString(std::move(error));
    return ExitUsage;
  }
  // The transfers of --emit torch-csv-comms, svg and trace are counted on
  // the generated schedule (emitPlain).
  const RequestSize size = computeRequestSize(strategy, shape);
  if (llvm::Error error = checkMemoryBudget(
          emitPath(), size, *budget, requestName(), "--memory-budget=SIZE"))
    return usageError(llvm::toString(std::move(error)));
  if (emitFlag == "json") {
    // The plain schedule is a few percent of the plan's memory, and
    // released before the IR is built.
    llvm::Expected<Schedule> plain = generateSchedule(strategy, shape);
    if (!plain)
      return usageError(llvm::toString(plain.takeError()));
    if (llvm::Error error = checkPlanMemory(
            strategy, *plain, *budget, requestName(), "--memory-budget=SIZE"))
      return usageError(llvm::toString(std::move(error)));
  }

  std::string error;
  auto output = openOutputFile(outputFlag, &error);
  if (!output)
    return usageError(error);
  if (emitFlag == "mlir") {
    if (failed(emitMlir(*module, *budget, output->os())))
      return ExitUsage;
  } else if (emitFlag == "json") {
    if (int status = emitJsonPlan(*module, *budget, output->os()))
      return status;
  } else if (!auxFlag.empty()) {
    // Heads go through the IR: the lowering checks them and the
    // legalization rewrites the order.
    if (failed(lower(*module, *budget)))
      return ExitUsage;
    auto scheduleOp = *module->getOps<ScheduleOp>().begin();
    FailureOr<Schedule> schedule = readSchedule(scheduleOp);
    if (failed(schedule))
      return ExitUsage;
    if (llvm::Error error =
            emitPlain(std::move(*schedule), size, *budget, output->os()))
      return usageError(llvm::toString(std::move(error)));
  } else if (llvm::Error error = emitPlain(generateSchedule(strategy, shape),
                                           size, *budget, output->os())) {
    return usageError(llvm::toString(std::move(error)));
  }
  return keepOutput(*output);
}
