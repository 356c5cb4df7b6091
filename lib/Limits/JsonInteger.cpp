//===- JsonInteger.cpp - integers of llvm::json values, safely ------------===//

#include "lib/Limits/JsonInteger.h"

using namespace sched;

std::optional<int64_t> sched::jsonInteger(const llvm::json::Value &value) {
  std::optional<double> number = value.getAsNumber();
  if (!number)
    return std::nullopt;
  // Written as a non-negative integer: getAsInteger checks it against
  // INT64_MAX exactly.
  if (value.getAsUINT64())
    return value.getAsInteger();
  // A negative integer, or a double: getAsInteger lets 2^63 through to the
  // conversion (and NaN fails this too).
  if (!(*number < 0x1p63))
    return std::nullopt;
  return value.getAsInteger();
}
