//===- PeakRssRun.h - one command measured by peak-rss ----------*- C++ -*-===//
//
// Runs a command under bench's peak-rss tool (next to the benchmark
// binaries) and reads its report: wall time, peak RSS and exit status.
// schedc-bench and planner-bench measure their child processes so.
//
//===----------------------------------------------------------------------===//

#ifndef BENCH_PEAK_RSS_PEAKRSSRUN_H
#define BENCH_PEAK_RSS_PEAKRSSRUN_H

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <optional>
#include <string>
#include <vector>

namespace sched {

/// Wall time, peak RSS and exit status of one command.
struct ChildRun {
  double seconds = 0;
  double peakMiB = 0;
  int status = -1;
};

/// Runs `argv` under peak-rss (in `binDir`), which measures it from a small
/// parent: the kernel would count the benchmark's own peak in a child it
/// forks. peak-rss waits for the command, so its CPU time counts in the
/// caller's RUSAGE_CHILDREN.
inline std::optional<ChildRun> runChild(llvm::StringRef binDir,
                                        const std::vector<std::string> &argv) {
  const std::string peakRss = (binDir + "/peak-rss").str();
  std::vector<llvm::StringRef> args{peakRss};
  args.insert(args.end(), argv.begin(), argv.end());
  llvm::SmallString<128> report;
  if (llvm::sys::fs::createTemporaryFile("schedc-bench", "txt", report))
    return std::nullopt;
  const std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(report), std::nullopt};
  const int status =
      llvm::sys::ExecuteAndWait(peakRss, args, std::nullopt, redirects);
  auto text = llvm::MemoryBuffer::getFile(report);
  llvm::sys::fs::remove(report);
  if (status != 0 || !text)
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef, 3> fields;
  (*text)->getBuffer().trim().split(fields, ' ');
  ChildRun run;
  double kib = 0;
  if (fields.size() != 3 || fields[0].getAsDouble(run.seconds) ||
      fields[1].getAsDouble(kib) || fields[2].getAsInteger(10, run.status))
    return std::nullopt;
  run.peakMiB = kib / 1024;
  return run;
}

} // namespace sched

#endif // BENCH_PEAK_RSS_PEAKRSSRUN_H
