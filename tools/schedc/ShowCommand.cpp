//===- ShowCommand.cpp - schedc show --------------------------------------===//
//
// Draws any schedule (sched dialect, PyTorch CSV, JSON runtime plan) at its
// simulated times: an SVG timeline, or a Chrome trace for Perfetto and
// chrome://tracing, chosen by the output's extension or --emit. Exit status
// 0 drawn, 1 the schedule cannot run to the end, 2 bad flags or input.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedOps.h"
#include "lib/Render/ChromeTrace.h"
#include "lib/Render/SvgTimeline.h"
#include "lib/Schedule/CostSpec.h"
#include "lib/ScheduleIR/ScheduleIR.h"
#include "tools/schedc/Commands.h"
#include "tools/schedc/ScheduleInput.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace sched;
namespace cl = llvm::cl;

cl::SubCommand sched::showCommand(
    "show", "Draw a schedule at its simulated times (SVG or Chrome trace)");

static cl::opt<std::string> inputFlag(cl::Positional, cl::sub(showCommand),
                                      cl::cat(schedcOptions),
                                      cl::desc("<schedule file>"));
static cl::opt<std::string> formatFlag(
    "format", cl::sub(showCommand), cl::cat(schedcOptions),
    cl::desc("Input format: mlir, torch-csv, torch-csv-comms or json; "
             "default from the extension and contents"),
    cl::value_desc("mlir|torch-csv|torch-csv-comms|json"));
static cl::opt<std::string> outputFlag(
    "o", cl::sub(showCommand), cl::cat(schedcOptions), cl::init("-"),
    cl::desc("Output file; .svg draws a timeline, .trace or .json a Chrome "
             "trace (default stdout, with --emit)"),
    cl::value_desc("file"));
static cl::opt<std::string>
    emitFlag("emit", cl::sub(showCommand), cl::cat(schedcOptions),
             cl::desc("Picture: svg or trace (default from -o's extension)"),
             cl::value_desc("svg|trace"));
static cl::opt<std::string> costFlag(
    "cost", cl::sub(showCommand), cl::cat(schedcOptions),
    cl::desc("Times that replace every stage's, as for simulate: f=1,b=2 "
             "or f=1,i=1,w=1, plus comm=T per transfer"),
    cl::value_desc("spec"));

/// The picture `form` of `emit`, else of the output's extension; "" when
/// neither says.
static std::string pictureForm() {
  if (!emitFlag.empty())
    return emitFlag;
  llvm::StringRef out = outputFlag;
  if (out.ends_with(".svg"))
    return "svg";
  if (out.ends_with(".trace") || out.ends_with(".json"))
    return "trace";
  return "";
}

int sched::writePicture(llvm::StringRef form, llvm::StringRef name,
                        const Schedule &schedule, SimulationOptions options,
                        llvm::raw_ostream &os, std::string &error) {
  options.recordMemory = form == "svg";
  llvm::Expected<Timeline> timeline = simulate(schedule, options);
  if (!timeline) {
    int status = ExitViolated;
    llvm::handleAllErrors(
        timeline.takeError(),
        [&](const SimulationRangeError &range) {
          status = ExitUsage;
          error = range.message;
        },
        [&](const llvm::ErrorInfoBase &other) { error = other.message(); });
    return status;
  }
  if (form == "svg")
    writeSvgTimeline(os, name, schedule, *timeline);
  else
    writeChromeTrace(os, name, schedule, *timeline);
  return ExitOk;
}

int sched::runShow() {
  if (inputFlag.empty())
    return usageError("show needs a schedule file; try 'schedc show --help'");
  const std::string form = pictureForm();
  if (form.empty())
    return usageError("say what to draw: -o FILE.svg, -o FILE.trace, or "
                      "--emit svg|trace");
  if (form != "svg" && form != "trace")
    return usageError("unknown --emit '" + form + "'; expected svg or trace");
  std::optional<CostSpec> costs;
  if (costFlag.getNumOccurrences()) {
    llvm::Expected<CostSpec> parsed = parseCostSpec(costFlag);
    if (!parsed)
      return usageError(llvm::toString(parsed.takeError()));
    costs = *parsed;
  }
  ScheduleInput input;
  if (int status = input.read(inputFlag, formatFlag, TorchCsvOptions()))
    return status;
  std::string name;
  Schedule schedule;
  Location loc = UnknownLoc::get(&input.getContext());
  if (JsonPlanInput *plan = input.getJsonPlan()) {
    name = plan->plan.name;
    schedule = std::move(plan->plan.schedule);
    loc = plan->locate(1, 1);
  } else if (TorchCsvSchedule *csv = input.getCsv()) {
    name = csv->name;
    schedule = std::move(csv->schedule);
    loc = csv->locate(1, 1);
  } else {
    auto ops = input.getModule().getOps<ScheduleOp>();
    if (std::next(ops.begin()) != ops.end())
      return usageError("'" + inputFlag +
                        "' holds several schedules; show draws one");
    ScheduleOp op = *ops.begin();
    FailureOr<Schedule> read = readSchedule(op);
    if (failed(read))
      return ExitUsage;
    name = op.getSymName().str();
    schedule = std::move(*read);
    loc = op.getLoc();
  }
  SimulationOptions options;
  if (costs) {
    applyCostSpec(schedule, *costs);
    if (costs->comm) {
      options.comm = *costs->comm;
      options.declaredTransfers = false;
    }
  }
  std::string error;
  auto output = openOutputFile(outputFlag, &error);
  if (!output)
    return usageError(error);
  if (int status =
          writePicture(form, name, schedule, options, output->os(), error)) {
    emitError(loc) << error;
    return status;
  }
  return keepOutput(*output);
}
