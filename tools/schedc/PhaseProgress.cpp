//===- PhaseProgress.cpp - a line on stderr per long phase ----------------===//

#include "tools/schedc/PhaseProgress.h"
#include "lib/Render/PictureLabels.h"
#include "tools/schedc/Commands.h"

#include "llvm/Support/CommandLine.h"

#include <fmt/format.h>

using namespace sched;
namespace cl = llvm::cl;

static cl::opt<bool>
    quietFlag("quiet", cl::sub(cl::SubCommand::getAll()),
              cl::cat(schedcOptions),
              cl::desc("No progress lines on stderr (they appear only on a "
                       "terminal, for work that runs past 2 s)"));
static cl::opt<double> progressAfterFlag(
    "progress-after", cl::sub(cl::SubCommand::getAll()), cl::Hidden,
    cl::desc("Seconds a phase runs before its progress line appears; given, "
             "progress is shown even when stderr is not a terminal (tests)"),
    cl::init(2.0));

bool sched::progressWanted() {
  if (quietFlag)
    return false;
  return progressAfterFlag.getNumOccurrences() > 0 ||
         llvm::errs().is_displayed();
}

PhaseProgress::PhaseProgress(llvm::raw_ostream &os, bool enabled,
                             std::chrono::milliseconds after)
    : os(os), enabled(enabled), after(after) {
  if (enabled)
    watcher = std::thread([this] { watch(); });
}

PhaseProgress::PhaseProgress()
    : PhaseProgress(llvm::errs(), progressWanted(),
                    std::chrono::milliseconds(static_cast<int64_t>(
                        std::max(0.0, progressAfterFlag.getValue()) * 1e3))) {}

PhaseProgress::~PhaseProgress() {
  end();
  if (!enabled)
    return;
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  watcher.join();
}

void PhaseProgress::begin(llvm::StringRef name) {
  end();
  if (!enabled)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  phase = name.str();
  start = Clock::now();
  next = start + after;
  done = 0;
  total = 0;
  active = true;
  shown = false;
  // No wait asked for: the line now, not when the watcher wakes (which a
  // short phase may not see).
  if (after.count() == 0) {
    print(Line::Started);
    shown = true;
    next = start + std::chrono::seconds(15);
  }
  wake.notify_all();
}

void PhaseProgress::update(size_t doneNow, size_t totalNow) {
  done = doneNow;
  total = totalNow;
}

void PhaseProgress::end() {
  if (!enabled)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  if (active && shown)
    print(Line::Ended);
  active = false;
  shown = false;
}

void PhaseProgress::print(Line kind) {
  const double seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  std::string line = "schedc: " + phase;
  switch (kind) {
  case Line::Started:
    line += "...";
    break;
  case Line::Running:
    line += fmt::format(": {:.0f} s", seconds);
    if (const size_t of = total.load())
      line += fmt::format(", {}/{}", groupThousands(done.load()),
                          groupThousands(of));
    break;
  case Line::Ended:
    line += fmt::format(": done in {:.1f} s", seconds);
    break;
  }
  os << line << "\n";
  os.flush();
}

void PhaseProgress::watch() {
  std::unique_lock<std::mutex> lock(mutex);
  while (!stopping) {
    if (!active) {
      wake.wait(lock, [&] { return stopping || active; });
      continue;
    }
    const Clock::time_point phaseStart = start;
    wake.wait_until(lock, next,
                    [&] { return stopping || !active || start != phaseStart; });
    if (stopping || !active || start != phaseStart || Clock::now() < next)
      continue;
    print(shown ? Line::Running : Line::Started);
    shown = true;
    next = Clock::now() + std::chrono::seconds(15);
  }
}
