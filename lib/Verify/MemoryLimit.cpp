//===- MemoryLimit.cpp - a device memory limit, exact ---------------------===//

#include "lib/Verify/MemoryLimit.h"
#include "lib/Verify/MemoryCheck.h"

#include "llvm/ADT/StringExtras.h"

#include <charconv>
#include <cmath>

using namespace sched;

/// Millionths past which a limit bounds nothing: 2^122 millionths are
/// 2^102 bytes, more than 2^32 actions of 2^63 bytes each. A value below it,
/// times ten plus a digit, stays below 2^127: parse never overflows.
static constexpr __int128 kUnboundedMillionths = static_cast<__int128>(1)
                                                 << 122;

/// The fraction digits a limit keeps: millionths.
static constexpr int kKeptDigits = 6;

static llvm::Error invalid(llvm::StringRef text) {
  return llvm::createStringError(
      "'" + text.str() +
      "' is not a number >= 0 (digits with an optional fraction and "
      "exponent, or inf for no limit)");
}

llvm::Expected<MemoryLimit> MemoryLimit::parse(llvm::StringRef text) {
  const llvm::StringRef trimmed = text.trim();
  MemoryLimit limit;
  if (trimmed.equals_insensitive("inf") ||
      trimmed.equals_insensitive("infinity")) {
    limit.unbounded = true;
    return limit;
  }
  llvm::StringRef rest = trimmed;
  rest.consume_front("+");
  // The significant digits, and the power of ten they are scaled by.
  std::string digits;
  int64_t exponent = 0;
  bool anyDigit = false;
  while (!rest.empty() && llvm::isDigit(rest.front())) {
    digits.push_back(rest.front());
    rest = rest.drop_front();
    anyDigit = true;
  }
  if (rest.consume_front(".")) {
    while (!rest.empty() && llvm::isDigit(rest.front())) {
      digits.push_back(rest.front());
      rest = rest.drop_front();
      --exponent;
      anyDigit = true;
    }
  }
  if (!anyDigit)
    return invalid(text);
  if (rest.consume_front("e") || rest.consume_front("E")) {
    const bool negative = rest.consume_front("-");
    if (!negative)
      rest.consume_front("+");
    if (rest.empty() || !llvm::all_of(rest, llvm::isDigit))
      return invalid(text);
    // Past 10^4 either way the limit is 0 or unbounded alike.
    int64_t written = 0;
    for (char c : rest)
      written = std::min<int64_t>(written * 10 + (c - '0'), 10'000);
    exponent += negative ? -written : written;
    rest = "";
  }
  if (!rest.empty())
    return invalid(text);
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  // floor(digits x 10^(exponent + 6)): append zeros, or drop digits.
  const int64_t shift = exponent + kKeptDigits;
  if (shift < 0)
    digits.resize(digits.size() > static_cast<size_t>(-shift)
                      ? digits.size() - static_cast<size_t>(-shift)
                      : 0);
  else if (!digits.empty())
    digits.append(static_cast<size_t>(std::min<int64_t>(shift, 64)), '0');
  for (char c : digits) {
    limit.millionths = limit.millionths * 10 + (c - '0');
    if (limit.millionths >= kUnboundedMillionths) {
      limit.unbounded = true;
      return limit;
    }
  }
  return limit;
}

llvm::Expected<MemoryLimit> MemoryLimit::fromDouble(double value) {
  if (value == 0)
    return fromInteger(0);
  if (std::isinf(value) && value > 0) {
    MemoryLimit limit;
    limit.unbounded = true;
    return limit;
  }
  char buffer[64];
  const std::to_chars_result written =
      std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (written.ec != std::errc())
    return invalid("?");
  return parse(llvm::StringRef(buffer, written.ptr - buffer));
}

MemoryLimit MemoryLimit::fromInteger(uint64_t value) {
  MemoryLimit limit;
  limit.millionths = static_cast<__int128>(value) * 1'000'000;
  return limit;
}

__int128 MemoryLimit::floorScaled(int64_t perUnit) const {
  return millionths / (1'000'000 / perUnit);
}

std::string MemoryLimit::str() const {
  if (unbounded)
    return "inf";
  std::string text = toDecimal(millionths / 1'000'000);
  std::string fraction = toDecimal(millionths % 1'000'000);
  fraction.insert(0, kKeptDigits - fraction.size(), '0');
  fraction.erase(fraction.find_last_not_of('0') + 1);
  return fraction.empty() ? text : text + "." + fraction;
}
