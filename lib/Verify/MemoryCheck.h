//===- MemoryCheck.h - memory along each rank's program ---------*- C++ -*-===//
//
// Internal to lib/Verify. Memory on a rank depends only on its own program
// order: static bytes of its stages (an FSDP-sharded stage holds its
// shard), plus activations (F allocates, I frees all but the
// weight-gradient part, W or B frees the rest), plus receive buffers until
// their consumer runs, plus the full buffer a sharded stage gathers into
// between UNSHARD and RESHARD, plus the full gradient a sharded stage
// accumulates from its first B or W until its REDUCE_GRAD, plus the input
// gradient of a B or I until the send (or the compute on the same rank)
// that takes it. Amounts are 128-bit integers: any sum of 64-bit sizes
// over a schedule's actions fits, so limits and peaks of any magnitude
// compare exactly.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_VERIFY_MEMORYCHECK_H
#define LIB_VERIFY_MEMORYCHECK_H

#include "lib/Verify/ScheduleIndex.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace sched {

/// An amount of memory in internal units (bytes, or millionths of an
/// activation unit).
using MemoryAmount = __int128;

/// The decimal digits of `amount`.
std::string toDecimal(MemoryAmount amount);

/// What a memory change allocates or frees.
enum class MemoryTerm : uint8_t {
  /// The whole activation F keeps for the backward.
  Activation,
  /// The part of it that I keeps for W.
  WeightGradResidue,
  /// A received activation, until the F that consumes it.
  ReceivedActivation,
  /// A received output gradient, until the B or I that consumes it.
  ReceivedGradient,
  /// The full parameter buffer of a sharded stage, UNSHARD to RESHARD.
  GatheredParameters,
  /// The full gradient of a sharded stage, from its first B or W (which
  /// accumulate into the unsharded parameters' gradient) to its
  /// REDUCE_GRAD (which reduce-scatters it into the shard).
  UnreducedGradient,
  /// The input gradient a B or I computes, until the send that carries it
  /// (or the backward of the stage before, on the same rank).
  UnsentInputGradient,
};

/// One allocation (amount > 0) or free (amount < 0) of an action: of the
/// term's tensor for (stage, microbatch), microbatch -1 for a stage's.
struct MemoryChange {
  MemoryTerm term;
  int32_t stage;
  int32_t microbatch;
  MemoryAmount amount;
};

/// Memory of one rank at its checkpoints, for Z3: value_k = value_{k-1} +
/// steps[k] (value_{-1} = 0), each value_k <= limit. The first checkpoint
/// is the rank's static memory (position -1), the others its local maxima.
struct MemoryChain {
  int32_t rank = 0;
  std::vector<MemoryAmount> steps;
  std::vector<MemoryAmount> values;
  /// Action index of each checkpoint (-1: before the first action).
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
  std::optional<MemoryAmount> limit() const { return internalLimit; }
  /// The memory chains of all ranks (checkpoints only).
  const std::vector<MemoryChain> &getChains() const { return chains; }
  /// Formats an internal amount in user units.
  std::string format(MemoryAmount amount) const;

private:
  /// Calls `visit` with each allocation and free of rank `r`, in internal
  /// units, action by action in program order (a bundle's members as
  /// issued); sets `staticAmount` to the rank's static memory.
  void visitChanges(
      size_t r, MemoryAmount &staticAmount,
      llvm::function_ref<void(size_t, const MemoryChange &)> visit) const;
  /// The allocations and frees of each action of rank `r`, in internal
  /// units, the members of a bundle ordered allocations first; sets
  /// `staticAmount` to the rank's static memory.
  std::vector<llvm::SmallVector<MemoryChange, 2>>
  changes(size_t r, MemoryAmount &staticAmount) const;
  /// The net memory change of each action of rank `r` (as changes()).
  std::vector<MemoryAmount> deltas(size_t r, MemoryAmount &staticAmount) const;
  /// Bytes of the input gradient a B or I of (stage, mb) at `position` of
  /// rank `r` computes, and the action on the rank that releases it (its
  /// send, or the backward of the stage before on the same rank); 0 and -1
  /// when it waits for nothing on this rank.
  std::pair<MemoryAmount, int32_t>
  inputGradient(size_t r, size_t position, int32_t stage, int32_t mb) const;
  /// Bytes of a receive: its own, else the `output` of the lower stage of
  /// the pair; 0 when neither is known.
  MemoryAmount receiveBytes(const Action &recv) const;
  void explainPeak(Violation &violation, size_t r, int32_t position) const;

  const ScheduleIndex &index;
  const VerifyOptions &options;
  bool bytes = false;
  /// Internal units per user unit: 1 for bytes, 10^6 for activations.
  int64_t scale = 1;
  std::optional<MemoryAmount> internalLimit;
  /// Stages whose parameters the schedule shards (it UNSHARDs or RESHARDs
  /// them somewhere).
  std::vector<bool> sharded;
  std::vector<MemoryAmount> rankPeak;
  std::vector<MemoryChain> chains;
};

} // namespace sched

#endif // LIB_VERIFY_MEMORYCHECK_H
