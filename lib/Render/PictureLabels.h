//===- PictureLabels.h - what a timeline picture says -----------*- C++ -*-===//
//
// The words and units of a timeline (SVG or Chrome trace) beyond the
// schedule itself: a title naming what was planned, the step's time after
// the pipeline drains, and the unit of time (seconds for a plan the planner
// wrote, abstract units otherwise). TimeAxis picks the ticks and the unit
// that the axis and the figures are written in.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_RENDER_PICTURELABELS_H
#define LIB_RENDER_PICTURELABELS_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace sched {

/// The tick step, 1, 2 or 5 times a power of ten, that cuts `span` into
/// about `parts` intervals (a time axis, the sweep plot's axes).
double niceTickStep(double span, double parts);

/// `value` with a comma between groups of three digits: "62,914,560".
std::string groupThousands(long long value);

/// `bytes` in decimal units with 3 significant digits: "512 B", "12.5 KB",
/// "36.3 GB".
std::string formatBytes(double bytes);

/// What a picture says beyond the schedule.
struct PictureLabels {
  /// The title, e.g. "DeepSeek-V3 on 2,048 x H800 (h800-ib): dp=128,...";
  /// empty: "@" and the schedule's name.
  std::string title;
  /// Time the step still takes after the pipeline drains (exposed
  /// data-parallel communication and the optimizer step), drawn after the
  /// makespan and added to it as the step time; 0: none.
  double tail = 0;
  /// The time the plot's width stands for when longer than the step:
  /// pictures drawn side by side share one (SvgSideBySide.h); 0: the step.
  double axisEnd = 0;
};

/// The unit and ticks of a time axis from 0 to `end`.
class TimeAxis {
public:
  /// `secondsPerUnit`: 1 when times are seconds, 0 when abstract units.
  TimeAxis(double end, double secondsPerUnit);

  /// The unit the axis and figures are written in: "s", "ms", "us", or
  /// "" for abstract units.
  llvm::StringRef unit() const { return unitName; }
  /// `time` (in the schedule's unit) in the axis unit, with 4 significant
  /// digits and thousands separators, followed by the unit: "16.95 s",
  /// "48.35 ms", "1,234 s"; abstract units as they are: "9 units".
  std::string format(double time) const;
  /// The tick positions, in the schedule's unit: 0, step, 2 step, ... <= end.
  const std::vector<double> &ticks() const { return tickTimes; }
  /// A tick's label, without the unit: "0", "2.5", "10".
  std::string tickLabel(double time) const;
  /// The axis caption: "time (ms)", or "time (units)".
  std::string caption() const;

private:
  std::string unitName;
  /// The axis unit per schedule unit (1e3 for seconds shown as ms).
  double scale = 1;
  std::vector<double> tickTimes;
};

} // namespace sched

#endif // LIB_RENDER_PICTURELABELS_H
