//===- PictureLabels.cpp - what a timeline picture says -------------------===//

#include "lib/Render/PictureLabels.h"

#include <fmt/format.h>

#include <cmath>

using namespace sched;

double sched::niceTickStep(double span, double parts) {
  const double raw = span / parts;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0})
    if (factor * power >= raw)
      return factor * power;
  return 10 * power;
}

TimeAxis::TimeAxis(double end, double secondsPerUnit) {
  if (secondsPerUnit > 0) {
    const double seconds = end * secondsPerUnit;
    if (seconds >= 1 || seconds == 0) {
      unitName = "s";
      scale = secondsPerUnit;
    } else if (seconds >= 1e-3) {
      unitName = "ms";
      scale = secondsPerUnit * 1e3;
    } else {
      unitName = "us";
      scale = secondsPerUnit * 1e6;
    }
  }
  if (!(end > 0) || !std::isfinite(end))
    return;
  const double step = niceTickStep(end * scale, 10) / scale;
  for (double tick = 0; tick <= end * (1 + 1e-9); tick += step)
    tickTimes.push_back(tick);
}

std::string sched::groupThousands(long long value) {
  std::string digits =
      fmt::format("{}", value < 0 ? -(value + 1) + 1ull
                                  : static_cast<unsigned long long>(value));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string sched::formatBytes(double bytes) {
  static constexpr const char *kUnits[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && std::fabs(bytes) >= 1000) {
    bytes /= 1000;
    ++unit;
  }
  if (unit == 0)
    return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.{}f} {}", bytes,
                     std::fabs(bytes) >= 100  ? 0
                     : std::fabs(bytes) >= 10 ? 1
                                              : 2,
                     kUnits[unit]);
}

/// `value` with 4 significant digits, at most 3 decimals, and thousands
/// separators in its integer part.
static std::string significant(double value) {
  const double magnitude = std::fabs(value);
  const int decimals =
      magnitude == 0 || magnitude >= 1000
          ? 0
          : std::max(0, std::min(3, 3 - static_cast<int>(std::floor(
                                            std::log10(magnitude)))));
  if (magnitude >= 1000)
    return groupThousands(std::llround(value));
  return fmt::format("{:.{}f}", value, decimals);
}

std::string TimeAxis::format(double time) const {
  // Abstract units are exact small numbers (stage times of 1 and 2): as
  // they are. Seconds get 4 significant digits in the axis unit.
  if (unitName.empty())
    return fmt::format("{:g}", time) + (time == 1 ? " unit" : " units");
  return significant(time * scale) + " " + unitName;
}

std::string TimeAxis::tickLabel(double time) const {
  // Ticks are multiples of 1, 2 or 5 times a power of ten: %g writes them
  // exactly.
  const double value = time * scale;
  if (std::fabs(value) >= 1000)
    return significant(value);
  return fmt::format("{:g}", std::round(value * 1e6) / 1e6);
}

std::string TimeAxis::caption() const {
  return "time (" + (unitName.empty() ? std::string("units") : unitName) + ")";
}
