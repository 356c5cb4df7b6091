//===- AuxLossCost.h - what an aux-loss head costs in a timeline -*- C++ -*-===//
//
// Reads a simulated schedule (lib/Simulate) for what each auxiliary-loss
// head costs: a global-batch head holds the activations of its rank until
// the stage's last forward; an aux-free head adds one collective, its bias
// update; a head local to the microbatch costs nothing.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_AUXLOSS_AUXLOSSCOST_H
#define LIB_AUXLOSS_AUXLOSSCOST_H

#include "lib/Schedule/Schedule.h"
#include "lib/Simulate/Simulate.h"

#include <vector>

namespace sched {

/// What one head costs in a simulated schedule.
struct AuxHeadCost {
  AuxLossHead head;
  /// The index into Schedule::ranks of the rank that holds the stage, or
  /// -1 when no rank computes it.
  int32_t rank = -1;
  /// When the stage's last forward ends and its first backward (B or I)
  /// starts.
  double lastForwardEnd = 0;
  double firstBackwardStart = 0;
  /// Stage-microbatch activations alive on the rank when the stage's last
  /// forward ends (forward ended, B or I not yet), and their bytes when the
  /// stages declare sizes (else 0): what a global-batch head holds.
  int64_t liveActivations = 0;
  int64_t liveBytes = 0;
  /// The bias update of an aux-free head: when it starts (-1 when the rank
  /// issues none) and its bytes.
  double biasUpdateAt = -1;
  int64_t biasBytes = -1;
};

/// The cost of every head of `schedule` in `timeline`, in the order of
/// Schedule::auxHeads.
std::vector<AuxHeadCost> auxHeadCosts(const Schedule &schedule,
                                      const Timeline &timeline);

} // namespace sched

#endif // LIB_AUXLOSS_AUXLOSSCOST_H
