//===- Schedule.cpp - plain in-memory pipeline schedules ------------------===//

#include "lib/Schedule/Schedule.h"

#include "llvm/Support/ErrorHandling.h"

using namespace sched;

bool sched::isCompute(ActionKind kind) {
  return kind == ActionKind::Forward || kind == ActionKind::Backward ||
         kind == ActionKind::BackwardInput ||
         kind == ActionKind::BackwardWeight;
}

size_t Schedule::numActions() const {
  size_t total = 0;
  for (const RankProgram &rank : ranks)
    total += rank.actions.size();
  return total;
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
