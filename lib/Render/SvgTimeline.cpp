//===- SvgTimeline.cpp - a simulated schedule as an SVG timeline ----------===//
//
// Layout, top to bottom: two title lines (what was planned; the step's
// figures), then per rank a compute lane, a comm lane and a memory strip,
// then the time axis with its unit, then the legend. Time runs left to
// right at a scale that fits the step (the makespan and, for a plan, the
// time after the pipeline drains) into kPlotWidth pixels. A rank's second
// chunk (V schedules, interleaving) or second pipeline replica (DualPipe)
// is drawn lighter and hatched. Every box carries a <title> (the action and
// its times) for a tooltip.
//
//===----------------------------------------------------------------------===//

#include "lib/Render/SvgTimeline.h"
#include "lib/Render/PictureLabels.h"
#include "lib/Render/XmlText.h"
#include "lib/Schedule/RuntimePlan.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

using namespace sched;

namespace {

constexpr double kLeft = 70;       // room for the rank labels
constexpr double kTop = 52;        // room for the two title lines
constexpr double kAxis = 34;       // the time axis under the ranks
constexpr double kPlotWidth = 960; // the makespan's width
constexpr double kComputeLane = 26;
constexpr double kCommLane = 12;
constexpr double kMemoryStrip = 24;
constexpr double kRowGap = 10;
constexpr double kRowHeight = kComputeLane + kCommLane + kMemoryStrip + kRowGap;
constexpr double kMinBox = 2; // zero-time actions stay visible

/// A kind of box: its legend label, CSS class and colour.
struct BoxStyle {
  llvm::StringLiteral label;
  llvm::StringLiteral cls;
  llvm::StringLiteral fill;
};

constexpr BoxStyle kStyles[] = {
    {"F (forward)", "F", "#4e79a7"},
    {"B (backward)", "B", "#e15759"},
    {"I (backward, inputs)", "I", "#f28e2b"},
    {"W (backward, weights)", "W", "#59a14f"},
    {"send / recv", "p2p", "#8c8c8c"},
    {"collective", "coll", "#b07aa1"},
    {"unshard / reshard / reduce_grad", "fsdp", "#76b7b2"},
    {"optimizer step", "step", "#edc948"},
};

const BoxStyle &styleOf(ActionKind kind) {
  switch (kind) {
  case ActionKind::Forward:
    return kStyles[0];
  case ActionKind::Backward:
    return kStyles[1];
  case ActionKind::BackwardInput:
    return kStyles[2];
  case ActionKind::BackwardWeight:
    return kStyles[3];
  case ActionKind::Send:
  case ActionKind::Recv:
    return kStyles[4];
  case ActionKind::Unshard:
  case ActionKind::Reshard:
  case ActionKind::ReduceGrad:
    return kStyles[6];
  case ActionKind::OptimizerStep:
    return kStyles[7];
  default:
    return kStyles[5];
  }
}

/// A coordinate with two decimals at most, no trailing zeros.
std::string px(double value) {
  return formatNumber(std::round(value * 100) / 100);
}


static double highestPeak(const Timeline &timeline) {
  double peak = 0;
  for (double value : timeline.peakActivations)
    peak = std::max(peak, value);
  return peak;
}

/// Per rank, the stages it computes, in increasing order: a stage's
/// position is its chunk there (0 the first, 1 the V's way back or an
/// interleaved rank's next stage). A few per rank, so no map.
using RankStages = llvm::SmallVector<int32_t, 2>;
static std::vector<RankStages> stagesByRank(const Schedule &schedule) {
  std::vector<RankStages> ranks(schedule.ranks.size());
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    RankStages &stages = ranks[r];
    for (const Action &action : schedule.ranks[r].actions)
      if (isCompute(action.kind) && action.stage >= 0 &&
          !llvm::is_contained(stages, action.stage))
        stages.push_back(action.stage);
    llvm::sort(stages);
  }
  return ranks;
}

class SvgWriter {
public:
  SvgWriter(llvm::raw_ostream &os, llvm::StringRef name,
            const Schedule &schedule, const Timeline &timeline,
            const PictureLabels &labels)
      : os(os), name(name), schedule(schedule), timeline(timeline),
        labels(labels), end(timeline.makespan + std::max(0.0, labels.tail)),
        span(std::max(end, labels.axisEnd)),
        scale(span > 0 ? kPlotWidth / span : 1),
        peakLive(highestPeak(timeline)), axis(span, schedule.secondsPerUnit),
        stages(stagesByRank(schedule)) {}

  void write() {
    const double ranksBottom = kTop + kRowHeight * schedule.ranks.size();
    const double height = ranksBottom + kAxis + 60;
    const double width = kLeft + kPlotWidth + 20;
    os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                        "width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                        "font-family=\"sans-serif\" font-size=\"11\">\n",
                        px(width), px(height));
    writeStyle();
    writeTitle();
    writeTail(ranksBottom);
    for (size_t r = 0; r < schedule.ranks.size(); ++r)
      writeRank(r);
    writeAxis(ranksBottom);
    writeLegend(ranksBottom + kAxis + 10);
    os << "</svg>\n";
  }

private:
  void writeStyle() {
    os << "<style>\n";
    for (const BoxStyle &style : kStyles)
      os << "  ." << style.cls << " { fill: " << style.fill << "; }\n";
    // A hairline between boxes, so that neighbours of one kind stay apart.
    os << "  rect { stroke: #fff; stroke-width: 0.5; }\n"
       << "  .lane { fill: #f4f4f4; stroke: none; }\n"
       << "  .memory { fill: none; stroke: #333; stroke-width: 1; }\n"
       << "  .mb { fill: #fff; font-size: 10px; text-anchor: middle; "
          "dominant-baseline: central; }\n"
       // A later chunk or replica: lighter, with white hatching on top.
       << "  .chunk1 { fill-opacity: 0.55; }\n"
       << "  .hatch { fill: url(#hatch); stroke: none; pointer-events: none; "
          "}\n"
       << "  .tail { fill: #e8e8e8; stroke: none; }\n"
       << "  .axis { stroke: #555; stroke-width: 1; }\n"
       << "  .grid { stroke: #ccc; stroke-width: 0.5; stroke-dasharray: 2 "
          "3; }\n"
       << "  .tick { font-size: 10px; text-anchor: middle; fill: #333; }\n"
       << "</style>\n"
       << "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" "
          "patternUnits=\"userSpaceOnUse\" "
          "patternTransform=\"rotate(45)\"><line x1=\"0\" y1=\"0\" "
          "x2=\"0\" y2=\"6\" stroke=\"#fff\" stroke-width=\"2\"/>"
          "</pattern></defs>\n";
  }

  void writeTitle() {
    double bubble = 0;
    for (double ratio : timeline.bubbleRatio)
      bubble += ratio;
    if (!timeline.bubbleRatio.empty())
      bubble /= timeline.bubbleRatio.size();
    const std::string title =
        labels.title.empty() ? "@" + name.str() : labels.title;
    std::string figures;
    if (labels.tail > 0)
      figures = fmt::format(
          "step {} = pipeline {} + after the pipeline {} (data-parallel "
          "reduction, optimizer)",
          axis.format(end), axis.format(timeline.makespan),
          axis.format(labels.tail));
    else
      figures = "makespan " + axis.format(timeline.makespan);
    figures += fmt::format(", bubble {:.1f}% (mean over ranks), peak memory ",
                           100 * bubble);
    int64_t peakBytes = 0;
    for (int64_t bytes : timeline.peakActivationBytes)
      peakBytes = std::max(peakBytes, bytes);
    figures += peakBytes > 0 ? formatBytes(static_cast<double>(peakBytes)) +
                                   " of activations"
                             : formatNumber(peakLive) + " activations";
    os << "<text class=\"title\" x=\"" << px(kLeft) << "\" y=\"20\" "
       << "font-size=\"14\">" << xmlEscaped(title) << "</text>\n";
    os << "<text class=\"figures\" x=\"" << px(kLeft) << "\" y=\"38\" "
       << "font-size=\"12\">" << xmlEscaped(figures) << "</text>\n";
  }

  /// The time after the pipeline drains, as a band over every rank.
  void writeTail(double ranksBottom) {
    if (!(labels.tail > 0))
      return;
    const double x = kLeft + timeline.makespan * scale;
    os << "<rect class=\"tail\" x=\"" << px(x) << "\" y=\"" << px(kTop)
       << "\" width=\"" << px(labels.tail * scale) << "\" height=\""
       << px(ranksBottom - kTop - kRowGap)
       << "\"><title>after the pipeline: data-parallel reduction and "
          "optimizer step, "
       << xmlEscaped(axis.format(labels.tail)) << "</title></rect>\n";
  }

  /// Ticks, grid lines and labels in the axis unit, and the caption.
  void writeAxis(double ranksBottom) {
    const double y = ranksBottom;
    // The plot's right edge in the schedule's unit, exactly, for readers
    // of the picture (the labels are rounded).
    os << "<g class=\"time-axis\" data-end=\"" << formatNumber(end)
       << "\" data-unit=\"" << (axis.unit().empty() ? "unit" : axis.unit())
       << "\"";
    // Drawn beside longer steps: where the shared axis runs to.
    if (span > end)
      os << " data-span=\"" << formatNumber(span) << "\"";
    os << ">\n";
    os << "<line class=\"axis\" x1=\"" << px(kLeft) << "\" y1=\"" << px(y)
       << "\" x2=\"" << px(kLeft + kPlotWidth) << "\" y2=\"" << px(y)
       << "\"/>\n";
    for (double tick : axis.ticks()) {
      const double x = kLeft + tick * scale;
      os << "<line class=\"grid\" x1=\"" << px(x) << "\" y1=\"" << px(kTop)
         << "\" x2=\"" << px(x) << "\" y2=\"" << px(y) << "\"/>";
      os << "<line class=\"axis\" x1=\"" << px(x) << "\" y1=\"" << px(y)
         << "\" x2=\"" << px(x) << "\" y2=\"" << px(y + 4) << "\"/>";
      os << "<text class=\"tick\" x=\"" << px(x) << "\" y=\"" << px(y + 15)
         << "\">" << xmlEscaped(axis.tickLabel(tick)) << "</text>\n";
    }
    os << "<text class=\"caption\" x=\"" << px(kLeft + kPlotWidth) << "\" y=\""
       << px(y + 29) << "\" text-anchor=\"end\">" << xmlEscaped(axis.caption())
       << "</text>\n";
    os << "</g>\n";
  }

  /// The chunk of `stage` on rank `r`: its place among the rank's stages,
  /// or with pipeline replicas (DualPipe) its replica.
  int32_t chunkOf(size_t r, int32_t stage) const {
    if (schedule.replicas > 1 && schedule.stagesPerReplica() > 0)
      return schedule.replicaOfStage(stage);
    const RankStages &held = stages[r];
    return static_cast<int32_t>(llvm::lower_bound(held, stage) -
                                held.begin());
  }

  /// A time in a tooltip: with its unit where the schedule has one, else
  /// the bare number.
  std::string timeText(double time) const {
    return axis.unit().empty() ? formatNumber(time)
                               : xmlEscaped(axis.format(time));
  }

  void writeBox(size_t r, const Action &action, const ActionTime &time,
                double y, double height) {
    const BoxStyle &style = styleOf(action.kind);
    const double x = kLeft + time.start * scale;
    const double w = std::max(kMinBox, (time.end - time.start) * scale);
    int32_t chunk = 0;
    if (isCompute(action.kind))
      chunk = chunkOf(r, action.stage);
    os << "<rect class=\"" << style.cls << (chunk > 0 ? " chunk1" : "")
       << "\" x=\"" << px(x) << "\" y=\"" << px(y) << "\" width=\"" << px(w)
       << "\" height=\"" << px(height) << "\"><title>"
       << xmlEscaped(describeAction(schedule, action))
       << (chunk > 0 ? fmt::format(" (chunk {})", chunk + 1) : std::string())
       << ": " << timeText(time.start) << " to " << timeText(time.end)
       << "</title></rect>\n";
    if (chunk > 0)
      os << "<rect class=\"hatch\" x=\"" << px(x) << "\" y=\"" << px(y)
         << "\" width=\"" << px(w) << "\" height=\"" << px(height) << "\"/>\n";
    if (isCompute(action.kind) && action.microbatch >= 0 && w >= 8)
      os << "<text class=\"mb\" x=\"" << px(x + w / 2) << "\" y=\""
         << px(y + height / 2) << "\">" << action.microbatch << "</text>\n";
  }

  void writeRank(size_t r) {
    const RankProgram &rank = schedule.ranks[r];
    const double top = kTop + kRowHeight * r;
    const double comm = top + kComputeLane;
    const double memory = comm + kCommLane;
    os << "<g class=\"rank\" id=\"rank" << rank.id << "\">\n";
    os << "<text x=\"4\" y=\"" << px(top + kComputeLane / 2 + 4) << "\">rank "
       << rank.id << "</text>\n";
    os << "<rect class=\"lane\" x=\"" << px(kLeft) << "\" y=\"" << px(top)
       << "\" width=\"" << px(kPlotWidth) << "\" height=\"" << px(kComputeLane)
       << "\"/>\n";
    const std::vector<Action> &actions = rank.actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &action = actions[i];
      if (!isCompute(action.kind)) {
        writeBox(r, action, timeline.times[r][i], comm + 1, kCommLane - 2);
        continue;
      }
      // The members of an overlap run at once: they share the lane's
      // height, first member on top.
      size_t first = i, end = i + 1;
      if (action.bundle != 0) {
        while (first > 0 && actions[first - 1].bundle == action.bundle)
          --first;
        while (end < actions.size() && actions[end].bundle == action.bundle)
          ++end;
      }
      const double height = kComputeLane / (end - first);
      writeBox(r, action, timeline.times[r][i], top + height * (i - first),
               height);
    }
    writeMemory(r, memory);
    os << "</g>\n";
  }

  /// A step line of the rank's live activations, scaled to the highest
  /// peak over all ranks.
  void writeMemory(size_t r, double top) {
    const double peak = peakLive;
    if (r >= timeline.liveActivations.size() || peak <= 0)
      return;
    const double bottom = top + kMemoryStrip - 2;
    auto yOf = [&](double live) {
      return bottom - (kMemoryStrip - 4) * live / peak;
    };
    std::string points = px(kLeft) + "," + px(bottom);
    double live = 0;
    const std::vector<double> &after = timeline.liveActivations[r];
    for (size_t i = 0; i < after.size(); ++i) {
      if (after[i] == live)
        continue;
      const double x = kLeft + timeline.times[r][i].end * scale;
      points += " " + px(x) + "," + px(yOf(live));
      live = after[i];
      points += " " + px(x) + "," + px(yOf(live));
    }
    points += " " + px(kLeft + timeline.makespan * scale) + "," + px(yOf(live));
    os << "<polyline class=\"memory\" points=\"" << points << "\"><title>rank "
       << schedule.ranks[r].id << " live activations (peak "
       << formatNumber(timeline.peakActivations[r]) << ")</title></polyline>\n";
  }

  /// Two rows of four kinds, then the memory line.
  void writeLegend(double top) {
    double x = kLeft, y = top;
    os << "<g class=\"legend\">\n";
    for (size_t k = 0; k < std::size(kStyles); ++k) {
      const BoxStyle &style = kStyles[k];
      if (k == 4) {
        x = kLeft;
        y = top + 16;
      }
      os << "<rect class=\"" << style.cls << "\" x=\"" << px(x) << "\" y=\""
         << px(y) << "\" width=\"10\" height=\"10\"/>";
      os << "<text x=\"" << px(x + 14) << "\" y=\"" << px(y + 9) << "\">"
         << style.label << "</text>\n";
      x += 200;
    }
    os << "<polyline class=\"memory\" points=\"" << px(x) << "," << px(y + 8)
       << " " << px(x + 10) << "," << px(y + 2) << "\"/>";
    os << "<text x=\"" << px(x + 14) << "\" y=\"" << px(y + 9)
       << "\">live activations</text>\n";
    // The third row: what tells chunks apart, and the tail.
    x = kLeft;
    y = top + 32;
    os << "<rect class=\"F chunk1\" x=\"" << px(x) << "\" y=\"" << px(y)
       << "\" width=\"10\" height=\"10\"/><rect class=\"hatch\" x=\"" << px(x)
       << "\" y=\"" << px(y) << "\" width=\"10\" height=\"10\"/>";
    os << "<text x=\"" << px(x + 14) << "\" y=\"" << px(y + 9)
       << "\">lighter, hatched: a rank's second chunk (or DualPipe's second "
          "replica)</text>\n";
    if (labels.tail > 0) {
      x += 400;
      os << "<rect class=\"tail\" x=\"" << px(x) << "\" y=\"" << px(y)
         << "\" width=\"10\" height=\"10\"/>";
      os << "<text x=\"" << px(x + 14) << "\" y=\"" << px(y + 9)
         << "\">after the pipeline: data-parallel reduction, optimizer "
            "step</text>\n";
    }
    os << "</g>\n";
  }

  llvm::raw_ostream &os;
  llvm::StringRef name;
  const Schedule &schedule;
  const Timeline &timeline;
  const PictureLabels &labels;
  /// The right edge of the plot: the makespan and the tail.
  double end;
  /// The time the plot's width stands for: the step, or a longer one that
  /// panels drawn side by side share (PictureLabels::axisEnd).
  double span;
  double scale;
  /// The highest peak over all ranks, which every rank's memory line is
  /// scaled to (found per rank it made the picture quadratic in the ranks:
  /// 21 s at 131,072).
  double peakLive;
  TimeAxis axis;
  std::vector<RankStages> stages;
};

} // namespace

void sched::writeSvgTimeline(llvm::raw_ostream &os, llvm::StringRef name,
                             const Schedule &schedule, const Timeline &timeline,
                             const PictureLabels &labels) {
  SvgWriter(os, name, schedule, timeline, labels).write();
}
