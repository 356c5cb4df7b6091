//===- Schedule.cpp - plain in-memory pipeline schedules ------------------===//

#include "lib/Schedule/Schedule.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace sched;

// A plan holds an Action per instruction (the verifier's 192,512-action
// CSV, the planner's orders): new fields go into padding.
static_assert(sizeof(Action) <= 48, "Action grew past 48 bytes");

bool sched::isCompute(ActionKind kind) {
  return kind == ActionKind::Forward || kind == ActionKind::Backward ||
         kind == ActionKind::BackwardInput ||
         kind == ActionKind::BackwardWeight;
}

int64_t sched::layerwiseOverlapPeak(int64_t forward, int64_t forwardLayers,
                                    int64_t backward, int64_t backwardLayers) {
  const __int128 nF = std::max<int64_t>(forwardLayers, 1);
  const __int128 nB = std::max<int64_t>(backwardLayers, 1);
  const __int128 first = (forward + nF - 1) / nF;
  // The backward pieces freed before the forward's last: floor, so the
  // peak is rounded up.
  const __int128 freed = std::min(nF - 1, nB) * backward / nB;
  const __int128 last = forward - freed;
  return static_cast<int64_t>(std::max(first, last));
}

size_t sched::layerwisePartner(const std::vector<Action> &actions, size_t i) {
  const Action &a = actions[i];
  if (a.kind != ActionKind::Forward || !a.layerwise || a.bundle == 0)
    return i;
  for (size_t j = i + 1; j < actions.size() && actions[j].bundle == a.bundle;
       ++j)
    if (actions[j].kind == ActionKind::Backward ||
        actions[j].kind == ActionKind::BackwardInput)
      return j;
  for (size_t j = i; j-- > 0 && actions[j].bundle == a.bundle;)
    if (actions[j].kind == ActionKind::Backward ||
        actions[j].kind == ActionKind::BackwardInput)
      return j;
  return i;
}

size_t Schedule::numActions() const {
  size_t total = 0;
  for (const RankProgram &rank : ranks)
    total += rank.actions.size();
  return total;
}

std::string Schedule::replicaError() const {
  if (replicas >= 1 && numStages % replicas == 0 &&
      numMicrobatches % replicas == 0)
    return "";
  return llvm::formatv("{0} pipeline replicas do not divide the {1} stages "
                       "and {2} microbatches",
                       replicas, numStages, numMicrobatches)
      .str();
}

int32_t sched::rankOfStage(int32_t stage, int32_t pp,
                           StagePlacement placement) {
  if (placement == StagePlacement::Loop)
    return stage % pp;
  // V placement: rank r holds stages r and 2pp-1-r.
  return stage < pp ? stage : 2 * pp - 1 - stage;
}

llvm::StringRef sched::computeLetter(ActionKind kind) {
  switch (kind) {
  case ActionKind::Forward:
    return "F";
  case ActionKind::Backward:
    return "B";
  case ActionKind::BackwardInput:
    return "I";
  case ActionKind::BackwardWeight:
    return "W";
  default:
    return "?";
  }
}

std::string sched::actionLabel(const Action &action, bool withStage) {
  std::string label;
  if (withStage)
    label += std::to_string(action.stage);
  label += computeLetter(action.kind).str();
  label += std::to_string(action.microbatch);
  return label;
}

static const char *collectiveName(ActionKind kind) {
  switch (kind) {
  case ActionKind::AllReduce:
    return "all_reduce";
  case ActionKind::ReduceScatter:
    return "reduce_scatter";
  case ActionKind::AllGather:
    return "all_gather";
  case ActionKind::AllToAll:
    return "all_to_all";
  case ActionKind::Barrier:
    return "barrier";
  default:
    return nullptr;
  }
}

std::string sched::describeAction(const Schedule &schedule, const Action &a) {
  auto rankName = [&](int32_t r) {
    return r >= 0 && static_cast<size_t>(r) < schedule.ranks.size()
               ? "rank " + std::to_string(schedule.ranks[r].id)
               : std::string("no rank");
  };
  if (isCompute(a.kind))
    return llvm::formatv("{0}(stage {1}, mb {2})", computeLetter(a.kind),
                         a.stage, a.microbatch)
        .str();
  switch (a.kind) {
  case ActionKind::Send:
    return llvm::formatv("SEND_{0}{1}(stage {2}, mb {3}) to {4}",
                         a.shape ? "SHAPE_" : "", a.gradient ? "B" : "F",
                         a.stage, a.microbatch, rankName(a.peer))
        .str();
  case ActionKind::Recv:
    return llvm::formatv("RECV_{0}{1}(stage {2}, mb {3}) from {4}",
                         a.shape ? "SHAPE_" : "", a.gradient ? "B" : "F",
                         a.stage, a.microbatch, rankName(a.peer))
        .str();
  case ActionKind::Unshard:
    return llvm::formatv("UNSHARD(stage {0})", a.stage).str();
  case ActionKind::Reshard:
    return llvm::formatv("RESHARD(stage {0})", a.stage).str();
  case ActionKind::ReduceGrad:
    return llvm::formatv("REDUCE_GRAD(stage {0})", a.stage).str();
  case ActionKind::OptimizerStep:
    return "OPTIMIZER_STEP";
  default:
    break;
  }
  std::string text = collectiveName(a.kind);
  if (a.group >= 0 && static_cast<size_t>(a.group) < schedule.groups.size())
    text += " @" + schedule.groups[a.group].name;
  if (a.stage >= 0)
    text += llvm::formatv(" (stage {0})", a.stage).str();
  return text;
}

llvm::StringRef sched::auxLossScopeName(AuxLossScope scope) {
  switch (scope) {
  case AuxLossScope::Microbatch:
    return "microbatch";
  case AuxLossScope::Sequence:
    return "sequence";
  case AuxLossScope::GlobalBatch:
    return "global_batch";
  case AuxLossScope::AuxFree:
    return "aux_free";
  }
  return "";
}
