//===- SvgSideBySide.h - schedules drawn one above another ------*- C++ -*-===//
//
// Several schedules (the top candidates of a plan, or strategies to choose
// between) as one SVG: each schedule's timeline (SvgTimeline.h) a panel,
// the panels stacked, all on one time scale, so that equal times are equal
// widths and a longer step is a longer panel.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_RENDER_SVGSIDEBYSIDE_H
#define LIB_RENDER_SVGSIDEBYSIDE_H

#include "lib/Render/PictureLabels.h"
#include "lib/Schedule/Schedule.h"
#include "lib/Simulate/Simulate.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

namespace sched {

/// One panel: a schedule simulated with SimulationOptions::recordMemory.
struct SvgPanel {
  std::string name;
  const Schedule *schedule = nullptr;
  const Timeline *timeline = nullptr;
  PictureLabels labels;
};

/// Writes `panels` as one standalone SVG titled `title`, each panel's time
/// axis running to the longest step among them. The panels' schedules must
/// all count time in the same unit (seconds, or all abstract units).
void writeSvgSideBySide(llvm::raw_ostream &os, llvm::StringRef title,
                        llvm::ArrayRef<SvgPanel> panels);

} // namespace sched

#endif // LIB_RENDER_SVGSIDEBYSIDE_H
