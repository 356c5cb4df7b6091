//===- ProcessTimes.h - child processes' CPU time, median -------*- C++ -*-===//
//
// What the benchmarks that time whole processes share: the CPU time
// (user + system) the benchmark's waited-for children have spent, and the
// median of repeated measurements.
//
//===----------------------------------------------------------------------===//

#ifndef BENCH_COMMON_PROCESSTIMES_H
#define BENCH_COMMON_PROCESSTIMES_H

#include <algorithm>
#include <cassert>
#include <vector>

#include <sys/resource.h>

namespace sched {

/// User plus system CPU seconds of every child process waited for so far
/// (RUSAGE_CHILDREN): the difference around a run is that run's CPU time,
/// which other processes on the machine do not inflate.
inline double childrenCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  auto seconds = [](const timeval &t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

/// The median of `values` (not empty): the middle value of an odd count,
/// the mean of the two middle values of an even count (the usual
/// definition; a Theil-Sen fit over four sizes takes the median of six
/// slopes).
inline double median(std::vector<double> values) {
  assert(!values.empty() && "the median of no values");
  std::sort(values.begin(), values.end());
  const size_t half = values.size() / 2;
  return values.size() % 2 ? values[half]
                           : (values[half - 1] + values[half]) / 2;
}

} // namespace sched

#endif // BENCH_COMMON_PROCESSTIMES_H
