//===- sched-translate.cpp - the schedc translation driver ----------------===//
//
// mlir-translate for the sched dialect: converts schedules to and from
// other formats.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedOps.h"
#include "lib/Export/JsonPlan.h"
#include "lib/Export/TorchCsv.h"
#include "lib/Import/JsonPlan.h"
#include "lib/Import/TorchCsv.h"
#include "lib/Limits/ExcerptDiagnosticHandler.h"
#include "lib/Limits/NestingDepth.h"
#include "lib/Limits/ResourceLimits.h"
#include "lib/Lower/InsertTransfers.h"
#include "lib/Render/TextGrid.h"
#include "lib/ScheduleIR/ScheduleIR.h"
#include "lib/Version/Version.h"
#include "lib/VerifyIR/VerifyIR.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/ParseUtilities.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

#include <optional>

using namespace mlir;

static llvm::cl::opt<std::string> planP2PFlag(
    "json-plan-p2p", llvm::cl::init("rendezvous"),
    llvm::cl::desc("--export-json-plan: the point-to-point semantics the "
                   "plan is verified under (rendezvous or eager)"),
    llvm::cl::value_desc("rendezvous|eager"));
static llvm::cl::opt<bool> planUnverifiedFlag(
    "json-plan-allow-unverified",
    llvm::cl::desc("--export-json-plan: write the plan even when the "
                   "verifier does not prove it (its verdict says "
                   "unverified)"));

namespace {
/// Reads a --memory-budget as schedc generate's: bytes, or a number with a
/// K, M, G or T suffix. (LLVM's parser<int64_t>, that is parser<long>, is
/// final; parser<long long> is not.)
struct MemorySizeParser : llvm::cl::parser<long long> {
  using llvm::cl::parser<long long>::parser;
  bool parse(llvm::cl::Option &option, llvm::StringRef, llvm::StringRef arg,
             long long &value) {
    llvm::Expected<int64_t> size = sched::parseMemorySize(arg);
    if (!size)
      return option.error(llvm::toString(size.takeError()));
    value = *size;
    return false;
  }
};
} // namespace

static llvm::cl::opt<long long, false, MemorySizeParser> memoryBudget(
    "memory-budget", llvm::cl::init(sched::kDefaultMemoryBudget),
    llvm::cl::desc("working memory that --import-torch-csv(-comms) may build "
                   "IR with, and that --export-text-grid may print: bytes, "
                   "or a number with a K, M, G or T suffix (default 2G; "
                   "docs/limits.md)"),
    llvm::cl::value_desc("SIZE"));

/// Set when an import could not read its input: exit status 2, bad input,
/// rather than 1.
static bool importFailed = false;

/// Clips the source excerpts of `context`'s errors to one screen line
/// (lib/Limits/ExcerptDiagnosticHandler.h) while it lives: mlirTranslateMain's
/// handler quotes the whole line, 300 KB for a bad cell at the end of a
/// PyTorch CSV row of 20,000 cells. Under --verify-diagnostics the verifier
/// must see every diagnostic, and nothing is printed.
class ClippedExcerpts {
public:
  ClippedExcerpts(llvm::SourceMgr &sourceMgr, MLIRContext *context) {
    const auto &options = llvm::cl::getRegisteredOptions();
    auto verify = options.find("verify-diagnostics");
    if (verify == options.end() || verify->second->getNumOccurrences() == 0)
      handler.emplace(sourceMgr, context);
  }

private:
  std::optional<sched::ExcerptDiagnosticHandler> handler;
};

/// Prints every sched.schedule of the module as a text grid.
static LogicalResult scheduleToTextGrid(Operation *op, raw_ostream &os) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("expected a builtin.module");
  bool any = false;
  for (auto scheduleOp : module.getOps<sched::ScheduleOp>()) {
    any = true;
    FailureOr<sched::Schedule> schedule = sched::readSchedule(scheduleOp);
    if (failed(schedule))
      return failure();
    os << "schedule @" << scheduleOp.getSymName() << "\n";
    if (llvm::Error error = sched::printTextGrid(os, *schedule, memoryBudget,
                                                 "--memory-budget=SIZE"))
      return scheduleOp.emitError() << llvm::toString(std::move(error));
  }
  if (!any)
    return module.emitError("the module holds no sched.schedule");
  return success();
}

/// Writes the one sched.schedule of the module as PyTorch CSV. With comms,
/// a schedule without transfers gets them as sched-insert-p2p would.
static LogicalResult scheduleToTorchCsv(Operation *op, raw_ostream &os,
                                        sched::TorchCsvContent content) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("expected a builtin.module");
  auto schedules = module.getOps<sched::ScheduleOp>();
  if (schedules.empty() || std::next(schedules.begin()) != schedules.end())
    return module.emitError("a PyTorch CSV holds one schedule; the module "
                            "must hold exactly one sched.schedule");
  sched::ScheduleOp scheduleOp = *schedules.begin();
  FailureOr<sched::Schedule> schedule = sched::readSchedule(scheduleOp);
  if (failed(schedule))
    return failure();
  const bool hasTransfers =
      llvm::any_of(schedule->ranks, [](const sched::RankProgram &rank) {
        return llvm::any_of(rank.actions, [](const sched::Action &action) {
          return action.kind == sched::ActionKind::Send ||
                 action.kind == sched::ActionKind::Recv;
        });
      });
  if (content == sched::TorchCsvContent::ComputeAndComms && !hasTransfers) {
    llvm::Expected<sched::Schedule> lowered = sched::insertTransfers(*schedule);
    if (!lowered)
      return scheduleOp.emitError() << "cannot insert transfers: "
                                    << llvm::toString(lowered.takeError());
    *schedule = std::move(*lowered);
  }
  if (llvm::Error error = sched::writeTorchCsv(os, *schedule, content))
    return scheduleOp.emitError() << llvm::toString(std::move(error));
  return success();
}

/// Verifies the one sched.schedule of the module and writes it as a JSON
/// runtime plan; a schedule the verifier does not prove is refused unless
/// --json-plan-allow-unverified.
static LogicalResult scheduleToJsonPlan(Operation *op, raw_ostream &os) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("expected a builtin.module");
  auto schedules = module.getOps<sched::ScheduleOp>();
  if (schedules.empty() || std::next(schedules.begin()) != schedules.end())
    return module.emitError("a runtime plan holds one schedule; the module "
                            "must hold exactly one sched.schedule");
  sched::ScheduleOp scheduleOp = *schedules.begin();
  if (planP2PFlag != "rendezvous" && planP2PFlag != "eager")
    return scheduleOp.emitError() << "unknown --json-plan-p2p '" << planP2PFlag
                                  << "'; expected rendezvous or eager";
  sched::VerifyOptions options;
  options.p2p = planP2PFlag == "eager" ? sched::P2PSemantics::Eager
                                       : sched::P2PSemantics::Rendezvous;
  // A runtime plan is one whole training step.
  options.wholeStep = true;
  const sched::VerifyResult result =
      sched::verifyScheduleOp(scheduleOp, options);
  const bool verified = result.verdict == sched::Verdict::Verified;
  if (!verified && !planUnverifiedFlag)
    return scheduleOp.emitError()
           << "is not verified under " << planP2PFlag << " ("
           << sched::verdictName(result.verdict)
           << "); no plan written (--json-plan-allow-unverified writes it "
              "anyway)";
  FailureOr<sched::RuntimePlan> plan = sched::readRuntimePlan(scheduleOp);
  if (failed(plan))
    return failure();
  plan->verdict.verified = verified;
  plan->verdict.p2p = planP2PFlag;
  if (llvm::Error error = sched::writeJsonPlan(os, *plan))
    return scheduleOp.emitError() << llvm::toString(std::move(error));
  return success();
}

/// Registers a CSV import translation of `flavour`.
static TranslateToMLIRRegistration
registerCsvImport(llvm::StringRef flag, llvm::StringRef description,
                  sched::TorchCsvFlavour flavour) {
  return TranslateToMLIRRegistration(
      flag, description,
      [flavour](llvm::SourceMgr &sourceMgr,
                MLIRContext *context) -> OwningOpRef<Operation *> {
        ClippedExcerpts excerpts(sourceMgr, context);
        sched::TorchCsvOptions options;
        options.flavour = flavour;
        options.memoryBudget = memoryBudget;
        OwningOpRef<ModuleOp> module =
            sched::importTorchCsv(sourceMgr, context, options);
        if (!module)
          importFailed = true;
        return module;
      },
      [](DialectRegistry &registry) { sched::registerSchedDialect(registry); });
}

/// Registers a translation from sched IR, as TranslateFromMLIRRegistration
/// does, but with the input's nesting checked before MLIR's recursive
/// parser sees it (lib/Limits/NestingDepth.h).
static TranslateRegistration
registerExport(llvm::StringRef flag, llvm::StringRef description,
               const TranslateFromMLIRFunction &function) {
  return TranslateRegistration(
      flag, description,
      [function](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                 raw_ostream &output, MLIRContext *context) -> LogicalResult {
        if (sched::reportTooDeepNesting(*sourceMgr))
          return failure();
        // mlirTranslateMain turns it on: an error on a schedule would
        // append the whole schedule in generic form.
        context->printOpOnDiagnostic(false);
        // Nor may an error quote a whole source line.
        ClippedExcerpts excerpts(*sourceMgr, context);
        DialectRegistry registry;
        sched::registerSchedDialect(registry);
        context->appendDialectRegistry(registry);
        OwningOpRef<Operation *> op = parseSourceFileForTool(
            sourceMgr, context, /*insertImplicitModule=*/true);
        if (!op || failed(verify(*op)))
          return failure();
        return function(op.get(), output);
      });
}

int main(int argc, char **argv) {
  [[maybe_unused]] auto importCompute = registerCsvImport(
      "import-torch-csv",
      "import a compute-only PyTorch pipelining CSV as a sched.schedule",
      sched::TorchCsvFlavour::Compute);
  [[maybe_unused]] auto importComms = registerCsvImport(
      "import-torch-csv-comms",
      "import a PyTorch pipelining CSV with SEND/RECV cells as a "
      "sched.schedule",
      sched::TorchCsvFlavour::ComputeAndComms);
  TranslateToMLIRRegistration importPlan(
      "import-json-plan",
      "import a JSON runtime plan (docs/runtime-plan.md) as a sched.schedule",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        ClippedExcerpts excerpts(sourceMgr, context);
        OwningOpRef<ModuleOp> module =
            sched::importJsonPlan(sourceMgr, context);
        // A plan that cannot be read is bad input (docs/runtime-plan.md).
        if (!module)
          importFailed = true;
        return module;
      },
      [](DialectRegistry &registry) { sched::registerSchedDialect(registry); });
  [[maybe_unused]] auto toJsonPlan = registerExport(
      "export-json-plan",
      "verify the sched.schedule and write it as a JSON runtime plan",
      scheduleToJsonPlan);
  [[maybe_unused]] auto toTextGrid = registerExport(
      "export-text-grid",
      "print each sched.schedule as a grid (a row per rank, a column per "
      "unit time step)",
      scheduleToTextGrid);
  [[maybe_unused]] auto toTorchCsv = registerExport(
      "export-torch-csv",
      "write the sched.schedule as a compute-only PyTorch pipelining CSV",
      [](Operation *op, raw_ostream &os) {
        return scheduleToTorchCsv(op, os, sched::TorchCsvContent::Compute);
      });
  [[maybe_unused]] auto toTorchCsvComms = registerExport(
      "export-torch-csv-comms",
      "write the sched.schedule as a PyTorch pipelining CSV with a SEND/RECV "
      "cell per transfer (inserted first when the schedule has none)",
      [](Operation *op, raw_ostream &os) {
        return scheduleToTorchCsv(op, os,
                                  sched::TorchCsvContent::ComputeAndComms);
      });
  sched::installVersionPrinter("sched-translate");
  if (failed(mlirTranslateMain(argc, argv, "schedc translation driver")))
    return importFailed ? 2 : 1;
  return 0;
}
