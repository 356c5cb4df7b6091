//===- AuxLossCost.cpp - what an aux-loss head costs in a timeline --------===//

#include "lib/AuxLoss/AuxLossCost.h"

#include <limits>
#include <map>

using namespace sched;

/// The cost of `head` on the rank that holds its stage.
static AuxHeadCost costOf(const Schedule &schedule, const Timeline &timeline,
                          const AuxLossHead &head) {
  AuxHeadCost cost;
  cost.head = head;
  cost.biasBytes = head.biasBytes;
  for (size_t r = 0; r < schedule.ranks.size() && cost.rank < 0; ++r)
    for (const Action &a : schedule.ranks[r].actions)
      if (isCompute(a.kind) && a.stage == head.stage) {
        cost.rank = static_cast<int32_t>(r);
        break;
      }
  if (cost.rank < 0)
    return cost;
  const std::vector<Action> &actions = schedule.ranks[cost.rank].actions;
  const std::vector<ActionTime> &times = timeline.times[cost.rank];
  cost.firstBackwardStart = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < actions.size(); ++i) {
    const Action &a = actions[i];
    if (a.stage != head.stage)
      continue;
    if (a.kind == ActionKind::Forward)
      cost.lastForwardEnd = std::max(cost.lastForwardEnd, times[i].end);
    else if (a.kind == ActionKind::Backward ||
             a.kind == ActionKind::BackwardInput)
      cost.firstBackwardStart =
          std::min(cost.firstBackwardStart, times[i].start);
    else if (a.kind == ActionKind::AllReduce && a.group == head.biasGroup &&
             head.biasGroup >= 0)
      cost.biasUpdateAt = times[i].start;
  }
  if (cost.firstBackwardStart == std::numeric_limits<double>::infinity())
    cost.firstBackwardStart = cost.lastForwardEnd;
  // Activations alive at the last forward's end: forwards ended by then
  // whose B or I had not ended.
  const double at = cost.lastForwardEnd;
  std::map<std::pair<int32_t, int32_t>, double> released;
  for (size_t j = 0; j < actions.size(); ++j) {
    const Action &b = actions[j];
    if (b.kind == ActionKind::Backward || b.kind == ActionKind::BackwardInput)
      released[{b.stage, b.microbatch}] = times[j].end;
  }
  for (size_t i = 0; i < actions.size(); ++i) {
    const Action &f = actions[i];
    if (f.kind != ActionKind::Forward || times[i].end > at)
      continue;
    auto it = released.find({f.stage, f.microbatch});
    if (it != released.end() && it->second <= at)
      continue;
    ++cost.liveActivations;
    if (!schedule.stageCosts.empty())
      cost.liveBytes += schedule.stageCosts[f.stage].activation;
  }
  return cost;
}

std::vector<AuxHeadCost> sched::auxHeadCosts(const Schedule &schedule,
                                             const Timeline &timeline) {
  std::vector<AuxHeadCost> costs;
  for (const AuxLossHead &head : schedule.auxHeads)
    costs.push_back(costOf(schedule, timeline, head));
  return costs;
}
