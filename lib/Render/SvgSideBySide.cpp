//===- SvgSideBySide.cpp - schedules drawn one above another --------------===//

#include "lib/Render/SvgSideBySide.h"
#include "lib/Render/SvgTimeline.h"
#include "lib/Render/XmlText.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <algorithm>

using namespace sched;

/// The number in `attribute="..."` of the first tag of `svg`.
static double rootAttribute(llvm::StringRef svg, llvm::StringRef attribute) {
  llvm::StringRef tag = svg.substr(0, svg.find('>'));
  const size_t at = tag.find((" " + attribute + "=\"").str());
  if (at == llvm::StringRef::npos)
    return 0;
  llvm::StringRef value = tag.substr(at + attribute.size() + 3);
  value = value.substr(0, value.find('"'));
  double number = 0;
  return value.getAsDouble(number) ? 0 : number;
}

void sched::writeSvgSideBySide(llvm::raw_ostream &os, llvm::StringRef title,
                               llvm::ArrayRef<SvgPanel> panels) {
  double longest = 0;
  for (const SvgPanel &panel : panels)
    longest = std::max(longest, panel.timeline->makespan +
                                    std::max(0.0, panel.labels.tail));
  constexpr double kTitle = 36;
  std::vector<std::string> drawn;
  double width = 0, height = kTitle;
  for (const SvgPanel &panel : panels) {
    PictureLabels labels = panel.labels;
    labels.axisEnd = longest;
    std::string svg;
    llvm::raw_string_ostream stream(svg);
    writeSvgTimeline(stream, panel.name, *panel.schedule, *panel.timeline,
                     labels);
    width = std::max(width, rootAttribute(svg, "width"));
    height += rootAttribute(svg, "height");
    drawn.push_back(std::move(svg));
  }
  os << fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
                    "height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                    "font-family=\"sans-serif\" font-size=\"11\">\n",
                    width, height);
  os << fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n", width,
                    height);
  os << fmt::format("<text class=\"title\" x=\"10\" y=\"22\" font-size=\"15\" "
                    "font-weight=\"bold\">{}</text>\n",
                    xmlEscaped(title));
  double y = kTitle;
  for (size_t i = 0; i < drawn.size(); ++i) {
    // A nested <svg> places the panel; its own root tag gains the offset.
    llvm::StringRef svg = drawn[i];
    const size_t open = svg.find("<svg ");
    os << fmt::format("<g class=\"panel\" data-panel=\"{}\">\n", i + 1);
    os << svg.substr(0, open + 5) << fmt::format("x=\"0\" y=\"{}\" ", y)
       << svg.substr(open + 5) << "</g>\n";
    y += rootAttribute(svg, "height");
  }
  os << "</svg>\n";
}
