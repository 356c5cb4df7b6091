//===- SvgTimeline.h - a simulated schedule as an SVG timeline --*- C++ -*-===//
//
// Draws a schedule at its simulated times: a row per rank with a compute
// lane (a box per F/B/I/W, coloured by kind, the microbatch in the box), a
// comm lane (transfers, collectives, FSDP gathers and reductions, the
// optimizer step) and the rank's live activations over time; idle time is
// the empty lane; a time axis in seconds, ms or units; a legend; makespan
// (or step), bubble and peak memory under the title.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_RENDER_SVGTIMELINE_H
#define LIB_RENDER_SVGTIMELINE_H

#include "lib/Render/PictureLabels.h"
#include "lib/Schedule/Schedule.h"
#include "lib/Simulate/Simulate.h"

#include "llvm/Support/raw_ostream.h"

namespace sched {

/// Writes a standalone SVG of `schedule` named `name` at the times of
/// `timeline`, which must come from simulating it with
/// SimulationOptions::recordMemory; `labels` title it and add the time
/// after the pipeline.
void writeSvgTimeline(llvm::raw_ostream &os, llvm::StringRef name,
                      const Schedule &schedule, const Timeline &timeline,
                      const PictureLabels &labels = {});

} // namespace sched

#endif // LIB_RENDER_SVGTIMELINE_H
