//===- VerifyCommand.cpp - schedc verify ----------------------------------===//
//
// Reads a schedule (sched dialect, or PyTorch pipelining CSV read straight
// into the plain schedule, no IR built), verifies it and reports:
// diagnostics on stderr at file:line:column (a CSV's at its cells), the
// verdict on stdout (or JSON with --json), and the exit status 0 verified,
// 1 violated, 2 usage error or unreadable input, 3 unknown.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedOps.h"
#include "lib/ScheduleIR/ScheduleIR.h"
#include "lib/VerifyIR/VerifyIR.h"
#include "tools/schedc/Commands.h"
#include "tools/schedc/PhaseProgress.h"
#include "tools/schedc/ScheduleInput.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace sched;
namespace cl = llvm::cl;

cl::SubCommand sched::verifyCommand(
    "verify", "Prove a schedule complete, deadlock-free and within memory");

static cl::opt<std::string> inputFlag(cl::Positional, cl::sub(verifyCommand),
                                      cl::cat(schedcOptions),
                                      cl::desc("<schedule file>"));
static cl::opt<std::string> formatFlag(
    "format", cl::sub(verifyCommand), cl::cat(schedcOptions),
    cl::desc("Input format: mlir, torch-csv (compute only), "
             "torch-csv-comms (with SEND/RECV) or json (a runtime plan); "
             "default from the extension and contents"),
    cl::value_desc("mlir|torch-csv|torch-csv-comms|json"));
static cl::opt<int64_t> stagesFlag(
    "stages", cl::sub(verifyCommand), cl::cat(schedcOptions),
    cl::desc("Number of stages (CSV; default: what the file shows)"));
static cl::opt<int64_t> microbatchesFlag(
    "microbatches", cl::sub(verifyCommand), cl::cat(schedcOptions),
    cl::desc("Number of microbatches (CSV; default: what the file shows)"));
static cl::opt<std::string>
    p2pFlag("p2p", cl::sub(verifyCommand), cl::cat(schedcOptions),
            cl::desc("Point-to-point semantics: eager (a send never blocks; "
                     "PyTorch's pipelining runtime, the default for CSV) or "
                     "rendezvous (NCCL and gloo, the default for MLIR and JSON "
                     "plans, whatever the plan's verdict says)"),
            cl::value_desc("eager|rendezvous"));
static cl::opt<std::string> memoryLimitFlag(
    "memory-limit", cl::sub(verifyCommand), cl::cat(schedcOptions),
    cl::desc("Device memory: bytes, or stage-microbatch activation units "
             "when the schedule declares no sizes; read exactly as written "
             "(1.9, 8e10; inf: no limit)"),
    cl::value_desc("number"));
static cl::opt<double> weightGradFractionFlag(
    "weight-grad-fraction", cl::sub(verifyCommand), cl::cat(schedcOptions),
    cl::init(0.5),
    cl::desc("Part of an activation kept from I until W (units mode)"));
static cl::opt<double>
    timeoutFlag("timeout", cl::sub(verifyCommand), cl::cat(schedcOptions),
                cl::init(0),
                cl::desc("Solver budget in seconds (0: none); running out "
                         "gives verdict unknown, exit 3"));
static cl::opt<bool> jsonFlag("json", cl::sub(verifyCommand),
                              cl::cat(schedcOptions),
                              cl::desc("Print the result as JSON"));
static cl::opt<std::string>
    proofFlag("proof", cl::sub(verifyCommand), cl::cat(schedcOptions),
              cl::init("witness"),
              cl::desc("witness: Z3 checks the execution the graph path found "
                       "(fast); search: Z3 solves unaided"),
              cl::value_desc("witness|search"));
static cl::opt<std::string>
    smtlibFlag("emit-smtlib", cl::sub(verifyCommand), cl::cat(schedcOptions),
               cl::desc("Write the SMT-LIB 2 query to this file"),
               cl::value_desc("file"));

/// Reads the options shared by every schedule of the input, before the
/// input is read: a bad flag is a usage error whatever the file. Without
/// --p2p, runVerify sets the input format's default semantics.
static std::optional<VerifyOptions> readOptions(std::string &problem) {
  VerifyOptions options;
  if (p2pFlag == "eager")
    options.p2p = P2PSemantics::Eager;
  else if (p2pFlag == "rendezvous")
    options.p2p = P2PSemantics::Rendezvous;
  else if (!p2pFlag.empty())
    problem = "unknown --p2p '" + p2pFlag + "'; expected eager or rendezvous";
  if (proofFlag == "search")
    options.proofMode = ProofMode::Search;
  else if (proofFlag != "witness")
    problem = "unknown --proof '" + proofFlag + "'; expected witness or search";
  if (memoryLimitFlag.getNumOccurrences()) {
    llvm::Expected<MemoryLimit> limit = MemoryLimit::parse(memoryLimitFlag);
    if (limit)
      options.memoryLimit = *limit;
    else
      problem = "--memory-limit: " + llvm::toString(limit.takeError());
  }
  if (!(weightGradFractionFlag >= 0 && weightGradFractionFlag <= 1))
    problem = "--weight-grad-fraction must be between 0 and 1";
  options.weightGradFraction = weightGradFractionFlag;
  if (!(timeoutFlag >= 0 && std::isfinite(timeoutFlag)))
    problem = "--timeout must be a finite number of seconds >= 0 (0: no "
              "limit)";
  options.timeoutSeconds = timeoutFlag;
  options.emitSmtlib = !smtlibFlag.empty();
  if (!problem.empty())
    return std::nullopt;
  return options;
}

/// The --json report of one schedule. `schedule` names the actions of the
/// violations; without it they carry no rank or action.
static llvm::json::Value toJson(llvm::StringRef name, const Schedule *schedule,
                                const VerifyResult &result) {
  llvm::json::Array violations;
  for (const Violation &v : result.violations) {
    llvm::json::Object entry{{"kind", violationKindName(v.kind)},
                             {"message", v.message}};
    if (v.at.rank >= 0 && schedule) {
      const RankProgram &rank = schedule->ranks[v.at.rank];
      entry["rank"] = rank.id;
      if (v.at.index >= 0) {
        entry["position"] = v.at.index;
        entry["action"] = describeAction(*schedule, rank.actions[v.at.index]);
      }
    }
    violations.push_back(std::move(entry));
  }
  llvm::json::Array unchecked;
  for (const Violation &v : result.unchecked) {
    llvm::json::Object entry{{"message", v.message}};
    if (v.at.rank >= 0 && schedule) {
      entry["rank"] = schedule->ranks[v.at.rank].id;
      entry["position"] = v.at.index;
    }
    unchecked.push_back(std::move(entry));
  }
  llvm::json::Array peaks;
  for (double peak : result.peakMemory)
    peaks.push_back(peak);
  llvm::json::Object object{
      {"schedule", name},
      {"verdict", verdictName(result.verdict)},
      {"violations", std::move(violations)},
      {"unchecked", std::move(unchecked)},
      {"peak_memory", std::move(peaks)},
      {"memory_unit", result.memoryInBytes ? "bytes" : "activations"},
      {"graph_seconds", result.graphSeconds},
      {"z3_seconds", result.z3Seconds},
      {"z3_resources", static_cast<int64_t>(result.z3Resources)},
  };
  if (result.verdict == Verdict::Unknown)
    object["reason"] = result.unknownReason;
  return llvm::json::Value(std::move(object));
}

/// The word for p2p semantics, as --p2p spells it.
static const char *p2pName(P2PSemantics p2p) {
  return p2p == P2PSemantics::Eager ? "eager" : "rendezvous";
}

namespace {
/// The verdicts of every schedule of the input, as text or JSON.
class VerifyReport {
public:
  /// Opens the --emit-smtlib file when `options` ask for one. An output
  /// that cannot be written is a usage error, found before any work:
  /// returns why, or "".
  std::string openSmtlib(const VerifyOptions &options) {
    if (!options.emitSmtlib)
      return "";
    std::error_code error;
    smtlib = std::make_unique<llvm::ToolOutputFile>(smtlibFlag, error,
                                                    llvm::sys::fs::OF_Text);
    if (!error)
      return "";
    return "cannot write the SMT-LIB file '" + smtlibFlag +
           "': " + error.message();
  }

  /// Adds the result of schedule `name`.
  void add(llvm::StringRef name, const Schedule *schedule,
           const VerifyResult &result, P2PSemantics p2p) {
    if (smtlib)
      smtlib->os() << smtlibSection(name, result);
    if (result.verdict == Verdict::Violated)
      overall = Verdict::Violated;
    else if (result.verdict == Verdict::Unknown && overall == Verdict::Verified)
      overall = Verdict::Unknown;
    if (jsonFlag) {
      llvm::json::Value entry = toJson(name, schedule, result);
      entry.getAsObject()->try_emplace("p2p", p2pName(p2p));
      reports.push_back(std::move(entry));
      return;
    }
    llvm::outs() << verdictName(result.verdict) << ": @" << name;
    if (result.verdict == Verdict::Violated)
      llvm::outs() << " (" << result.violations.size() << " violation"
                   << (result.violations.size() == 1 ? "" : "s") << ")";
    if (result.verdict == Verdict::Unknown)
      llvm::outs() << " (" << result.unknownReason << ")";
    // Which semantics were proved: a verdict holds under them only.
    llvm::outs() << " under " << p2pName(p2p) << " semantics\n";
  }

  /// Keeps the SMT-LIB file, prints the JSON report, if asked for, and
  /// returns the exit status.
  int finish() {
    if (smtlib)
      if (int status = keepOutput(*smtlib))
        return status;
    if (jsonFlag)
      llvm::outs() << llvm::formatv("{0:2}",
                                    llvm::json::Value(std::move(reports)))
                   << "\n";
    switch (overall) {
    case Verdict::Verified:
      return ExitOk;
    case Verdict::Violated:
      return ExitViolated;
    case Verdict::Unknown:
      return ExitUnknown;
    }
    return ExitUnknown;
  }

private:
  Verdict overall = Verdict::Verified;
  llvm::json::Array reports;
  std::unique_ptr<llvm::ToolOutputFile> smtlib;
};
} // namespace

/// Verifies a CSV from its plain form, with each diagnostic at its cell.
/// Cells left out of the read (`outOfRange`, already reported at their
/// cells by the reader) are violations of their own, whose range rules the
/// encoding states.
static void
verifyCsv(const TorchCsvSchedule &csv, VerifyOptions options,
          const std::vector<std::pair<int64_t, int64_t>> &outOfRange,
          VerifyReport &report) {
  options.outOfRangeActions = outOfRange;
  VerifyResult result = verifySchedule(csv.schedule, options);
  // The verifier puts the left-out cells first; the reader reported them.
  VerifyResult shown = result;
  const size_t leftOut = std::min(outOfRange.size(), shown.violations.size());
  shown.violations.erase(shown.violations.begin(),
                         shown.violations.begin() + leftOut);
  emitVerifyDiagnostics(shown, [&](ActionRef ref) {
    return csv.locateAction(ref.rank, ref.index);
  });
  report.add(csv.name, &csv.schedule, result, options.p2p);
}

/// Verifies a JSON plan from its plain form, with each diagnostic at its
/// instruction. The plan's verdict gives the memory limit unless
/// --memory-limit overrides it; the p2p semantics are the engine's
/// (rendezvous) unless --p2p says otherwise, never the plan's claim.
static void verifyJsonPlan(const JsonPlanInput &input, VerifyOptions options,
                           VerifyReport &report) {
  const RuntimePlan &plan = input.plan;
  if (!memoryLimitFlag.getNumOccurrences() && plan.verdict.memoryLimit) {
    // The importer took only numbers >= 0, and keeps their text: read it
    // as written, as --memory-limit is.
    llvm::Expected<MemoryLimit> limit =
        plan.verdict.memoryLimitText.empty()
            ? MemoryLimit::fromDouble(*plan.verdict.memoryLimit)
            : MemoryLimit::parse(plan.verdict.memoryLimitText);
    if (limit)
      options.memoryLimit = *limit;
    else
      llvm::consumeError(limit.takeError());
  }
  VerifyResult result = verifySchedule(plan.schedule, options);
  emitVerifyDiagnostics(result, [&](ActionRef ref) {
    return input.locateAction(ref.rank, ref.index);
  });
  report.add(plan.name, &plan.schedule, result, options.p2p);
}

int sched::runVerify() {
  if (inputFlag.empty())
    return usageError("verify needs a schedule file; try 'schedc verify "
                      "--help'");
  TorchCsvOptions csv;
  if (stagesFlag.getNumOccurrences())
    csv.stages = stagesFlag;
  if (microbatchesFlag.getNumOccurrences())
    csv.microbatches = microbatchesFlag;
  unsigned outOfRange = 0;
  std::vector<std::pair<int64_t, int64_t>> outOfRangeIndices;
  csv.outOfRangeCells = &outOfRange;
  csv.outOfRangeIndices = &outOfRangeIndices;
  std::string problem;
  std::optional<VerifyOptions> options = readOptions(problem);
  if (!options)
    return usageError(problem);
  VerifyReport report;
  if (std::string why = report.openSmtlib(*options); !why.empty())
    return usageError(why);
  // A line on stderr per phase that runs past 2 s (PhaseProgress.h).
  PhaseProgress progress;
  progress.begin("reading " + inputFlag);
  ScheduleInput input;
  if (int status = input.read(inputFlag, formatFlag, csv))
    return status;
  progress.begin("verifying " + inputFlag);
  // The engine's semantics: MLIR and JSON plans run on NCCL or gloo
  // (rendezvous), a CSV on PyTorch's pipelining runtime (eager).
  if (p2pFlag.empty())
    options->p2p = input.getFormat() == InputFormat::Mlir ||
                           input.getFormat() == InputFormat::JsonPlan
                       ? P2PSemantics::Rendezvous
                       : P2PSemantics::Eager;

  if (const JsonPlanInput *plan = input.getJsonPlan()) {
    verifyJsonPlan(*plan, *options, report);
    progress.end();
    return report.finish();
  }
  if (const TorchCsvSchedule *csvSchedule = input.getCsv()) {
    verifyCsv(*csvSchedule, *options, outOfRangeIndices, report);
    progress.end();
    return report.finish();
  }
  for (auto scheduleOp : input.getModule().getOps<ScheduleOp>()) {
    VerifyResult result = verifyScheduleOp(scheduleOp, *options);
    FailureOr<Schedule> schedule = failure();
    if (jsonFlag)
      schedule = readSchedule(scheduleOp);
    report.add(scheduleOp.getSymName(),
               succeeded(schedule) ? &*schedule : nullptr, result,
               options->p2p);
  }
  progress.end();
  return report.finish();
}
