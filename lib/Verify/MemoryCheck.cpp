//===- MemoryCheck.cpp - memory along each rank's program -----------------===//

#include "lib/Verify/MemoryCheck.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <map>

using namespace sched;

static constexpr int64_t kUnitScale = 1'000'000;

MemoryCheck::MemoryCheck(const ScheduleIndex &index,
                         const VerifyOptions &options)
    : index(index), options(options) {
  for (const StageCost &cost : index.schedule.stageCosts)
    if (cost.activation > 0 || cost.parameters > 0)
      bytes = true;
  scale = bytes ? 1 : kUnitScale;
  if (options.memoryLimit)
    internalLimit = std::llround(*options.memoryLimit * scale);
}

std::string MemoryCheck::format(int64_t amount) const {
  if (bytes)
    return llvm::formatv("{0} bytes", amount).str();
  std::string units =
      llvm::formatv("{0:F3}", static_cast<double>(amount) / scale).str();
  // 2.500 -> 2.5, 2.000 -> 2.
  units.erase(units.find_last_not_of('0') + 1);
  if (units.back() == '.')
    units.pop_back();
  return units + " activation units";
}

std::vector<int64_t> MemoryCheck::deltas(size_t r,
                                         int64_t &staticAmount) const {
  const Schedule &schedule = index.schedule;
  const std::vector<Action> &actions = schedule.ranks[r].actions;
  auto cost = [&](int32_t stage) {
    return schedule.stageCosts.empty() ? StageCost() : schedule.stageCosts[stage];
  };
  auto activation = [&](int32_t stage) {
    return bytes ? cost(stage).activation : scale;
  };
  auto weightGrad = [&](int32_t stage) {
    return bytes ? cost(stage).weightGrad
                 : std::llround(options.weightGradFraction * scale);
  };
  staticAmount = 0;
  if (bytes)
    for (int32_t s = 0; s < index.numStages; ++s)
      if (index.stageRank[s] == static_cast<int32_t>(r))
        staticAmount += cost(s).parameters;

  // A receive buffer lives from its receive to the compute that consumes
  // it on this rank.
  auto receiveBuffer = [&](bool gradient, int32_t stage, int32_t mb,
                           size_t consumer) -> int64_t {
    ActionRef recv = index.transfer(ActionKind::Recv, gradient, stage, mb);
    if (recv.rank != static_cast<int32_t>(r) ||
        static_cast<size_t>(recv.index) > consumer)
      return 0;
    return std::max<int64_t>(index.action(recv).bytes, 0);
  };
  std::vector<bool> unsharded(index.numStages, false);
  std::vector<int64_t> result(actions.size(), 0);
  for (size_t i = 0; i < actions.size(); ++i) {
    const Action &a = actions[i];
    int64_t &d = result[i];
    switch (a.kind) {
    case ActionKind::Forward:
      d = activation(a.stage) - receiveBuffer(false, a.stage, a.microbatch, i);
      break;
    case ActionKind::Backward:
    case ActionKind::BackwardInput: {
      const int64_t kept =
          a.kind == ActionKind::Backward ? 0 : weightGrad(a.stage);
      d = kept - activation(a.stage) -
          receiveBuffer(true, a.stage, a.microbatch, i);
      break;
    }
    case ActionKind::BackwardWeight:
      d = -weightGrad(a.stage);
      break;
    case ActionKind::Recv:
      d = bytes ? std::max<int64_t>(a.bytes, 0) : 0;
      break;
    case ActionKind::Unshard:
      if (bytes && !unsharded[a.stage])
        d = cost(a.stage).parameters;
      unsharded[a.stage] = true;
      break;
    case ActionKind::Reshard:
      if (bytes && unsharded[a.stage])
        d = -cost(a.stage).parameters;
      unsharded[a.stage] = false;
      break;
    default:
      break;
    }
  }
  // Members of a bundle run together: count their allocations before their
  // frees.
  for (size_t i = 0; i < actions.size();) {
    size_t end = i + 1;
    while (actions[i].bundle != 0 && end < actions.size() &&
           actions[end].bundle == actions[i].bundle)
      ++end;
    std::stable_sort(result.begin() + i, result.begin() + end,
                     [](int64_t x, int64_t y) { return x > 0 && y <= 0; });
    i = end;
  }
  return result;
}

void MemoryCheck::run(ViolationSink &sink) {
  const size_t numRanks = index.schedule.ranks.size();
  rankPeak.assign(numRanks, 0);
  chains.assign(numRanks, {});
  for (size_t r = 0; r < numRanks; ++r) {
    int64_t live = 0;
    std::vector<int64_t> d = deltas(r, live);
    MemoryChain &chain = chains[r];
    chain.rank = static_cast<int32_t>(r);
    chain.start = live;
    rankPeak[r] = live;
    int32_t firstOver = -1;
    int64_t atFirstOver = 0;
    int64_t sinceCheckpoint = 0;
    for (size_t i = 0; i < d.size(); ++i) {
      live += d[i];
      sinceCheckpoint += d[i];
      rankPeak[r] = std::max(rankPeak[r], live);
      if (internalLimit && live > *internalLimit && firstOver < 0) {
        firstOver = static_cast<int32_t>(i);
        atFirstOver = live;
      }
      // A local maximum ends a run of growth: only those can exceed.
      const bool peak = d[i] > 0 && (i + 1 == d.size() || d[i + 1] <= 0);
      if (!peak)
        continue;
      chain.steps.push_back(sinceCheckpoint);
      chain.values.push_back(live);
      chain.positions.push_back(static_cast<int32_t>(i));
      sinceCheckpoint = 0;
    }
    if (firstOver < 0)
      continue;
    if (Violation *v = sink.add(
            ViolationKind::Memory, {static_cast<int32_t>(r), firstOver},
            llvm::formatv("memory on rank {0} reaches {1} here, over the "
                          "limit of {2} (its peak is {3})",
                          index.schedule.ranks[r].id, format(atFirstOver),
                          format(*internalLimit), format(rankPeak[r]))))
      explainPeak(*v, r, firstOver);
  }
}

void MemoryCheck::explainPeak(Violation &violation, size_t r,
                              int32_t position) const {
  const Schedule &schedule = index.schedule;
  const std::vector<Action> &actions = schedule.ranks[r].actions;
  int64_t staticAmount = 0;
  std::vector<int64_t> d = deltas(r, staticAmount);
  int64_t live = staticAmount;
  // Replay to `position`, tracking which activations are alive: 1 = whole,
  // 2 = the weight-gradient residue left by I.
  std::map<std::pair<int32_t, int32_t>, int> state;
  for (int32_t i = 0; i <= position; ++i) {
    live += d[i];
    const Action &a = actions[i];
    const std::pair<int32_t, int32_t> key{a.stage, a.microbatch};
    if (a.kind == ActionKind::Forward)
      state[key] = 1;
    else if (a.kind == ActionKind::BackwardInput)
      state[key] = 2;
    else if (a.kind == ActionKind::Backward ||
             a.kind == ActionKind::BackwardWeight)
      state.erase(key);
  }
  std::string whole, residue;
  int64_t wholeAmount = 0, residueAmount = 0;
  size_t wholeCount = 0, residueCount = 0;
  for (auto &[key, kind] : state) {
    StageCost cost = schedule.stageCosts.empty()
                         ? StageCost()
                         : schedule.stageCosts[key.first];
    const int64_t full = bytes ? cost.activation : scale;
    const int64_t kept = bytes ? cost.weightGrad
                               : std::llround(options.weightGradFraction *
                                              scale);
    std::string &text = kind == 1 ? whole : residue;
    size_t &count = kind == 1 ? wholeCount : residueCount;
    (kind == 1 ? wholeAmount : residueAmount) += kind == 1 ? full : kept;
    if (count++ < 8)
      text += llvm::formatv("{0}({1},{2})", text.empty() ? "" : " ",
                            key.first, key.second)
                  .str();
  }
  auto more = [](size_t count) {
    return count > 8 ? llvm::formatv(" and {0} more", count - 8).str()
                     : std::string();
  };
  std::string text =
      llvm::formatv("live here: {0} = {1} whole activations {2} [{3}{4}]",
                    format(live), wholeCount, format(wholeAmount), whole,
                    more(wholeCount))
          .str();
  if (residueCount)
    text += llvm::formatv(" + {0} weight-gradient residues {1} [{2}{3}]",
                          residueCount, format(residueAmount), residue,
                          more(residueCount))
                .str();
  if (staticAmount)
    text += " + static " + format(staticAmount);
  if (const int64_t other =
          live - staticAmount - wholeAmount - residueAmount)
    text += " + receive buffers and unsharded parameters " + format(other);
  violation.notes.push_back({{static_cast<int32_t>(r), position}, text});
}

std::vector<double> MemoryCheck::peaks() const {
  std::vector<double> result;
  for (int64_t peak : rankPeak)
    result.push_back(static_cast<double>(peak) / scale);
  return result;
}
