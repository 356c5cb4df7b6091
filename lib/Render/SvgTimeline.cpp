//===- SvgTimeline.cpp - a simulated schedule as an SVG timeline ----------===//
//
// Layout, top to bottom: the title, then per rank a compute lane, a comm
// lane and a memory strip, then the legend. Time runs left to right at a
// scale that fits the makespan into kPlotWidth pixels. Every box carries a
// <title> (the action and its times) for a tooltip.
//
//===----------------------------------------------------------------------===//

#include "lib/Render/SvgTimeline.h"
#include "lib/Render/XmlText.h"
#include "lib/Schedule/RuntimePlan.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace sched;

namespace {

constexpr double kLeft = 70;       // room for the rank labels
constexpr double kTop = 40;        // room for the title
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

class SvgWriter {
public:
  SvgWriter(llvm::raw_ostream &os, llvm::StringRef name,
            const Schedule &schedule, const Timeline &timeline)
      : os(os), name(name), schedule(schedule), timeline(timeline),
        scale(timeline.makespan > 0 ? kPlotWidth / timeline.makespan : 1),
        peakLive(highestPeak(timeline)) {}

  void write() {
    const double height = kTop + kRowHeight * schedule.ranks.size() + 50;
    const double width = kLeft + kPlotWidth + 20;
    os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                        "width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                        "font-family=\"sans-serif\" font-size=\"11\">\n",
                        px(width), px(height));
    writeStyle();
    writeTitle();
    for (size_t r = 0; r < schedule.ranks.size(); ++r)
      writeRank(r);
    writeLegend(kTop + kRowHeight * schedule.ranks.size() + 10);
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
       << "</style>\n";
  }

  void writeTitle() {
    double bubble = 0;
    for (double ratio : timeline.bubbleRatio)
      bubble += ratio;
    if (!timeline.bubbleRatio.empty())
      bubble /= timeline.bubbleRatio.size();
    os << "<text class=\"title\" x=\"" << px(kLeft) << "\" y=\"20\" "
       << "font-size=\"14\">@" << xmlEscaped(name) << ": makespan "
       << formatNumber(timeline.makespan) << ", bubble "
       << formatNumber(std::round(bubble * 1000) / 1000)
       << " (mean over ranks), peak memory " << formatNumber(peakLive)
       << " activations</text>\n";
  }

  void writeBox(const Action &action, const ActionTime &time, double y,
                double height) {
    const BoxStyle &style = styleOf(action.kind);
    const double x = kLeft + time.start * scale;
    const double w = std::max(kMinBox, (time.end - time.start) * scale);
    os << "<rect class=\"" << style.cls << "\" x=\"" << px(x) << "\" y=\""
       << px(y) << "\" width=\"" << px(w) << "\" height=\"" << px(height)
       << "\"><title>" << xmlEscaped(describeAction(schedule, action)) << ": "
       << formatNumber(time.start) << " to " << formatNumber(time.end)
       << "</title></rect>\n";
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
        writeBox(action, timeline.times[r][i], comm + 1, kCommLane - 2);
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
      writeBox(action, timeline.times[r][i], top + height * (i - first),
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
    points += " " + px(kLeft + kPlotWidth) + "," + px(yOf(live));
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
    os << "</g>\n";
  }

  llvm::raw_ostream &os;
  llvm::StringRef name;
  const Schedule &schedule;
  const Timeline &timeline;
  double scale;
  /// The highest peak over all ranks, which every rank's memory line is
  /// scaled to (found per rank it made the picture quadratic in the ranks:
  /// 21 s at 131,072).
  double peakLive;
};

} // namespace

void sched::writeSvgTimeline(llvm::raw_ostream &os, llvm::StringRef name,
                             const Schedule &schedule,
                             const Timeline &timeline) {
  SvgWriter(os, name, schedule, timeline).write();
}
