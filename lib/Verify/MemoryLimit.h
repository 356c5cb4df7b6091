//===- MemoryLimit.h - a device memory limit, exact -------------*- C++ -*-===//
//
// The limit a schedule's memory is checked against, kept as the decimal it
// was written as: 1.9 activation units is 1,900,000 millionths, not the
// 1,899,999 that the nearest double (1.899999999999999911...) gives, and
// 9007199254740993 bytes is that many bytes, not 2^53. Limits of any
// magnitude are allowed; past what a schedule can hold they bound nothing.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_VERIFY_MEMORYLIMIT_H
#define LIB_VERIFY_MEMORYLIMIT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace sched {

class MemoryLimit {
public:
  /// Reads a limit as written: a decimal number >= 0 with an optional
  /// fraction and exponent (4, 1.9, 8e10, 0.5E-3), or `inf` for none. The
  /// error says "'TEXT' is not a number >= 0 (...)"; callers name the
  /// option.
  static llvm::Expected<MemoryLimit> parse(llvm::StringRef text);
  /// The limit a double stands for: its shortest decimal (1.9 for the
  /// double nearest 1.9), as a program that wrote that literal meant it.
  /// Negative, NaN: an error.
  static llvm::Expected<MemoryLimit> fromDouble(double value);
  /// A whole number of bytes or units (>= 0).
  static MemoryLimit fromInteger(uint64_t value);

  /// True for `inf`, and for limits past anything a schedule can hold.
  bool isUnbounded() const { return unbounded; }
  /// The largest whole number of `1/perUnit` parts within the limit:
  /// floor(limit x perUnit), for perUnit 1 (bytes) or 10^6 (millionths of
  /// an activation unit). Only for bounded limits.
  __int128 floorScaled(int64_t perUnit) const;
  /// The limit as a decimal (up to six fraction digits: what it keeps).
  std::string str() const;

private:
  MemoryLimit() = default;
  /// floor(limit x 10^6).
  __int128 millionths = 0;
  bool unbounded = false;
};

} // namespace sched

#endif // LIB_VERIFY_MEMORYLIMIT_H
