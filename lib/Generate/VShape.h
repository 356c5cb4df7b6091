//===- VShape.h - building blocks of the V-shaped schedules -----*- C++ -*-===//
//
// Shared by the generators whose stages sit on ranks in a V (rank r holds
// stage r, "chunk 0", and stage 2P-1-r, "chunk 1"): the V-Min building
// block of Qi et al. 2024b and a list scheduler that plays the pipeline
// forward in unit steps under an activation cap. Internal to lib/Generate.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_GENERATE_VSHAPE_H
#define LIB_GENERATE_VSHAPE_H

#include "lib/Generate/Strategy.h"

#include <array>
#include <optional>
#include <vector>

namespace sched {

/// The stage rank `rank` holds as chunk `chunk` (0 or 1) in a V over `pp`
/// ranks.
inline int32_t vStage(int32_t pp, int32_t rank, int32_t chunk) {
  return chunk == 0 ? rank : 2 * pp - 1 - rank;
}

/// The six actions one microbatch brings to a rank of a V.
enum class VOp : uint8_t {
  Forward0,
  Forward1,
  InputGrad0,
  InputGrad1,
  WeightGrad0,
  WeightGrad1,
};
inline constexpr int kNumVOps = 6;

/// A building block: the unit step at which each rank runs each action of
/// microbatch 0; microbatch m runs every action 6m steps later. Per rank
/// the six actions fall on six different steps modulo 6, so the repeated
/// blocks never collide.
struct VBlock {
  /// Indexed [rank][VOp].
  std::vector<std::array<int64_t, kNumVOps>> start;

  int64_t at(int32_t rank, VOp op, int32_t microbatch) const {
    return start[rank][static_cast<int>(op)] + 6 * int64_t(microbatch);
  }
};

/// The V-Min block: the forwards go down and up the V and the input
/// gradients back without waiting, each action on the first step at or
/// after its input whose slot modulo 6 is still free on its rank; each W
/// takes the first free slot after its I.
VBlock buildVMinBlock(int32_t pp);

/// One step of a fixed program prefix for the V list scheduler.
struct VStep {
  enum Kind : uint8_t {
    /// F of `chunk`.
    Forward,
    /// I of `chunk`; its W waits.
    InputGrad,
    /// The oldest waiting W, if any.
    WeightGrad,
    /// A sched.overlap of F of `chunk` and a full B of `backwardChunk`.
    OverlapBackward,
    /// A sched.overlap of F of `chunk` and I of `backwardChunk`.
    OverlapInputGrad,
  };
  Kind kind;
  int8_t chunk = 0;
  int8_t backwardChunk = 0;
};

/// How the list scheduler picks among the actions a rank could start.
enum class VPriority : uint8_t {
  /// The action that comes first in the V-Min block.
  BlockOrder,
  /// Input gradients before forwards, chunk 1 before chunk 0.
  InputGradFirst,
};

struct VListOptions {
  /// Most stage activations a rank may hold (a waiting W counts half).
  double activationCap = 0;
  VPriority priority = VPriority::BlockOrder;
  /// Per rank, steps run first in this order (empty: none). A step whose
  /// microbatches are all done is skipped; an overlap whose one side is
  /// done runs its other side alone.
  std::vector<std::vector<VStep>> prefix;
  /// Per rank, where its prefix starts to repeat two steps per microbatch
  /// up to its last step, which alone differs (DualPipeV's steady phase);
  /// empty where it does not (findVListPeriod then finds none).
  std::vector<size_t> prefixRepeatsFrom;
};

/// List-schedules the V in unit steps (every F, I and W one step, a full B
/// two): a rank runs its prefix, then, whenever it is free, the ready action
/// `options.priority` prefers; forwards only while its activations stay
/// within the cap, counting the chunk-1 forward each admitted microbatch
/// still needs; a waiting W whenever nothing else could start at once.
/// Microbatches enter every chunk in order. `shape` has vpp = 2.
Schedule scheduleVList(const PipelineShape &shape, const VListOptions &options);

/// The list scheduler's options for ZB-V (a cap of 2P stage activations)
/// and V-Half (P + 2).
VListOptions zbvListOptions(const PipelineShape &shape);
VListOptions vHalfListOptions(const PipelineShape &shape);
/// DualPipeV's: its warm-up and steady phase as a prefix (DualPipeV.cpp).
VListOptions dualPipeVListOptions(const PipelineShape &shape);

/// Where the list schedule of `shape` repeats itself: `to` and `from` are
/// two microbatches at whose chunk-0 forward on rank 0 the scheduler's
/// whole state (each rank's clock, activations, next microbatches, waiting
/// W and place in its prefix, and the completion times still to be read)
/// is the same up to a shift of `to - from` microbatches, some steps and,
/// in a repeating prefix, two steps per microbatch. The scheduler compares
/// microbatch indices with M only where they reach it, and a prefix for
/// more microbatches differs only past its repeated part, so the schedules
/// of every M >= `floor` are the same up to that state; for every M >=
/// floor + (to - from) the schedule at M is then the one at M - (to -
/// from) with the actions between those two forwards run once more: each
/// rank passes through the same activation states, first reached in the
/// same order (lib/Generate/SteadyState.h).
struct VListPeriod {
  int32_t from = 0;
  int32_t to = 0;
  int32_t floor = 0;
};

/// Plays the list schedule of `shape` until its state first repeats as
/// VListPeriod describes; none when it does not within the microbatches
/// of `shape`, or where its prefix does not repeat.
std::optional<VListPeriod> findVListPeriod(const PipelineShape &shape,
                                           const VListOptions &options);

} // namespace sched

#endif // LIB_GENERATE_VSHAPE_H
