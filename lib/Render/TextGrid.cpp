//===- TextGrid.cpp - a schedule as a text grid ---------------------------===//
//
// The grid is written a row at a time: beyond the simulated timeline it
// holds one row's text, so printing costs a few bytes per action however
// long the schedule.
//
//===----------------------------------------------------------------------===//

#include "lib/Render/TextGrid.h"
#include "lib/Simulate/Simulate.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace sched;

/// Calls `cell(step, text)` for every step at which rank `r` computes, in
/// order; the labels of an overlap share their step, joined by "+".
static void
forEachCell(const Schedule &schedule, const Timeline &timeline, size_t r,
            bool withStage,
            llvm::function_ref<void(size_t, llvm::StringRef)> cell) {
  const std::vector<Action> &actions = schedule.ranks[r].actions;
  std::string text;
  size_t at = 0;
  for (size_t i = 0; i < actions.size(); ++i) {
    if (!isCompute(actions[i].kind))
      continue;
    const auto step =
        static_cast<size_t>(std::lround(timeline.times[r][i].start));
    // A rank runs its actions in order, so one step's actions are adjacent.
    if (!text.empty() && step != at) {
      cell(at, text);
      text.clear();
    }
    if (!text.empty())
      text += '+';
    text += actionLabel(actions[i], withStage);
    at = step;
  }
  if (!text.empty())
    cell(at, text);
}

llvm::Error sched::printTextGrid(llvm::raw_ostream &os,
                                 const Schedule &schedule, int64_t maxBytes,
                                 llvm::StringRef raise) {
  SimulationOptions options;
  options.unitSteps = true;
  llvm::Expected<Timeline> timeline = simulate(schedule, options);
  if (!timeline)
    return timeline.takeError();
  const size_t steps = static_cast<size_t>(std::lround(timeline->makespan));
  const bool withStage =
      static_cast<size_t>(schedule.numStages) != schedule.ranks.size();

  size_t width = 1;
  for (size_t r = 0; r < schedule.ranks.size(); ++r)
    forEachCell(schedule, *timeline, r, withStage,
                [&](size_t, llvm::StringRef text) {
                  width = std::max(width, text.size());
                });
  size_t labelWidth = 0;
  for (const RankProgram &rank : schedule.ranks)
    labelWidth =
        std::max(labelWidth, llvm::formatv("rank {0}", rank.id).str().size());

  // A header and a row per rank, each a label and a padded cell per step.
  const size_t rows = schedule.ranks.size() + 1;
  const double bytes =
      double(rows) * (double(labelWidth) + double(steps) * (width + 1) + 1);
  if (llvm::Error error = checkOutputBudget(
          bytes > double(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(bytes),
          maxBytes,
          llvm::formatv("the text grid ({0} rows of {1} steps)", rows, steps)
              .str(),
          raise))
    return error;

  // Rows are padded to the column width; trailing blanks are dropped.
  std::string line;
  llvm::raw_string_ostream lineStream(line);
  size_t next = 0;
  auto put = [&](size_t step, llvm::StringRef text) {
    for (; next < step; ++next)
      lineStream << ' ' << llvm::left_justify(".", width);
    lineStream << ' ' << llvm::left_justify(text, width);
    next = step + 1;
  };
  auto startRow = [&](llvm::StringRef label) {
    line.clear();
    lineStream << llvm::left_justify(label, labelWidth);
    next = 0;
  };
  auto endRow = [&] {
    for (; next < steps; ++next)
      lineStream << ' ' << llvm::left_justify(".", width);
    os << llvm::StringRef(line).rtrim() << '\n';
  };
  startRow("");
  for (size_t step = 0; step < steps; ++step)
    put(step, std::to_string(step));
  endRow();
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    startRow(llvm::formatv("rank {0}", schedule.ranks[r].id).str());
    forEachCell(schedule, *timeline, r, withStage, put);
    endRow();
  }
  return llvm::Error::success();
}
