//===- MemoryCheck.h - memory along each rank's program ---------*- C++ -*-===//
//
// Internal to lib/Verify. Memory on a rank depends only on its own program
// order: static bytes of its stages, plus activations (F allocates, I frees
// all but the weight-gradient part, W or B frees the rest), plus receive
// buffers until their consumer runs, plus unsharded parameters between
// UNSHARD and RESHARD.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_VERIFY_MEMORYCHECK_H
#define LIB_VERIFY_MEMORYCHECK_H

#include "lib/Verify/ScheduleIndex.h"

namespace sched {

/// Memory of one rank at its local maxima, for Z3: value_k =
/// value_{k-1} + steps[k] (value_{-1} = start), each value_k <= limit.
struct MemoryChain {
  int32_t rank = 0;
  int64_t start = 0;
  std::vector<int64_t> steps;
  std::vector<int64_t> values;
  /// Action index of each checkpoint.
  std::vector<int32_t> positions;
};

class MemoryCheck {
public:
  MemoryCheck(const ScheduleIndex &index, const VerifyOptions &options);

  /// Computes every rank's memory; reports ranks over the limit.
  void run(ViolationSink &sink);

  /// Per rank: the highest memory reached, in bytes or activation units.
  std::vector<double> peaks() const;
  bool inBytes() const { return bytes; }
  /// The limit in internal units, if any.
  std::optional<int64_t> limit() const { return internalLimit; }
  /// The memory chains of all ranks (local maxima only).
  const std::vector<MemoryChain> &getChains() const { return chains; }
  /// Formats an internal amount in user units.
  std::string format(int64_t amount) const;

private:
  /// The memory change of each action of rank `r`, in internal units.
  std::vector<int64_t> deltas(size_t r, int64_t &staticAmount) const;
  void explainPeak(Violation &violation, size_t r, int32_t position) const;

  const ScheduleIndex &index;
  const VerifyOptions &options;
  bool bytes = false;
  /// Internal units per user unit: 1 for bytes, 10^6 for activations.
  int64_t scale = 1;
  std::optional<int64_t> internalLimit;
  std::vector<int64_t> rankPeak;
  std::vector<MemoryChain> chains;
};

} // namespace sched

#endif // LIB_VERIFY_MEMORYCHECK_H
