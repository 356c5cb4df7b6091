//===- ChromeTrace.cpp - a simulated schedule as a Chrome trace -----------===//

#include "lib/Render/ChromeTrace.h"
#include "lib/Schedule/RuntimePlan.h"

#include "llvm/Support/JSON.h"

using namespace sched;

/// Compute runs on thread 0 of its rank, everything else on thread 1.
static int threadOf(const Action &action) {
  return isCompute(action.kind) || action.kind == ActionKind::OptimizerStep ? 0
                                                                            : 1;
}

/// The event name: the grid's label for computes ("F3"), else the kind.
static std::string eventName(const Action &action) {
  if (isCompute(action.kind))
    return actionLabel(action, /*withStage=*/false);
  if (action.kind == ActionKind::Send || action.kind == ActionKind::Recv)
    return (planOpName(action.kind) + (action.gradient ? "_B" : "_F")).str() +
           std::to_string(action.microbatch);
  return planOpName(action.kind).str();
}

static void metadata(llvm::json::OStream &json, llvm::StringRef what,
                     int64_t pid, int tid, llvm::StringRef name) {
  json.object([&] {
    json.attribute("name", what);
    json.attribute("ph", "M");
    json.attribute("pid", pid);
    json.attribute("tid", tid);
    json.attributeObject("args", [&] { json.attribute("name", name); });
  });
}

double sched::traceMicrosPerUnit(const Schedule &schedule) {
  return schedule.secondsPerUnit > 0 ? schedule.secondsPerUnit * 1e6
                                     : kTraceMicrosPerUnit;
}

void sched::writeChromeTrace(llvm::raw_ostream &os, llvm::StringRef name,
                             const Schedule &schedule, const Timeline &timeline,
                             const PictureLabels &labels) {
  const double micros = traceMicrosPerUnit(schedule);
  llvm::json::OStream json(os, 1);
  json.object([&] {
    json.attribute("displayTimeUnit", "ms");
    json.attributeObject("otherData", [&] {
      json.attribute("schedule", name);
      if (!labels.title.empty())
        json.attribute("title", labels.title);
      json.attribute("makespan", timeline.makespan);
      if (labels.tail > 0)
        json.attribute("step", timeline.makespan + labels.tail);
      json.attribute("time_unit", schedule.secondsPerUnit > 0 ? "s" : "unit");
      json.attribute("time_unit_us", micros);
    });
    json.attributeArray("traceEvents", [&] {
      for (size_t r = 0; r < schedule.ranks.size(); ++r) {
        const RankProgram &rank = schedule.ranks[r];
        metadata(json, "process_name", rank.id, 0,
                 "rank " + std::to_string(rank.id));
        json.object([&] {
          json.attribute("name", "process_sort_index");
          json.attribute("ph", "M");
          json.attribute("pid", rank.id);
          json.attributeObject("args",
                               [&] { json.attribute("sort_index", rank.id); });
        });
        metadata(json, "thread_name", rank.id, 0, "compute");
        metadata(json, "thread_name", rank.id, 1, "comm");
        for (size_t i = 0; i < rank.actions.size(); ++i) {
          const Action &action = rank.actions[i];
          const ActionTime &time = timeline.times[r][i];
          json.object([&] {
            json.attribute("name", eventName(action));
            json.attribute("cat", planOpName(action.kind));
            json.attribute("ph", "X");
            json.attribute("pid", rank.id);
            json.attribute("tid", threadOf(action));
            json.attribute("ts", time.start * micros);
            json.attribute("dur", (time.end - time.start) * micros);
            json.attributeObject("args", [&] {
              json.attribute("action", describeAction(schedule, action));
              if (action.stage >= 0)
                json.attribute("stage", action.stage);
              if (action.microbatch >= 0)
                json.attribute("microbatch", action.microbatch);
            });
          });
        }
        if (labels.tail > 0)
          json.object([&] {
            json.attribute("name", "after the pipeline");
            json.attribute("cat", "step");
            json.attribute("ph", "X");
            json.attribute("pid", rank.id);
            json.attribute("tid", 1);
            json.attribute("ts", timeline.makespan * micros);
            json.attribute("dur", labels.tail * micros);
            json.attributeObject("args", [&] {
              json.attribute("action", "data-parallel reduction and "
                                       "optimizer step not hidden");
            });
          });
      }
    });
  });
  os << "\n";
}
