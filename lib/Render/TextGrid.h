//===- TextGrid.h - a schedule as a text grid -------------------*- C++ -*-===//
//
// Prints a schedule as a grid: a row per rank, a column per time step of a
// unit-step simulation, "." where a rank idles.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_RENDER_TEXTGRID_H
#define LIB_RENDER_TEXTGRID_H

#include "lib/Limits/ResourceLimits.h"
#include "lib/Schedule/Schedule.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace sched {

/// Prints `schedule` as a grid, each compute action taking one step. Fails
/// when the schedule cannot run to the end, or, before printing, when the
/// grid would be more than `maxBytes` of text (it grows with ranks x steps:
/// 100,000 ranks of one microbatch are 10^10 cells); `raise` says how to
/// raise that (lib/Limits).
llvm::Error
printTextGrid(llvm::raw_ostream &os, const Schedule &schedule,
              int64_t maxBytes = kDefaultMemoryBudget,
              llvm::StringRef raise = "schedc generate --memory-budget=SIZE");

} // namespace sched

#endif // LIB_RENDER_TEXTGRID_H
