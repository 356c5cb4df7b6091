//===- SweepPlot.cpp - a planner sweep as an SVG line plot ----------------===//

#include "lib/Render/SweepPlot.h"
#include "lib/Render/PictureLabels.h"
#include "lib/Render/XmlText.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace sched;

namespace {
/// Where the plot area lies in the picture (pixels).
struct Frame {
  double left = 90, top = 64, width = 780, height = 416;
  double right() const { return left + width; }
  double bottom() const { return top + height; }
};

/// Maps swept values to x pixels, logarithmically or linearly.
struct XScale {
  bool logarithmic = false;
  double lo = 0, hi = 1;
  Frame frame;

  double at(double value) const {
    const double v = logarithmic ? std::log(value) : value;
    return frame.left + (v - lo) / (hi - lo) * frame.width;
  }
};
} // namespace

static XScale xScale(const std::vector<double> &values, const Frame &frame) {
  XScale scale;
  scale.frame = frame;
  const auto [minIt, maxIt] = std::minmax_element(values.begin(), values.end());
  double lo = values.empty() ? 1 : *minIt;
  double hi = values.empty() ? 2 : *maxIt;
  scale.logarithmic = lo > 0 && hi / lo > 4;
  if (scale.logarithmic) {
    lo = std::log(lo);
    hi = std::log(hi);
  }
  if (hi <= lo) {
    lo -= 1;
    hi += 1;
  }
  // A margin so the end points and their labels sit inside the frame.
  const double pad = (hi - lo) * 0.05;
  scale.lo = lo - pad;
  scale.hi = hi + pad;
  return scale;
}

void sched::writeSweepPlot(llvm::raw_ostream &os, const SweepPlotData &data) {
  const int width = 900, height = 600;
  const Frame frame;
  const XScale x = xScale(data.xValues, frame);
  double maxY = 0;
  for (const SweepPlotSeries &s : data.series)
    for (const std::optional<double> &v : s.values)
      if (v)
        maxY = std::max(maxY, *v);
  if (maxY <= 0)
    maxY = 1;
  const double step = niceTickStep(maxY * 1.05, 6);
  const double topY = std::ceil(maxY * 1.05 / step) * step;
  auto y = [&](double seconds) {
    return frame.bottom() - seconds / topY * frame.height;
  };

  os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                      "font-family=\"sans-serif\" font-size=\"13\">\n",
                      width, height);
  os << llvm::formatv("<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
                      width, height);
  os << llvm::formatv("<text class=\"title\" x=\"{0}\" y=\"28\" "
                      "text-anchor=\"middle\" font-size=\"16\" "
                      "font-weight=\"bold\">{1}</text>\n",
                      width / 2, xmlEscaped(data.title));

  // Grid and y ticks.
  for (double v = 0; v <= topY + step / 2; v += step) {
    os << llvm::formatv("<line class=\"grid\" x1=\"{0}\" y1=\"{1:f1}\" "
                        "x2=\"{2}\" y2=\"{1:f1}\" stroke=\"#e0e0e0\"/>\n",
                        frame.left, y(v), frame.right());
    os << llvm::formatv("<text class=\"y-tick\" x=\"{0}\" y=\"{1:f1}\" "
                        "text-anchor=\"end\" dominant-baseline=\"middle\">"
                        "{2}</text>\n",
                        frame.left - 8, y(v),
                        step < 1 ? llvm::formatv("{0:f1}", v).str()
                                 : llvm::formatv("{0:f0}", v).str());
  }
  // X ticks at every swept value.
  for (size_t i = 0; i < data.xValues.size(); ++i) {
    const double px = x.at(data.xValues[i]);
    os << llvm::formatv("<line class=\"x-tick\" x1=\"{0:f1}\" y1=\"{1}\" "
                        "x2=\"{0:f1}\" y2=\"{2}\" stroke=\"#333\"/>\n",
                        px, frame.bottom(), frame.bottom() + 5);
    os << llvm::formatv("<text class=\"x-tick\" x=\"{0:f1}\" y=\"{1}\" "
                        "text-anchor=\"middle\">{2}</text>\n",
                        px, frame.bottom() + 20,
                        i < data.xTickLabels.size()
                            ? xmlEscaped(data.xTickLabels[i])
                            : std::string());
  }
  // Axes and their labels.
  os << llvm::formatv("<path class=\"axes\" d=\"M{0},{1} V{2} H{3}\" "
                      "fill=\"none\" stroke=\"#333\"/>\n",
                      frame.left, frame.top, frame.bottom(), frame.right());
  os << llvm::formatv("<text class=\"axis-label\" x=\"{0}\" y=\"{1}\" "
                      "text-anchor=\"middle\">{2}</text>\n",
                      frame.left + frame.width / 2, frame.bottom() + 46,
                      xmlEscaped(data.xLabel));
  os << llvm::formatv("<text class=\"axis-label\" x=\"24\" y=\"{0}\" "
                      "text-anchor=\"middle\" transform=\"rotate(-90 24 {0})\">"
                      "{1}</text>\n",
                      frame.top + frame.height / 2, xmlEscaped(data.yLabel));

  // The crossover, under the lines.
  if (data.crossover) {
    const double px = x.at(*data.crossover);
    os << llvm::formatv("<line class=\"crossover\" x1=\"{0:f1}\" y1=\"{1}\" "
                        "x2=\"{0:f1}\" y2=\"{2}\" stroke=\"#555\" "
                        "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n",
                        px, frame.top, frame.bottom());
    const bool leftSide = px > frame.left + frame.width * 0.6;
    os << llvm::formatv("<text class=\"crossover-label\" x=\"{0:f1}\" "
                        "y=\"{1}\" text-anchor=\"{2}\" fill=\"#333\">{3}"
                        "</text>\n",
                        leftSide ? px - 6 : px + 6, frame.top + 16,
                        leftSide ? "end" : "start",
                        xmlEscaped(data.crossoverLabel));
  }

  // The lines: a polyline per run of values that fit, a dot per point.
  for (const SweepPlotSeries &s : data.series) {
    std::vector<std::string> runs(1);
    for (size_t i = 0; i < s.values.size() && i < data.xValues.size(); ++i) {
      if (!s.values[i]) {
        if (!runs.back().empty())
          runs.emplace_back();
        continue;
      }
      runs.back() +=
          llvm::formatv("{0}{1:f1},{2:f1}", runs.back().empty() ? "" : " ",
                        x.at(data.xValues[i]), y(*s.values[i]));
    }
    for (const std::string &points : runs)
      if (!points.empty())
        os << llvm::formatv("<polyline class=\"series\" data-label=\"{0}\" "
                            "points=\"{1}\" fill=\"none\" stroke=\"{2}\" "
                            "stroke-width=\"2.5\"/>\n",
                            xmlEscaped(s.label), points, s.colour);
    for (size_t i = 0; i < s.values.size() && i < data.xValues.size(); ++i)
      if (s.values[i])
        os << llvm::formatv("<circle class=\"point\" cx=\"{0:f1}\" "
                            "cy=\"{1:f1}\" r=\"4\" fill=\"{2}\"><title>{3}: "
                            "{4:f2} s at {5}</title></circle>\n",
                            x.at(data.xValues[i]), y(*s.values[i]), s.colour,
                            xmlEscaped(s.label), *s.values[i],
                            i < data.xTickLabels.size()
                                ? xmlEscaped(data.xTickLabels[i])
                                : std::string());
  }

  // The legend, in the first corner of the plot that no line crosses
  // (bottom right, top right, bottom left, top left; else bottom right).
  const double legendWidth = 170;
  const double legendHeight = 14 + 22 * static_cast<double>(data.series.size());
  std::vector<std::pair<double, double>> drawn;
  for (const SweepPlotSeries &s : data.series)
    for (size_t i = 0; i + 1 < s.values.size() && i + 1 < data.xValues.size();
         ++i) {
      if (!s.values[i] || !s.values[i + 1])
        continue;
      // Samples along each segment.
      for (int k = 0; k <= 20; ++k) {
        const double f = k / 20.0;
        drawn.emplace_back((1 - f) * x.at(data.xValues[i]) +
                               f * x.at(data.xValues[i + 1]),
                           (1 - f) * y(*s.values[i]) + f * y(*s.values[i + 1]));
      }
    }
  const double rightX = frame.right() - legendWidth - 10;
  const double leftX = frame.left + 10;
  const double upperY = frame.top + 28;
  const double bottomY = frame.bottom() - legendHeight - 10;
  double lx = rightX, ly = bottomY;
  for (auto [cx, cy] : {std::pair{rightX, bottomY}, std::pair{rightX, upperY},
                        std::pair{leftX, bottomY}, std::pair{leftX, upperY}}) {
    const bool clear = llvm::none_of(drawn, [&](auto p) {
      return p.first >= cx - 6 && p.first <= cx + legendWidth + 6 &&
             p.second >= cy - 6 && p.second <= cy + legendHeight + 6;
    });
    if (clear) {
      lx = cx;
      ly = cy;
      break;
    }
  }
  os << llvm::formatv("<g class=\"legend\"><rect x=\"{0}\" y=\"{1}\" "
                      "width=\"{2}\" height=\"{3}\" fill=\"white\" "
                      "fill-opacity=\"0.9\" stroke=\"#999\"/>\n",
                      lx, ly, legendWidth, legendHeight);
  for (size_t i = 0; i < data.series.size(); ++i) {
    const double ry = ly + 18 + 22 * static_cast<double>(i);
    os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" "
                        "stroke=\"{3}\" stroke-width=\"2.5\"/>\n",
                        lx + 10, ry, lx + 40, data.series[i].colour);
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" "
                        "dominant-baseline=\"middle\">{2}</text>\n",
                        lx + 48, ry, xmlEscaped(data.series[i].label));
  }
  os << "</g>\n";
  if (!data.note.empty())
    os << llvm::formatv("<text class=\"note\" x=\"{0}\" y=\"{1}\" "
                        "text-anchor=\"middle\" fill=\"#333\">{2}</text>\n",
                        width / 2, height - 22, xmlEscaped(data.note));
  os << "</svg>\n";
}
