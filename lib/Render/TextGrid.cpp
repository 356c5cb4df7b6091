//===- TextGrid.cpp - a schedule as a text grid ---------------------------===//

#include "lib/Render/TextGrid.h"
#include "lib/Simulate/Simulate.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace sched;

llvm::Error sched::printTextGrid(llvm::raw_ostream &os,
                                 const Schedule &schedule) {
  SimulationOptions options;
  options.unitSteps = true;
  llvm::Expected<Timeline> timeline = simulate(schedule, options);
  if (!timeline)
    return timeline.takeError();
  const size_t steps = static_cast<size_t>(std::lround(timeline->makespan));
  const bool withStage =
      static_cast<size_t>(schedule.numStages) != schedule.ranks.size();

  std::vector<std::vector<std::string>> cells(
      schedule.ranks.size(), std::vector<std::string>(steps, "."));
  size_t width = 1;
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      if (!isCompute(actions[i].kind))
        continue;
      const size_t step =
          static_cast<size_t>(std::lround(timeline->times[r][i].start));
      std::string &cell = cells[r][step];
      std::string label = actionLabel(actions[i], withStage);
      // An overlap puts two actions in one step.
      cell = cell == "." ? label : cell + "+" + label;
      width = std::max(width, cell.size());
    }
  }

  size_t labelWidth = 0;
  for (const RankProgram &rank : schedule.ranks)
    labelWidth = std::max(labelWidth, llvm::formatv("rank {0}", rank.id)
                                          .str()
                                          .size());
  // Rows are padded to the column width; trailing blanks are dropped.
  auto emitRow = [&](std::string label, llvm::ArrayRef<std::string> row) {
    std::string line;
    llvm::raw_string_ostream lineStream(line);
    lineStream << llvm::left_justify(label, labelWidth);
    for (const std::string &cell : row)
      lineStream << ' ' << llvm::left_justify(cell, width);
    os << llvm::StringRef(line).rtrim() << '\n';
  };
  std::vector<std::string> header;
  for (size_t step = 0; step < steps; ++step)
    header.push_back(std::to_string(step));
  emitRow("", header);
  for (size_t r = 0; r < schedule.ranks.size(); ++r)
    emitRow(llvm::formatv("rank {0}", schedule.ranks[r].id).str(), cells[r]);
  return llvm::Error::success();
}
