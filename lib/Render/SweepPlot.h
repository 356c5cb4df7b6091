//===- SweepPlot.h - a planner sweep as an SVG line plot --------*- C++ -*-===//
//
// Draws `schedc plan --sweep ... -o FILE.svg`: the best step time with and
// without pipeline parallelism against the swept cluster figure, one line
// each, the value where PP stops paying marked, axes with their units and a
// legend. Plain data in, so the renderer does not depend on the planner.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_RENDER_SWEEPPLOT_H
#define LIB_RENDER_SWEEPPLOT_H

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace sched {

/// One line of the plot: a y value (seconds) per swept value, none where
/// nothing fits (the line breaks there).
struct SweepPlotSeries {
  std::string label;
  /// The stroke colour, as SVG takes it.
  std::string colour;
  std::vector<std::optional<double>> values;
};

/// What the plot shows.
struct SweepPlotData {
  std::string title;
  /// The x axis: its label with the unit, and how a swept value is written
  /// on a tick ("128", "50 GB/s").
  std::string xLabel;
  std::vector<double> xValues;
  std::vector<std::string> xTickLabels;
  std::string yLabel;
  std::vector<SweepPlotSeries> series;
  /// The swept value where PP stops paying, and the words beside its mark.
  std::optional<double> crossover;
  std::string crossoverLabel;
  /// A line under the plot (what the crossover means, or that there is
  /// none).
  std::string note;
};

/// Writes a standalone SVG of `data` (x on a logarithmic scale when every
/// value is positive and they span more than a factor of 4).
void writeSweepPlot(llvm::raw_ostream &os, const SweepPlotData &data);

} // namespace sched

#endif // LIB_RENDER_SWEEPPLOT_H
