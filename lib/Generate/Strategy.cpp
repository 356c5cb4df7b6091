//===- Strategy.cpp - pipeline strategies and their generators ------------===//

#include "lib/Generate/Strategy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace sched;

namespace {
struct StrategyInfo {
  Strategy strategy;
  llvm::StringLiteral name;
  /// Stages per rank the strategy needs; 0 means any.
  int32_t requiredVpp;
};
} // namespace

static constexpr StrategyInfo kStrategies[] = {
    {Strategy::GPipe, "gpipe", 1},
    {Strategy::OneFOneB, "1f1b", 1},
};

static const StrategyInfo &infoOf(Strategy strategy) {
  for (const StrategyInfo &info : kStrategies)
    if (info.strategy == strategy)
      return info;
  llvm_unreachable("every strategy has an entry in kStrategies");
}

llvm::StringRef sched::strategyName(Strategy strategy) {
  return infoOf(strategy).name;
}

std::optional<Strategy> sched::parseStrategy(llvm::StringRef name) {
  for (const StrategyInfo &info : kStrategies)
    if (info.name == name)
      return info.strategy;
  return std::nullopt;
}

std::string sched::strategyNames() {
  std::string names;
  for (const StrategyInfo &info : kStrategies) {
    if (!names.empty())
      names += ", ";
    names += info.name;
  }
  return names;
}

llvm::Expected<Schedule> sched::generateSchedule(Strategy strategy,
                                                 const PipelineShape &shape) {
  const StrategyInfo &info = infoOf(strategy);
  if (shape.pp < 1 || shape.vpp < 1 || shape.microbatches < 1)
    return llvm::createStringError(
        "pipeline needs pp >= 1, vpp >= 1 and microbatches >= 1");
  if (info.requiredVpp && shape.vpp != info.requiredVpp)
    return llvm::createStringError(
        llvm::formatv("strategy {0} needs vpp = {1} (one stage per rank), "
                      "got vpp = {2}",
                      info.name, info.requiredVpp, shape.vpp)
            .str());
  if (!shape.stageCosts.empty() &&
      static_cast<int32_t>(shape.stageCosts.size()) != shape.numStages())
    return llvm::createStringError(
        llvm::formatv("{0} stage costs given for {1} stages",
                      shape.stageCosts.size(), shape.numStages())
            .str());
  switch (strategy) {
  case Strategy::GPipe:
    return generateGPipe(shape);
  case Strategy::OneFOneB:
    return generateOneFOneB(shape);
  }
  llvm_unreachable("unknown strategy");
}

Schedule sched::emptySchedule(const PipelineShape &shape) {
  Schedule schedule;
  schedule.numStages = shape.numStages();
  schedule.numMicrobatches = shape.microbatches;
  schedule.stageCosts = shape.stageCosts;
  schedule.ranks.resize(shape.pp);
  for (int32_t r = 0; r < shape.pp; ++r)
    schedule.ranks[r].id = r;
  return schedule;
}
