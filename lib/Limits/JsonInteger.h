//===- JsonInteger.h - integers of llvm::json values, safely ----*- C++ -*-===//
//
// llvm::json::Value::getAsInteger converts a double up to
// double(INT64_MAX) = 2^63 to int64_t, and 2^63 does not fit: undefined
// behaviour on `9223372036854775807.8` (sched-description-fuzzer found it).
// The readers of descriptions and plans take integers through this.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_LIMITS_JSONINTEGER_H
#define LIB_LIMITS_JSONINTEGER_H

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>

namespace sched {

/// The value as an int64_t when it is one exactly: an integer, or a whole
/// double within [-2^63, 2^63); std::nullopt otherwise.
std::optional<int64_t> jsonInteger(const llvm::json::Value &value);

} // namespace sched

#endif // LIB_LIMITS_JSONINTEGER_H
