//===- ChromeTrace.h - a simulated schedule as a Chrome trace ---*- C++ -*-===//
//
// Writes the Trace Event Format that chrome://tracing and Perfetto load: a
// process per rank, a compute thread and a comm thread, a complete event
// ("ph": "X") per action at its simulated time.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_RENDER_CHROMETRACE_H
#define LIB_RENDER_CHROMETRACE_H

#include "lib/Schedule/Schedule.h"
#include "lib/Simulate/Simulate.h"

#include "llvm/Support/raw_ostream.h"

namespace sched {

/// Microseconds of trace time per unit of simulated time: one unit (a
/// stage time of 1) shows as one millisecond.
constexpr double kTraceMicrosPerUnit = 1000;

/// Writes `schedule` named `name` at the times of `timeline` as Chrome
/// trace JSON.
void writeChromeTrace(llvm::raw_ostream &os, llvm::StringRef name,
                      const Schedule &schedule, const Timeline &timeline);

} // namespace sched

#endif // LIB_RENDER_CHROMETRACE_H
