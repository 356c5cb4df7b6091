//===- Deadline.h - when a search must stop by ------------------*- C++ -*-===//
//
// The exact solver's queries and the time-indexed queries each get a number
// of seconds, building their encoding included; a Deadline is that budget
// as a point on the steady clock, asked how much of it is left.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SYNTHESIS_DEADLINE_H
#define LIB_SYNTHESIS_DEADLINE_H

#include <chrono>

namespace sched {

/// `seconds` from when it is made.
class Deadline {
public:
  explicit Deadline(double seconds)
      : at(std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
               std::chrono::duration<double>(seconds))) {}

  /// Seconds until the deadline; zero or less once it has passed.
  double secondsLeft() const {
    return std::chrono::duration<double>(at - std::chrono::steady_clock::now())
        .count();
  }

  bool passed() const { return secondsLeft() <= 0; }

private:
  std::chrono::steady_clock::time_point at;
};

} // namespace sched

#endif // LIB_SYNTHESIS_DEADLINE_H
