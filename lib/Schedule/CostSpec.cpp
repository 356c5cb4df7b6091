//===- CostSpec.cpp - per-stage costs from a command-line spec ------------===//

#include "lib/Schedule/CostSpec.h"
#include "lib/Limits/ActionTime.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace sched;

static llvm::Error costError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<CostSpec> sched::parseCostSpec(llvm::StringRef text) {
  CostSpec spec;
  if (text.trim().empty())
    return costError("--cost is empty; expected f=1,b=2 or f=1,i=1,w=1 "
                     "(comm=T optional)");
  bool seen[5] = {};
  constexpr llvm::StringLiteral keys[] = {"f", "b", "i", "w", "comm"};
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',');
  for (llvm::StringRef item : items) {
    if (!item.contains('='))
      return costError("--cost item '" + item.trim() +
                       "' is not key=value; expected f=1,b=2 or "
                       "f=1,i=1,w=1 (comm=T optional)");
    auto [key, value] = item.split('=');
    key = key.trim();
    value = value.trim();
    const auto *found = llvm::find(keys, key);
    if (found == std::end(keys))
      return costError("unknown --cost key '" + key +
                       "'; expected f, b, i, w or comm");
    const size_t k = found - std::begin(keys);
    if (seen[k])
      return costError("--cost names '" + key + "' twice");
    seen[k] = true;
    double number = 0;
    if (value.getAsDouble(number) || !std::isfinite(number))
      return costError("--cost " + key + " must be a number, got '" + value +
                       "'");
    if (number < 0)
      return costError("--cost " + key + " must be >= 0, got " + value);
    // Below it a picture's scale (its width over the makespan) is no
    // longer finite: f=1e-320 drew at x="inf".
    if (number != 0 && number < kMinActionTime)
      return costError("--cost " + key + " must be 0 or at least 1e-300, got " +
                       value);
    switch (k) {
    case 0:
      spec.forward = number;
      break;
    case 1:
      spec.backwardInput = spec.backwardWeight = number / 2;
      break;
    case 2:
      spec.backwardInput = number;
      break;
    case 3:
      spec.backwardWeight = number;
      break;
    default:
      spec.comm = number;
      break;
    }
  }
  if (seen[1] && (seen[2] || seen[3]))
    return costError("--cost takes either b (a full backward) or i and w "
                     "(its halves), not both");
  return spec;
}

void sched::applyCostSpec(Schedule &schedule, const CostSpec &spec) {
  schedule.stageCosts.resize(schedule.numStages);
  for (StageCost &cost : schedule.stageCosts) {
    cost.forward = spec.forward;
    cost.backwardInput = spec.backwardInput;
    cost.backwardWeight = spec.backwardWeight;
  }
}
