//===- CostSpec.h - per-stage costs from a command-line spec ----*- C++ -*-===//
//
// Parses the `--cost` spelling of schedc ("f=1,b=2" or
// "f=1,i=1,w=1,comm=0.1") and applies it to every stage of a schedule.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SCHEDULE_COSTSPEC_H
#define LIB_SCHEDULE_COSTSPEC_H

#include "lib/Schedule/Schedule.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace sched {

/// Times of one stage's actions, the same for every stage, and of one
/// point-to-point transfer.
struct CostSpec {
  double forward = 1;
  double backwardInput = 1;
  double backwardWeight = 1;
  /// Time of one transfer between ranks, when the spec names it.
  std::optional<double> comm;
};

/// Parses comma-separated `key=value` pairs: `f` (forward), `b` (full
/// backward, split evenly into I and W), `i` and `w` (its halves), `comm`.
/// Unnamed keys keep their default of 1 (`comm`: unset). Values are finite
/// numbers >= 0. Fails, with a one-line message, on an unknown or repeated
/// key, a value that is not such a number, or `b` together with `i` or
/// `w`.
llvm::Expected<CostSpec> parseCostSpec(llvm::StringRef text);

/// Sets the times of every stage of `schedule` to `spec`, keeping any
/// declared sizes.
void applyCostSpec(Schedule &schedule, const CostSpec &spec);

} // namespace sched

#endif // LIB_SCHEDULE_COSTSPEC_H
