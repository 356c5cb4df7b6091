//===- PhaseProgress.h - a line on stderr per long phase --------*- C++ -*-===//
//
// Long work says what it is doing: once a phase (searching the layouts of
// one cluster, a sweep, reading a large schedule, verifying it) has run
// past 2 s, a line on stderr names it; every 15 s more, a line says how
// long it has run and, where known, how far it is ("12,345/486,637"); when
// it ends, a line gives its time. Whole lines only, so that they never
// break a line of the report on stdout. Nothing is printed for shorter
// phases, with --quiet, or when stderr is not a terminal, so output piped
// to a file or a test is unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef TOOLS_SCHEDC_PHASEPROGRESS_H
#define TOOLS_SCHEDC_PHASEPROGRESS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace sched {

/// Whether progress is shown: stderr is a terminal and --quiet is not
/// given (or --progress-after forces it, for tests).
bool progressWanted();

class PhaseProgress {
public:
  /// Shows phases on `os` when `enabled`; `after` is the time a phase runs
  /// before its line appears.
  PhaseProgress(llvm::raw_ostream &os, bool enabled,
                std::chrono::milliseconds after);
  /// On stderr when progressWanted(), after --progress-after (2 s).
  PhaseProgress();
  ~PhaseProgress();
  PhaseProgress(const PhaseProgress &) = delete;
  PhaseProgress &operator=(const PhaseProgress &) = delete;

  /// Starts `phase` ("searching layouts on h800-ib"), ending the one before.
  void begin(llvm::StringRef phase);
  /// How far the phase is: `done` of `total` (0: unknown).
  void update(size_t done, size_t total);
  /// Ends the phase; a phase that was shown gets its time and a newline.
  void end();

private:
  using Clock = std::chrono::steady_clock;
  void watch();
  enum class Line { Started, Running, Ended };
  /// Prints the phase's line of `kind`. Holds `mutex`.
  void print(Line kind);

  llvm::raw_ostream &os;
  const bool enabled;
  const std::chrono::milliseconds after;
  std::mutex mutex;
  std::condition_variable wake;
  std::thread watcher;
  std::string phase;
  Clock::time_point start;
  /// When the watcher prints the phase's next line.
  Clock::time_point next;
  bool active = false;
  bool shown = false;
  bool stopping = false;
  std::atomic<size_t> done{0};
  std::atomic<size_t> total{0};
};

} // namespace sched

#endif // TOOLS_SCHEDC_PHASEPROGRESS_H
