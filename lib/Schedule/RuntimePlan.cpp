//===- RuntimePlan.cpp - names of a runtime plan's ops --------------------===//

#include "lib/Schedule/RuntimePlan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"

using namespace sched;

namespace {
struct OpName {
  ActionKind kind;
  llvm::StringLiteral name;
};
constexpr OpName kOpNames[] = {
    {ActionKind::Forward, "forward"},
    {ActionKind::Backward, "backward"},
    {ActionKind::BackwardInput, "backward_input"},
    {ActionKind::BackwardWeight, "backward_weight"},
    {ActionKind::Send, "send"},
    {ActionKind::Recv, "recv"},
    {ActionKind::AllReduce, "all_reduce"},
    {ActionKind::ReduceScatter, "reduce_scatter"},
    {ActionKind::AllGather, "all_gather"},
    {ActionKind::AllToAll, "all_to_all"},
    {ActionKind::Barrier, "barrier"},
    {ActionKind::Unshard, "unshard"},
    {ActionKind::Reshard, "reshard"},
    {ActionKind::ReduceGrad, "reduce_grad"},
    {ActionKind::OptimizerStep, "optimizer_step"},
};

struct TimingName {
  CollectiveTiming timing;
  llvm::StringLiteral name;
};
constexpr TimingName kTimingNames[] = {
    {CollectiveTiming::BeforeForward, "before_forward"},
    {CollectiveTiming::AfterForward, "after_forward"},
    {CollectiveTiming::BeforeBackward, "before_backward"},
    {CollectiveTiming::AfterBackward, "after_backward"},
    {CollectiveTiming::Step, "step"},
};
} // namespace

llvm::StringRef sched::planOpName(ActionKind kind) {
  for (const OpName &entry : kOpNames)
    if (entry.kind == kind)
      return entry.name;
  return "";
}

std::optional<ActionKind> sched::parsePlanOpName(llvm::StringRef name) {
  for (const OpName &entry : kOpNames)
    if (entry.name == name)
      return entry.kind;
  return std::nullopt;
}

llvm::StringRef sched::collectiveTimingName(CollectiveTiming timing) {
  for (const TimingName &entry : kTimingNames)
    if (entry.timing == timing)
      return entry.name;
  return "";
}

std::optional<CollectiveTiming>
sched::parseCollectiveTiming(llvm::StringRef name) {
  for (const TimingName &entry : kTimingNames)
    if (entry.name == name)
      return entry.timing;
  return std::nullopt;
}

bool sched::isCollective(ActionKind kind) {
  return kind == ActionKind::AllReduce || kind == ActionKind::ReduceScatter ||
         kind == ActionKind::AllGather || kind == ActionKind::AllToAll ||
         kind == ActionKind::Barrier;
}
