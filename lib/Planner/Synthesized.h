//===- Synthesized.h - a candidate's schedule solved for, not chosen -*- C++ -*-===//
//
// The planner's `synthesized` schedule (docs/planner.md, "Synthesized
// schedules"; docs/synthesis.md): the candidate's stage costs (F, I and W
// per stage as the cost model gives them), its transfer time and the
// device's usable memory in bytes become a lib/Synthesis problem, which the
// list scheduler solves (the zoo strategies that fit are among its seeds,
// so it is never slower than them on the problem's model), with the lower
// bound that states its gap. The receive buffers and unsent input gradients
// the transfers add are not in the problem's memory: the order is lowered,
// its memory measured as the verifier counts it, and the order solved
// again under a limit lowered by the overshoot, a few times at most.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_PLANNER_SYNTHESIZED_H
#define LIB_PLANNER_SYNTHESIZED_H

#include "lib/CostModel/CostModel.h"
#include "lib/Planner/Candidate.h"
#include "lib/Schedule/Schedule.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace sched {

/// The zoo strategies whose stage placement (and memory and time bounds)
/// the synthesized candidates of a layout with `vpp` stages per rank take,
/// one candidate each: ZB-H1's loop for one stage per rank, interleaved
/// zero bubble's loop for more, and ZB-V's V for two.
llvm::SmallVector<Strategy, 2> synthesizedPlacements(int64_t vpp);

/// A candidate's synthesized order.
struct SynthesizedOrder {
  /// The compute order with the stage costs attached (no transfers);
  /// empty when no schedule fits.
  Schedule schedule;
  /// Its makespan on the problem's model, the problem's lower bound (under
  /// the device's limit, without receive buffers: a bound on every
  /// schedule that fits), and the gap between them.
  double makespan = 0;
  double lowerBound = 0;
  double gap = 0;
  /// When no schedule fits: why, naming the smallest limit that does.
  std::string infeasible;
  /// The least peak any schedule has on its fullest rank, in bytes
  /// (parameters and one microbatch's activations of the rank's stages).
  double leastPeak = 0;
};

/// Whether some schedule of `candidate` (synthesized) fits the device: each
/// rank's parameters and one microbatch's activations of its stages within
/// the usable memory. Cheap; no schedule is solved for.
bool synthesisFits(const CostModel &model, const Candidate &candidate,
                   const std::vector<StageEstimate> &stages);

/// A lower bound on the pipeline makespan of every schedule of
/// `candidate` (synthesized) within the device's memory: the synthesis
/// problem's (lib/Synthesis/LowerBound.h), tighter than the cost model's
/// and far cheaper than solving; 0 when no schedule fits.
double synthesizedMakespanBound(const CostModel &model,
                                const Candidate &candidate,
                                const std::vector<StageEstimate> &stages);

/// Solves for `candidate`'s order with its `stages`. The answer depends on
/// the inputs only (the local search is capped by moves, not time), so
/// proving and writing the candidate later solve for the same order.
llvm::Expected<SynthesizedOrder>
synthesizeOrder(const CostModel &model, const Candidate &candidate,
                const std::vector<StageEstimate> &stages);

} // namespace sched

#endif // LIB_PLANNER_SYNTHESIZED_H
