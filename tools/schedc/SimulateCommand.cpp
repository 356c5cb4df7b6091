//===- SimulateCommand.cpp - schedc simulate ------------------------------===//
//
// Reads a schedule (sched dialect or PyTorch pipelining CSV), runs the list
// simulation of lib/Simulate and reports its makespan, the bubble ratio and
// the peak of live activations of every rank, as text or as JSON. Exit
// status 0 when every schedule runs to the end, 1 when one cannot, 2 for
// bad flags, unreadable input or results out of range.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedOps.h"
#include "lib/AuxLoss/AuxLossCost.h"
#include "lib/Schedule/CostSpec.h"
#include "lib/ScheduleIR/ScheduleIR.h"
#include "lib/Simulate/Simulate.h"
#include "tools/schedc/Commands.h"
#include "tools/schedc/ScheduleInput.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace sched;
namespace cl = llvm::cl;

cl::SubCommand sched::simulateCommand(
    "simulate", "Simulate a schedule: makespan, bubble, peak activations");

static cl::opt<std::string> inputFlag(cl::Positional, cl::sub(simulateCommand),
                                      cl::cat(schedcOptions),
                                      cl::desc("<schedule file>"));
static cl::opt<std::string> formatFlag(
    "format", cl::sub(simulateCommand), cl::cat(schedcOptions),
    cl::desc("Input format: mlir, torch-csv (compute only), "
             "torch-csv-comms (with SEND/RECV) or json (a runtime plan); "
             "default from the extension and contents"),
    cl::value_desc("mlir|torch-csv|torch-csv-comms|json"));
static cl::opt<std::string> costFlag(
    "cost", cl::sub(simulateCommand), cl::cat(schedcOptions),
    cl::desc("Times that replace every stage's: f=1,b=2 or f=1,i=1,w=1, "
             "plus comm=T for each transfer between ranks (default: the "
             "file's stage times, else 1; comm 0)"),
    cl::value_desc("spec"));
static cl::opt<bool> jsonFlag(
    "json", cl::sub(simulateCommand), cl::cat(schedcOptions),
    cl::desc("Print {\"makespan\", \"bubble_ratio\", \"peak_activations\"} "
             "as JSON (an array of them when the file holds several "
             "schedules)"));

static cl::opt<bool> timelineFlag(
    "timeline", cl::sub(simulateCommand), cl::cat(schedcOptions),
    cl::desc("Also print every action's start and end time, rank by rank "
             "(text output only)"));

/// True when some stage declares activation bytes.
static bool hasSizes(const Schedule &schedule) {
  return llvm::any_of(schedule.stageCosts, [](const StageCost &cost) {
    return cost.activation > 0;
  });
}

/// One line per aux-loss head: what its scope costs in this timeline.
static void printAuxHeads(llvm::raw_ostream &os, const Schedule &schedule,
                          const Timeline &timeline) {
  const bool bytes = hasSizes(schedule);
  for (const AuxHeadCost &cost : auxHeadCosts(schedule, timeline)) {
    os << "  aux head at stage " << cost.head.stage << " (scope "
       << auxLossScopeName(cost.head.scope) << ")";
    if (cost.rank < 0) {
      os << ": no rank computes the stage\n";
      continue;
    }
    os << " on rank " << schedule.ranks[cost.rank].id << ": ";
    switch (cost.head.scope) {
    case AuxLossScope::Microbatch:
    case AuxLossScope::Sequence:
      os << "local to each microbatch: no dependency, no extra memory or "
            "time\n";
      continue;
    case AuxLossScope::GlobalBatch:
      os << "backwards start at " << formatNumber(cost.firstBackwardStart)
         << ", after the last forward (ends at "
         << formatNumber(cost.lastForwardEnd) << "), holding "
         << cost.liveActivations << " stage activations";
      if (bytes)
        os << " (" << cost.liveBytes << " bytes)";
      os << "\n";
      continue;
    case AuxLossScope::AuxFree:
      os << "no gradient dependency; ";
      if (cost.head.biasGroup < 0)
        os << "no bias update declared\n";
      else if (cost.biasUpdateAt < 0)
        os << "bias update all_reduce @"
           << schedule.groups[cost.head.biasGroup].name << " of "
           << cost.biasBytes << " bytes not issued yet\n";
      else
        os << "bias update all_reduce @"
           << schedule.groups[cost.head.biasGroup].name << " of "
           << cost.biasBytes << " bytes at " << formatNumber(cost.biasUpdateAt)
           << "\n";
      continue;
    }
  }
}

static void printText(llvm::raw_ostream &os, llvm::StringRef name,
                      const Schedule &schedule, const Timeline &timeline) {
  os << "schedule @" << name << "\n";
  // A plan the planner wrote says its times are seconds.
  os << "  makespan " << formatNumber(timeline.makespan)
     << (schedule.secondsPerUnit > 0 ? " s" : "") << "\n";
  const bool bytes = hasSizes(schedule);
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    os << "  rank " << schedule.ranks[r].id << ": bubble ratio "
       << formatNumber(timeline.bubbleRatio[r]) << " (idle "
       << formatNumber(timeline.makespan - timeline.busy[r])
       << "), peak activations " << formatNumber(timeline.peakActivations[r]);
    if (bytes)
      os << " (" << timeline.peakActivationBytes[r] << " bytes)";
    os << "\n";
  }
  printAuxHeads(os, schedule, timeline);
  if (!timelineFlag)
    return;
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    os << "  rank " << schedule.ranks[r].id << " timeline:\n";
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      const ActionTime &time = timeline.times[r][i];
      os << "    " << formatNumber(time.start) << " " << formatNumber(time.end)
         << " " << describeAction(schedule, actions[i]);
      if (actions[i].bundle)
        os << " [bundle " << actions[i].bundle << "]";
      os << "\n";
    }
  }
}

static llvm::json::Value toJson(const Schedule &schedule,
                                const Timeline &timeline) {
  llvm::json::Array bubble, peaks, heads;
  for (double ratio : timeline.bubbleRatio)
    bubble.push_back(ratio);
  for (double peak : timeline.peakActivations)
    peaks.push_back(peak);
  llvm::json::Object report{{"makespan", timeline.makespan},
                            {"bubble_ratio", std::move(bubble)},
                            {"peak_activations", std::move(peaks)}};
  if (schedule.auxHeads.empty())
    return report;
  for (const AuxHeadCost &cost : auxHeadCosts(schedule, timeline)) {
    llvm::json::Object head{
        {"stage", cost.head.stage},
        {"scope", auxLossScopeName(cost.head.scope)},
        {"rank", cost.rank < 0 ? llvm::json::Value(nullptr)
                               : llvm::json::Value(
                                     schedule.ranks[cost.rank].id)}};
    if (cost.rank >= 0 && cost.head.scope == AuxLossScope::GlobalBatch) {
      head["last_forward_end"] = cost.lastForwardEnd;
      head["first_backward_start"] = cost.firstBackwardStart;
      head["live_activations"] = cost.liveActivations;
      head["live_bytes"] = cost.liveBytes;
    }
    if (cost.head.biasGroup >= 0) {
      head["bias_update_bytes"] = cost.biasBytes;
      head["bias_update_at"] = cost.biasUpdateAt < 0
                                   ? llvm::json::Value(nullptr)
                                   : llvm::json::Value(cost.biasUpdateAt);
    }
    heads.push_back(std::move(head));
  }
  report["aux_heads"] = std::move(heads);
  return report;
}

int sched::runSimulate() {
  if (inputFlag.empty())
    return usageError("simulate needs a schedule file; try 'schedc simulate "
                      "--help'");
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

  SimulationOptions options;
  if (costs && costs->comm) {
    options.comm = *costs->comm;
    options.declaredTransfers = false;
  }
  llvm::json::Array reports;
  int status = ExitOk;
  auto run = [&](llvm::StringRef name, Schedule &schedule, Location loc) {
    if (costs)
      applyCostSpec(schedule, *costs);
    llvm::Expected<Timeline> timeline = simulate(schedule, options);
    if (!timeline) {
      // A schedule that cannot run is wrong; one whose times or sizes do
      // not fit is bad input.
      int failure = ExitViolated;
      std::string message;
      llvm::handleAllErrors(
          timeline.takeError(),
          [&](const SimulationRangeError &error) {
            failure = ExitUsage;
            message = error.message;
          },
          [&](const llvm::ErrorInfoBase &error) { message = error.message(); });
      emitError(loc) << message;
      status = std::max(status, failure);
      return;
    }
    if (jsonFlag)
      reports.push_back(toJson(schedule, *timeline));
    else
      printText(llvm::outs(), name, schedule, *timeline);
  };
  if (JsonPlanInput *plan = input.getJsonPlan()) {
    run(plan->plan.name, plan->plan.schedule, plan->locate(1, 1));
  } else if (TorchCsvSchedule *csv = input.getCsv()) {
    // A CSV runs from its plain form: no IR is built.
    run(csv->name, csv->schedule, csv->locate(1, 1));
  } else {
    for (auto scheduleOp : input.getModule().getOps<ScheduleOp>()) {
      FailureOr<Schedule> schedule = readSchedule(scheduleOp);
      if (failed(schedule))
        return ExitUsage;
      run(scheduleOp.getSymName(), *schedule, scheduleOp.getLoc());
    }
  }
  if (jsonFlag && status == ExitOk) {
    llvm::json::Value value = reports.size() == 1
                                  ? std::move(reports.front())
                                  : llvm::json::Value(std::move(reports));
    llvm::outs() << llvm::formatv("{0:2}", value) << "\n";
  }
  return status;
}
