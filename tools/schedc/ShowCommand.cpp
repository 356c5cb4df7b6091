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
#include "lib/Render/SvgSideBySide.h"
#include "lib/Render/SvgTimeline.h"
#include "lib/Schedule/CostSpec.h"
#include "lib/ScheduleIR/ScheduleIR.h"
#include "tools/schedc/Commands.h"
#include "tools/schedc/ScheduleInput.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace sched;
namespace cl = llvm::cl;

cl::SubCommand sched::showCommand(
    "show", "Draw a schedule at its simulated times (SVG or Chrome trace)");

static cl::list<std::string>
    inputFlag(cl::Positional, cl::sub(showCommand), cl::cat(schedcOptions),
              cl::desc("<schedule file>... (several: drawn one above "
                       "another on one time scale, svg only)"));
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

namespace {
/// A schedule read for drawing, with where to point its errors.
struct ShownSchedule {
  std::string name;
  Schedule schedule;
  std::optional<Location> loc;
};
} // namespace

/// Reads the one schedule `path` holds into `shown`; `input` keeps what
/// the locations point into.
static int readShown(llvm::StringRef path, ScheduleInput &input,
                     ShownSchedule &shown) {
  if (int status = input.read(path, formatFlag, TorchCsvOptions()))
    return status;
  shown.loc = UnknownLoc::get(&input.getContext());
  if (JsonPlanInput *plan = input.getJsonPlan()) {
    shown.name = plan->plan.name;
    shown.schedule = std::move(plan->plan.schedule);
    shown.loc = plan->locate(1, 1);
    return ExitOk;
  }
  if (TorchCsvSchedule *csv = input.getCsv()) {
    shown.name = csv->name;
    shown.schedule = std::move(csv->schedule);
    shown.loc = csv->locate(1, 1);
    return ExitOk;
  }
  auto ops = input.getModule().getOps<ScheduleOp>();
  if (std::next(ops.begin()) != ops.end())
    return usageError("'" + path + "' holds several schedules; show draws one");
  ScheduleOp op = *ops.begin();
  FailureOr<Schedule> read = readSchedule(op);
  if (failed(read))
    return ExitUsage;
  shown.name = op.getSymName().str();
  shown.schedule = std::move(*read);
  shown.loc = op.getLoc();
  return ExitOk;
}

/// Simulation options with `costs` applied to `schedule`.
static SimulationOptions applyCosts(Schedule &schedule,
                                    const std::optional<CostSpec> &costs) {
  SimulationOptions options;
  if (!costs)
    return options;
  applyCostSpec(schedule, *costs);
  if (costs->comm) {
    options.comm = *costs->comm;
    options.declaredTransfers = false;
  }
  return options;
}

/// Several schedules, one above another on one time scale.
static int showSideBySide(std::vector<ShownSchedule> &shown,
                          const std::optional<CostSpec> &costs,
                          llvm::raw_ostream &os) {
  const bool seconds = shown.front().schedule.secondsPerUnit > 0;
  for (size_t i = 1; i < shown.size(); ++i)
    if ((shown[i].schedule.secondsPerUnit > 0) != seconds)
      return usageError("'" + inputFlag[i] + "' counts time in " +
                        (seconds ? "units" : "seconds") + ", '" + inputFlag[0] +
                        "' in " + (seconds ? "seconds" : "units") +
                        ": side by side they need one (use --cost)");
  std::vector<Timeline> timelines;
  timelines.reserve(shown.size());
  for (ShownSchedule &one : shown) {
    SimulationOptions options = applyCosts(one.schedule, costs);
    options.recordMemory = true;
    llvm::Expected<Timeline> timeline = simulate(one.schedule, options);
    if (!timeline) {
      emitError(*one.loc) << llvm::toString(timeline.takeError());
      return ExitViolated;
    }
    timelines.push_back(std::move(*timeline));
  }
  // Schedules of one name (every `generate` writes @pipeline) are told
  // apart by their files' names.
  std::vector<std::string> names;
  for (const ShownSchedule &one : shown)
    names.push_back(one.name);
  llvm::SmallVector<std::string> sorted(names.begin(), names.end());
  llvm::sort(sorted);
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    for (size_t i = 0; i < shown.size(); ++i)
      names[i] = llvm::sys::path::stem(inputFlag[i]).str();
  std::vector<SvgPanel> panels;
  for (size_t i = 0; i < shown.size(); ++i) {
    panels.push_back({names[i], &shown[i].schedule, &timelines[i], {}});
    names[i] = "@" + names[i];
  }
  writeSvgSideBySide(os, llvm::join(names, ", ") + " on one time scale",
                     panels);
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
  if (inputFlag.size() > 1 && form != "svg")
    return usageError("several schedules are drawn side by side as svg "
                      "only; a trace shows one");
  std::optional<CostSpec> costs;
  if (costFlag.getNumOccurrences()) {
    llvm::Expected<CostSpec> parsed = parseCostSpec(costFlag);
    if (!parsed)
      return usageError(llvm::toString(parsed.takeError()));
    costs = *parsed;
  }
  // Each input keeps its context: the diagnostics point into it.
  std::vector<std::unique_ptr<ScheduleInput>> inputs;
  std::vector<ShownSchedule> shown(inputFlag.size());
  for (size_t i = 0; i < inputFlag.size(); ++i) {
    inputs.push_back(std::make_unique<ScheduleInput>());
    if (int status = readShown(inputFlag[i], *inputs.back(), shown[i]))
      return status;
  }
  std::string error;
  auto output = openOutputFile(outputFlag, &error);
  if (!output)
    return usageError(error);
  if (shown.size() > 1) {
    if (int status = showSideBySide(shown, costs, output->os()))
      return status;
    return keepOutput(*output);
  }
  ShownSchedule &one = shown.front();
  SimulationOptions options = applyCosts(one.schedule, costs);
  if (int status = writePicture(form, one.name, one.schedule, options,
                                output->os(), error)) {
    emitError(*one.loc) << error;
    return status;
  }
  return keepOutput(*output);
}
