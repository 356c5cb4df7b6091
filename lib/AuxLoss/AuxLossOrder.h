//===- AuxLossOrder.h - global-batch aux losses and compute order -*- C++ -*-===//
//
// A global-batch auxiliary loss at stage h makes every backward of h wait
// for the forward of every microbatch there. This library finds where a
// schedule's compute order breaks that, and rewrites a compute order into
// one that keeps it: the backwards the head holds back move behind the
// forwards they wait for, everything else keeps its order where it can.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_AUXLOSS_AUXLOSSORDER_H
#define LIB_AUXLOSS_AUXLOSSORDER_H

#include "lib/Schedule/Schedule.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace sched {

/// Where a compute order breaks a global-batch head: on `rank` (an index
/// into Schedule::ranks) the backward (B or I) at `backwardIndex` starts
/// before, or together with, the forward at `forwardIndex`, the last
/// forward of the head's stage.
struct AuxLossConflict {
  int32_t stage = 0;
  int32_t rank = 0;
  int32_t backwardIndex = 0;
  int32_t backwardMicrobatch = 0;
  int32_t forwardIndex = 0;
  int32_t forwardMicrobatch = 0;
  /// True when the two run together in one overlap.
  bool together = false;
};

/// The first conflict of a global-batch head at `stage` (and at its copies
/// in the other pipeline replicas) with the order of `schedule`, if any.
/// Only the rank that holds each copy is looked at: every forward and
/// backward of a stage runs there. Transfers and collectives are ignored.
std::optional<AuxLossConflict> findAuxLossConflict(const Schedule &schedule,
                                                   int32_t stage);

/// "backward of stage 3 microbatch 0 runs before the forward of microbatch 7
/// reaches aux head at stage 3 (scope global_batch)".
std::string describeAuxLossConflict(const AuxLossConflict &conflict);

/// Rewrites the compute-only `compute` so that every global-batch head at
/// one of `stages` holds: the backwards (B, I and W) of the stages at or
/// below the highest head, in each pipeline replica, are held back; every
/// other action keeps its place in its rank's order. A list simulation
/// (stage costs, unit steps when a cost is zero) runs each rank in its
/// order; a held-back action runs at its place once its inputs (with every
/// forward of its head) are done, else the next action that is not held
/// back goes first. Held-back and other actions each keep their relative
/// order, so the result runs to the end whenever `compute` does. An overlap
/// of a held-back backward with a forward is split into its two actions.
/// Fails when `compute` holds anything but F, B, I, W and overlaps, or
/// cannot run to the end.
llvm::Expected<Schedule>
reorderForGlobalBatchHeads(const Schedule &compute,
                           llvm::ArrayRef<int32_t> stages);

} // namespace sched

#endif // LIB_AUXLOSS_AUXLOSSORDER_H
