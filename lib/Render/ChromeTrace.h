//===- ChromeTrace.h - a simulated schedule as a Chrome trace ---*- C++ -*-===//
//
// Writes the Trace Event Format that chrome://tracing and Perfetto load: a
// process per rank, a compute thread and a comm thread, a complete event
// ("ph": "X") per action at its simulated time.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_RENDER_CHROMETRACE_H
#define LIB_RENDER_CHROMETRACE_H

#include "lib/Render/PictureLabels.h"
#include "lib/Schedule/Schedule.h"
#include "lib/Simulate/Simulate.h"

#include "llvm/Support/raw_ostream.h"

namespace sched {

/// Microseconds of trace time per unit of simulated time when the times
/// are abstract units: one unit (a stage time of 1) shows as one
/// millisecond. Times in seconds (Schedule::secondsPerUnit) are shown as
/// they are: a 48 ms forward is 48 ms in Perfetto.
constexpr double kTraceMicrosPerUnit = 1000;

/// The trace's microseconds per unit of `schedule`'s times.
double traceMicrosPerUnit(const Schedule &schedule);

/// Writes `schedule` named `name` at the times of `timeline` as Chrome
/// trace JSON; `labels` name it and add the time after the pipeline (an
/// event on every rank's comm thread).
void writeChromeTrace(llvm::raw_ostream &os, llvm::StringRef name,
                      const Schedule &schedule, const Timeline &timeline,
                      const PictureLabels &labels = {});

} // namespace sched

#endif // LIB_RENDER_CHROMETRACE_H
