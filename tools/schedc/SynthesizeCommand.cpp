//===- SynthesizeCommand.cpp - schedc synthesize --------------------------===//
//
// Solves for a pipeline's schedule (sched-synthesize) instead of choosing a
// strategy, from flags or from a file holding a sched.pipeline with its
// stage costs, then inserts its transfers, proves it with the verifier
// under rendezvous and the memory limit, and only then emits it. A limit
// no schedule fits is one line naming the smallest feasible one, exit 1.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedOps.h"
#include "lib/Export/JsonPlan.h"
#include "lib/Export/TorchCsv.h"
#include "lib/Limits/ExcerptDiagnosticHandler.h"
#include "lib/Limits/ResourceLimits.h"
#include "lib/Render/TextGrid.h"
#include "lib/Schedule/CostSpec.h"
#include "lib/ScheduleIR/ScheduleIR.h"
#include "lib/Synthesis/PipelineProblem.h"
#include "lib/VerifyIR/VerifyIR.h"
#include "passes/Passes.h"
#include "tools/schedc/Commands.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace sched;
namespace cl = llvm::cl;

cl::SubCommand sched::synthesizeCommand(
    "synthesize",
    "Solve for a pipeline schedule under costs and a memory limit, with "
    "its gap to optimal");

static cl::opt<std::string>
    inputFlag(cl::Positional, cl::sub(synthesizeCommand),
              cl::cat(schedcOptions),
              cl::desc("[file holding one sched.pipeline with its stage "
                       "costs; instead of --pp/--microbatches]"),
              cl::init(""));
static cl::opt<int64_t> ppFlag("pp", cl::sub(synthesizeCommand),
                               cl::cat(schedcOptions),
                               cl::desc("Pipeline ranks P (>= 1)"));
static cl::opt<int64_t> vppFlag("vpp", cl::sub(synthesizeCommand),
                                cl::cat(schedcOptions), cl::init(1),
                                cl::desc("Stages per rank (default 1)"));
static cl::opt<int64_t>
    microbatchesFlag("microbatches", cl::sub(synthesizeCommand),
                     cl::cat(schedcOptions),
                     cl::desc("Microbatches M per step (>= 1)"));
static cl::opt<std::string> placementFlag(
    "placement", cl::sub(synthesizeCommand), cl::cat(schedcOptions),
    cl::init("loop"),
    cl::desc("Stages on ranks: loop (stage s on rank s mod P) or v (rank r "
             "holds stages r and 2P-1-r; --vpp 2)"),
    cl::value_desc("loop|v"));
static cl::opt<std::string>
    costFlag("cost", cl::sub(synthesizeCommand), cl::cat(schedcOptions),
             cl::desc("Per-stage times, the same for every stage: f=1,b=2 or "
                      "f=1,i=1,w=1 (default: all 1); comm=T sets --comm"),
             cl::value_desc("spec"));
static cl::opt<double>
    commFlag("comm", cl::sub(synthesizeCommand), cl::cat(schedcOptions),
             cl::init(0),
             cl::desc("Time of one transfer between two ranks (default 0)"));
static cl::opt<std::string> memoryLimitFlag(
    "memory-limit", cl::sub(synthesizeCommand), cl::cat(schedcOptions),
    cl::desc("Device memory per rank: bytes, or stage activations when no "
             "stage declares sizes (4, 3.5, 8e10; inf: none); default: the "
             "pipeline's memory_limit, else none"),
    cl::value_desc("N"));
static cl::opt<std::string> backwardFlag(
    "backward", cl::sub(synthesizeCommand), cl::cat(schedcOptions),
    cl::init("split"),
    cl::desc("split: input and weight gradients as I and W; full: one B"),
    cl::value_desc("split|full"));
static cl::opt<std::string> solverFlag(
    "solver", cl::sub(synthesizeCommand), cl::cat(schedcOptions),
    cl::init("exact"),
    cl::desc("list: list scheduling and the lower bound; exact: then Z3 "
             "while the gap is open"),
    cl::value_desc("list|exact"));
static cl::opt<double>
    timeLimitFlag("time-limit", cl::sub(synthesizeCommand),
                  cl::cat(schedcOptions), cl::init(10),
                  cl::desc("Seconds for the whole synthesis: the list "
                           "scheduler's search, Z3 and the transfers' buffer "
                           "repairs (default 10)"));
static cl::opt<double>
    gapFlag("gap", cl::sub(synthesizeCommand), cl::cat(schedcOptions),
            cl::init(0.01),
            cl::desc("Z3 stops once the gap is at most this (default "
                     "0.01; 0: prove optimality)"));
static cl::opt<std::string> emitFlag(
    "emit", cl::sub(synthesizeCommand), cl::cat(schedcOptions),
    cl::init("summary"),
    cl::desc("Output form: summary (makespan, bound, gap, peak memory), "
             "mlir (the verified schedule with its transfers), text (a "
             "grid), torch-csv, torch-csv-comms or json (a runtime plan)"),
    cl::value_desc("summary|mlir|text|torch-csv|torch-csv-comms|json"));
static cl::opt<std::string> outputFlag("o", cl::sub(synthesizeCommand),
                                       cl::cat(schedcOptions), cl::init("-"),
                                       cl::desc("Output file (default stdout)"),
                                       cl::value_desc("file"));
static cl::opt<std::string> memoryBudgetFlag(
    "memory-budget", cl::sub(synthesizeCommand), cl::cat(schedcOptions),
    cl::init(kDefaultMemoryBudgetText.str()),
    cl::desc("Working memory the request may use: bytes, or a number with "
             "a K, M, G or T suffix (default 2G)"),
    cl::value_desc("size"));

/// Checks the flags; returns an error message or an empty string.
static std::string checkFlags() {
  const bool fromFile = !inputFlag.empty();
  if (fromFile) {
    for (const cl::Option *flag :
         {static_cast<const cl::Option *>(&ppFlag),
          static_cast<const cl::Option *>(&microbatchesFlag),
          static_cast<const cl::Option *>(&vppFlag),
          static_cast<const cl::Option *>(&placementFlag),
          static_cast<const cl::Option *>(&costFlag)})
      if (flag->getNumOccurrences())
        return "--" + flag->ArgStr.str() +
               " describes a pipeline; the file already declares one";
  } else {
    for (const cl::Option *flag :
         {static_cast<const cl::Option *>(&ppFlag),
          static_cast<const cl::Option *>(&microbatchesFlag)})
      if (flag->getNumOccurrences() == 0)
        return "--" + flag->ArgStr.str() +
               " is required (or a file holding a sched.pipeline)";
    if (ppFlag < 1)
      return "--pp must be at least 1, got " + std::to_string(ppFlag);
    if (vppFlag < 1)
      return "--vpp must be at least 1, got " + std::to_string(vppFlag);
    if (microbatchesFlag < 1)
      return "--microbatches must be at least 1, got " +
             std::to_string(microbatchesFlag);
    if (placementFlag != "loop" && placementFlag != "v")
      return "unknown --placement '" + placementFlag + "'; expected loop or v";
  }
  if (backwardFlag != "split" && backwardFlag != "full")
    return "unknown --backward '" + backwardFlag + "'; expected split or full";
  if (solverFlag != "list" && solverFlag != "exact")
    return "unknown --solver '" + solverFlag + "'; expected list or exact";
  if (!(timeLimitFlag > 0 && std::isfinite(timeLimitFlag)))
    return "--time-limit must be a finite number of seconds > 0";
  if (!(gapFlag >= 0 && gapFlag < 1))
    return "--gap must be a number in [0, 1)";
  if (!(commFlag >= 0 && std::isfinite(commFlag)))
    return "--comm must be a finite number >= 0";
  if (emitFlag != "summary" && emitFlag != "mlir" && emitFlag != "text" &&
      emitFlag != "torch-csv" && emitFlag != "torch-csv-comms" &&
      emitFlag != "json")
    return "unknown --emit '" + emitFlag +
           "'; expected summary, mlir, text, torch-csv, torch-csv-comms or "
           "json";
  return "";
}

/// Builds the pipeline the flags describe into `module`. Returns ExitOk, or
/// the exit status after printing why not.
static int buildPipeline(ModuleOp module, double &comm) {
  OpBuilder builder(module.getContext());
  Location loc = builder.getUnknownLoc();
  builder.setInsertionPointToEnd(module.getBody());
  auto pipeline = PipelineOp::create(
      builder, loc, builder.getStringAttr("pipeline"),
      static_cast<uint64_t>(ppFlag), static_cast<uint64_t>(vppFlag),
      static_cast<uint64_t>(microbatchesFlag),
      placementFlag == "v" ? Placement::V : Placement::Loop, IntegerAttr());
  builder.createBlock(&pipeline.getBody());
  // The op's verifier reports a bad shape as one error.
  if (failed(pipeline.verify()))
    return ExitUsage;
  if (!costFlag.getNumOccurrences())
    return ExitOk;
  llvm::Expected<CostSpec> costs = parseCostSpec(costFlag);
  if (!costs)
    return usageError(llvm::toString(costs.takeError()));
  if (costs->comm) {
    if (commFlag.getNumOccurrences())
      return usageError("--cost comm and --comm both give the transfer time");
    comm = *costs->comm;
  }
  for (uint64_t s = 0, e = pipeline.getNumStages(); s < e; ++s)
    StageOp::create(builder, loc, s, /*layers=*/1,
                    llvm::APFloat(costs->forward),
                    llvm::APFloat(costs->backwardInput),
                    llvm::APFloat(costs->backwardWeight), /*activation=*/0,
                    /*weight_grad=*/0, /*parameters=*/0, /*output=*/nullptr);
  return ExitOk;
}

/// The sched-synthesize invocation the flags ask for.
static std::string synthesizePass(double comm, int64_t budget) {
  std::string pass = llvm::formatv("sched-synthesize{{comm={0} backward={1} "
                                   "solver={2} time-limit={3} gap={4} "
                                   "memory-budget={5}",
                                   comm, backwardFlag, solverFlag,
                                   timeLimitFlag, gapFlag, budget)
                         .str();
  if (memoryLimitFlag.getNumOccurrences())
    pass += " memory-limit=" + memoryLimitFlag;
  return pass + "}";
}

static LogicalResult runPasses(ModuleOp module, llvm::StringRef passes) {
  auto pm = PassManager::on<ModuleOp>(module.getContext());
  return success(succeeded(parsePassPipeline(passes, pm)) &&
                 succeeded(pm.run(module)));
}

/// One line: makespan, bound, gap, solvers and peak memory per rank.
static void printSummary(llvm::raw_ostream &os, ScheduleOp op,
                         const VerifyResult &verified) {
  auto record = op->getAttrOfType<DictionaryAttr>("sched.synthesis");
  auto number = [&](llvm::StringRef key) {
    auto value = record.getAs<FloatAttr>(key);
    return value ? value.getValueAsDouble() : 0.0;
  };
  os << llvm::formatv("makespan {0}, lower bound {1}, gap {2:f2}%",
                      formatNumber(number("makespan")),
                      formatNumber(number("lower_bound")),
                      100 * number("gap"));
  if (auto optimal = record.getAs<BoolAttr>("optimal"); optimal &&
                                                       optimal.getValue())
    os << " (optimal)";
  if (auto solvers = record.getAs<StringAttr>("solvers"))
    os << ", solvers " << solvers.getValue();
  if (auto z3 = record.getAs<StringAttr>("z3"))
    os << " (" << z3.getValue() << ")";
  os << "; verified; peak memory per rank:";
  for (double peak : verified.peakMemory)
    os << " " << formatNumber(peak);
  os << (verified.memoryInBytes ? " bytes" : " stage activations") << "\n";
}

int sched::runSynthesize() {
  if (std::string problem = checkFlags(); !problem.empty())
    return usageError(problem);
  llvm::Expected<int64_t> budget = parseMemorySize(memoryBudgetFlag);
  if (!budget)
    return usageError("--memory-budget: " + llvm::toString(budget.takeError()));
  std::optional<MemoryLimit> limit;
  if (memoryLimitFlag.getNumOccurrences()) {
    llvm::Expected<MemoryLimit> parsed = MemoryLimit::parse(memoryLimitFlag);
    if (!parsed)
      return usageError("--memory-limit " + llvm::toString(parsed.takeError()));
    limit = *parsed;
  }

  MLIRContext context;
  context.getOrLoadDialect<SchedDialect>();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<ExcerptDiagnosticHandler> fileDiagnostics;
  OwningOpRef<ModuleOp> module;
  double comm = commFlag;
  if (!inputFlag.empty()) {
    auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFlag);
    if (!buffer)
      return usageError("cannot read '" + inputFlag +
                        "': " + buffer.getError().message());
    sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
    fileDiagnostics =
        std::make_unique<ExcerptDiagnosticHandler>(sourceMgr, &context);
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return ExitUsage;
    const auto pipelines = module->getOps<PipelineOp>();
    if (std::distance(pipelines.begin(), pipelines.end()) != 1)
      return usageError("'" + inputFlag + "' must hold exactly one "
                        "sched.pipeline");
  } else {
    installDiagnosticPrinter(context);
    module = ModuleOp::create(UnknownLoc::get(&context));
    if (int status = buildPipeline(*module, comm))
      return status;
  }

  // A limit no schedule fits is the request's answer, not bad input.
  PipelineOp pipeline = *module->getOps<PipelineOp>().begin();
  SynthesisRequest request;
  request.splitBackward = backwardFlag == "split";
  request.comm = comm;
  request.globalBatchHead = highestGlobalBatchHead(pipeline);
  request.memoryLimit = limit;
  if (!limit && pipeline.getMemoryLimit())
    request.memoryLimit = MemoryLimit::fromInteger(*pipeline.getMemoryLimit());
  llvm::Expected<PipelineProblem> problem = PipelineProblem::build(
      makeSynthesisSpec(readPipelineShape(pipeline), request));
  if (!problem)
    return usageError(llvm::toString(problem.takeError()));
  if (llvm::Error error = problem->checkMemory()) {
    llvm::errs() << "schedc: error: " << llvm::toString(std::move(error))
                 << "\n";
    return ExitViolated;
  }

  registerSchedPasses();
  if (failed(runPasses(*module, synthesizePass(comm, *budget))))
    return ExitUsage;
  ScheduleOp scheduleOp = *module->getOps<ScheduleOp>().begin();
  FailureOr<Schedule> computeOnly = readSchedule(scheduleOp);
  if (failed(computeOnly))
    return ExitUsage;
  const bool plan = emitFlag == "json";
  std::string lowering = "sched-insert-p2p{memory-budget=" +
                         std::to_string(*budget) + "}";
  if (plan)
    lowering += ",sched-insert-collectives,sched-assign-buffers";
  if (failed(runPasses(*module, lowering)))
    return ExitUsage;

  // Nothing is emitted that the verifier has not proved.
  VerifyOptions options;
  options.p2p = P2PSemantics::Rendezvous;
  options.memoryLimit = request.memoryLimit;
  options.wholeStep = plan;
  const VerifyResult verified = verifyScheduleOp(scheduleOp, options);
  if (verified.verdict != Verdict::Verified) {
    usageError(llvm::Twine("the synthesized schedule is not verified under "
                           "rendezvous (") +
               verdictName(verified.verdict) + "); nothing written");
    return verified.verdict == Verdict::Violated ? ExitViolated : ExitUnknown;
  }

  std::string error;
  auto output = openOutputFile(outputFlag, &error);
  if (!output)
    return usageError(error);
  llvm::raw_ostream &os = output->os();
  if (emitFlag == "summary") {
    printSummary(os, scheduleOp, verified);
  } else if (emitFlag == "mlir") {
    module->print(os, OpPrintingFlags().assumeVerified());
  } else if (emitFlag == "text") {
    if (llvm::Error e = printTextGrid(os, *computeOnly, *budget,
                                      "--memory-budget=SIZE"))
      return usageError(llvm::toString(std::move(e)));
  } else if (emitFlag == "torch-csv" || emitFlag == "torch-csv-comms") {
    FailureOr<Schedule> lowered = readSchedule(scheduleOp);
    if (failed(lowered))
      return ExitUsage;
    const bool comms = emitFlag == "torch-csv-comms";
    if (llvm::Error e = writeTorchCsv(
            os, comms ? *lowered : *computeOnly,
            comms ? TorchCsvContent::ComputeAndComms
                  : TorchCsvContent::Compute))
      return usageError(llvm::toString(std::move(e)));
  } else {
    FailureOr<RuntimePlan> runtimePlan = readRuntimePlan(scheduleOp);
    if (failed(runtimePlan))
      return ExitUsage;
    runtimePlan->verdict.verified = true;
    runtimePlan->verdict.p2p = "rendezvous";
    if (llvm::Error e = writeJsonPlan(os, *runtimePlan))
      return usageError(llvm::toString(std::move(e)));
  }
  return keepOutput(*output);
}
