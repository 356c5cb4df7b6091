//===- MemoryCheck.cpp - memory along each rank's program -----------------===//

#include "lib/Verify/MemoryCheck.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

using namespace sched;

static constexpr int64_t kUnitScale = 1'000'000;

std::string sched::toDecimal(MemoryAmount amount) {
  if (amount == 0)
    return "0";
  const bool negative = amount < 0;
  std::string digits;
  while (amount != 0) {
    const int digit = static_cast<int>(amount % 10);
    digits.push_back(static_cast<char>('0' + (negative ? -digit : digit)));
    amount /= 10;
  }
  if (negative)
    digits.push_back('-');
  return std::string(digits.rbegin(), digits.rend());
}

MemoryCheck::MemoryCheck(const ScheduleIndex &index,
                         const VerifyOptions &options)
    : index(index), options(options) {
  const Schedule &schedule = index.schedule;
  for (const StageCost &cost : schedule.stageCosts)
    if (cost.activation > 0 || cost.parameters > 0)
      bytes = true;
  scale = bytes ? 1 : kUnitScale;
  // Limits compare exactly: the largest whole internal amount within it.
  if (options.memoryLimit && !options.memoryLimit->isUnbounded())
    internalLimit = options.memoryLimit->floorScaled(scale);
  sharded.assign(index.numStages, false);
  for (const RankProgram &rank : schedule.ranks)
    for (const Action &a : rank.actions)
      if ((a.kind == ActionKind::Unshard || a.kind == ActionKind::Reshard) &&
          a.stage >= 0 && a.stage < index.numStages)
        sharded[a.stage] = true;
}

std::string MemoryCheck::format(MemoryAmount amount) const {
  if (bytes)
    return toDecimal(amount) + " bytes";
  // Millionths as a decimal fraction without trailing zeros: 2.5, 2.
  const bool negative = amount < 0;
  const MemoryAmount magnitude = negative ? -amount : amount;
  std::string units = toDecimal(magnitude / scale);
  std::string fraction = toDecimal(magnitude % scale);
  fraction.insert(0, 6 - fraction.size(), '0');
  fraction.erase(fraction.find_last_not_of('0') + 1);
  if (!fraction.empty())
    units += "." + fraction;
  return (negative ? "-" : "") + units + " activation units";
}

MemoryAmount MemoryCheck::receiveBytes(const Action &recv) const {
  if (!bytes)
    return 0;
  return std::max<int64_t>(index.transferBytes(recv), 0);
}

std::pair<MemoryAmount, int32_t> MemoryCheck::inputGradient(size_t r,
                                                            size_t position,
                                                            int32_t stage,
                                                            int32_t mb) const {
  const Schedule &schedule = index.schedule;
  // The first stage of a chain computes no input gradient (its input is
  // data), and without sizes it has none to count.
  if (!bytes || schedule.isFirstStage(stage))
    return {0, -1};
  const int32_t rank = static_cast<int32_t>(r);
  const int32_t at = static_cast<int32_t>(position);
  // Lowered across ranks: the send backward of (stage, mb) carries it, and
  // the engine holds it until that send (run_plan.py's input_grads,
  // PyTorch's stage keeps it for its send op).
  const ActionRef send = index.transfer(ActionKind::Send, true, stage, mb);
  if (send.rank == rank && send.index > at)
    return {std::max<int64_t>(index.transferBytes(index.action(send)), 0),
            send.index};
  // The stage before on this rank (a V's turn): its backward takes it.
  if (index.stageRank[stage - 1] != rank)
    return {0, -1};
  const ActionRef consumer = index.inputGradient(stage - 1, mb);
  const int64_t output =
      stage - 1 < static_cast<int32_t>(schedule.stageCosts.size())
          ? schedule.stageCosts[stage - 1].output
          : -1;
  if (consumer.rank != rank || consumer.index <= at)
    return {0, -1};
  return {std::max<int64_t>(output, 0), consumer.index};
}

void MemoryCheck::visitChanges(
    size_t r, MemoryAmount &staticAmount,
    llvm::function_ref<void(size_t, const MemoryChange &)> visit) const {
  const Schedule &schedule = index.schedule;
  const std::vector<Action> &actions = schedule.ranks[r].actions;
  auto cost = [&](int32_t stage) {
    return schedule.stageCosts.empty() ? StageCost()
                                       : schedule.stageCosts[stage];
  };
  auto activation = [&](int32_t stage) -> MemoryAmount {
    return bytes ? cost(stage).activation : scale;
  };
  auto weightGrad = [&](int32_t stage) -> MemoryAmount {
    return bytes ? cost(stage).weightGrad
                 : std::llround(options.weightGradFraction * scale);
  };
  // A sharded stage keeps its shard (a ceil(1/n) part of its parameters,
  // n the replicas it is sharded over) and, between UNSHARD and RESHARD,
  // the full buffer FSDP gathers into (torch's FSDP allocates it beside the
  // shard; the shard is not a view of it). With hybrid sharding FSDP2's
  // 2-D mesh shards over `dp_shard` only and replicates across
  // `dp_replicate`, so n is the shard group's size, not dp.
  const MemoryAmount dp = schedule.shardGroupSize > 0
                              ? schedule.shardGroupSize
                              : std::max<int64_t>(schedule.dataParallel, 1);
  auto shard = [&](int32_t stage) -> MemoryAmount {
    const MemoryAmount parameters = cost(stage).parameters;
    return sharded[stage] ? (parameters + dp - 1) / dp : parameters;
  };
  staticAmount = 0;
  if (bytes)
    for (int32_t s = 0; s < index.numStages; ++s)
      if (index.stageRank[s] == static_cast<int32_t>(r))
        staticAmount += shard(s);

  // A receive buffer lives from its receive to the compute that consumes
  // it on this rank.
  auto consume = [&](size_t i, MemoryTerm term, int32_t stage, int32_t mb) {
    const bool gradient = term == MemoryTerm::ReceivedGradient;
    ActionRef recv = index.transfer(ActionKind::Recv, gradient, stage, mb);
    if (recv.rank != static_cast<int32_t>(r) ||
        static_cast<size_t>(recv.index) > i)
      return;
    if (MemoryAmount amount = receiveBytes(index.action(recv)))
      visit(i, {term, stage, mb, -amount});
  };
  // Input gradients waiting on this rank, by the action that releases each
  // (a heap on it): only those in flight are held, not a list per action.
  using Release = std::pair<int32_t, MemoryChange>;
  auto later = [](const Release &x, const Release &y) {
    return x.first > y.first;
  };
  std::vector<Release> released;
  std::vector<bool> gathered(index.numStages, false);
  // A sharded stage's full gradient: autograd accumulates into the
  // gathered parameters' gradient from the stage's first B or W, and it
  // stays until REDUCE_GRAD reduce-scatters it into the shard (torch's
  // FSDP with gradient sync deferred to the last backward, as PyTorch's
  // pipelining runtime runs it; run_plan.py's reduce_grad). A gradient
  // reduction collective reduces in place and frees nothing; a stage not
  // sharded keeps its gradient in its `parameters` (DDP's and Megatron's
  // gradient buffers persist across steps).
  std::vector<bool> unreduced(index.numStages, false);
  for (size_t i = 0; i < actions.size(); ++i) {
    const Action &a = actions[i];
    while (!released.empty() &&
           released.front().first <= static_cast<int32_t>(i)) {
      visit(i, released.front().second);
      std::pop_heap(released.begin(), released.end(), later);
      released.pop_back();
    }
    const bool valid = a.stage >= 0 && a.stage < index.numStages;
    const bool accumulates =
        a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardWeight;
    if (accumulates && valid && bytes && sharded[a.stage] &&
        !unreduced[a.stage]) {
      unreduced[a.stage] = true;
      if (MemoryAmount full = cost(a.stage).parameters)
        visit(i, {MemoryTerm::UnreducedGradient, a.stage, -1, full});
    }
    switch (a.kind) {
    case ActionKind::Forward: {
      // In a layerwise overlap the forward holds its activations' peak
      // beside the backward (layerwiseOverlapPeak) and the rest once the
      // backward has freed its own.
      const size_t partner = layerwisePartner(actions, i);
      if (partner != i && valid) {
        const Action &b = actions[partner];
        const bool known = b.stage >= 0 && b.stage < index.numStages;
        const MemoryAmount whole = activation(a.stage);
        const MemoryAmount peak = layerwiseOverlapPeak(
            static_cast<int64_t>(whole), cost(a.stage).layers,
            known ? static_cast<int64_t>(activation(b.stage)) : 0,
            known ? cost(b.stage).layers : 1);
        visit(i, {MemoryTerm::Activation, a.stage, a.microbatch, peak});
        visit(partner,
              {MemoryTerm::Activation, a.stage, a.microbatch, whole - peak});
      } else {
        visit(i, {MemoryTerm::Activation, a.stage, a.microbatch,
                  activation(a.stage)});
      }
      consume(i, MemoryTerm::ReceivedActivation, a.stage, a.microbatch);
      break;
    }
    case ActionKind::Backward:
    case ActionKind::BackwardInput: {
      visit(i, {MemoryTerm::Activation, a.stage, a.microbatch,
                -activation(a.stage)});
      if (a.kind == ActionKind::BackwardInput)
        visit(i, {MemoryTerm::WeightGradResidue, a.stage, a.microbatch,
                  weightGrad(a.stage)});
      consume(i, MemoryTerm::ReceivedGradient, a.stage, a.microbatch);
      auto [amount, until] = inputGradient(r, i, a.stage, a.microbatch);
      if (amount == 0)
        break;
      visit(i,
            {MemoryTerm::UnsentInputGradient, a.stage, a.microbatch, amount});
      released.push_back(
          {until,
           {MemoryTerm::UnsentInputGradient, a.stage, a.microbatch, -amount}});
      std::push_heap(released.begin(), released.end(), later);
      break;
    }
    case ActionKind::BackwardWeight:
      visit(i, {MemoryTerm::WeightGradResidue, a.stage, a.microbatch,
                -weightGrad(a.stage)});
      break;
    case ActionKind::Recv:
      // A shape exchange's 24 bytes are read and freed at once (Megatron's
      // `.tolist()`): no buffer that lives on.
      if (a.shape)
        break;
      if (MemoryAmount amount = receiveBytes(a))
        visit(i, {a.gradient ? MemoryTerm::ReceivedGradient
                             : MemoryTerm::ReceivedActivation,
                  a.stage, a.microbatch, amount});
      break;
    case ActionKind::Unshard:
      if (bytes && !gathered[a.stage] && cost(a.stage).parameters)
        visit(i, {MemoryTerm::GatheredParameters, a.stage, -1,
                  cost(a.stage).parameters});
      gathered[a.stage] = true;
      break;
    case ActionKind::Reshard:
      if (bytes && gathered[a.stage] && cost(a.stage).parameters)
        visit(i, {MemoryTerm::GatheredParameters, a.stage, -1,
                  -MemoryAmount(cost(a.stage).parameters)});
      gathered[a.stage] = false;
      break;
    case ActionKind::ReduceGrad:
      if (valid && unreduced[a.stage] && cost(a.stage).parameters)
        visit(i, {MemoryTerm::UnreducedGradient, a.stage, -1,
                  -MemoryAmount(cost(a.stage).parameters)});
      if (valid)
        unreduced[a.stage] = false;
      break;
    default:
      break;
    }
  }
}

std::vector<llvm::SmallVector<MemoryChange, 2>>
MemoryCheck::changes(size_t r, MemoryAmount &staticAmount) const {
  const std::vector<Action> &actions = index.schedule.ranks[r].actions;
  std::vector<llvm::SmallVector<MemoryChange, 2>> result(actions.size());
  visitChanges(r, staticAmount, [&](size_t i, const MemoryChange &change) {
    result[i].push_back(change);
  });
  allocationsFirst(actions, result,
                   [](const llvm::SmallVector<MemoryChange, 2> &c) {
                     MemoryAmount sum = 0;
                     for (const MemoryChange &change : c)
                       sum += change.amount;
                     return sum;
                   });
  return result;
}

std::vector<MemoryAmount>
MemoryCheck::deltas(size_t r, MemoryAmount &staticAmount) const {
  // Only the sums: the terms of each change (changes(), 80 bytes and more
  // per action) are for the note at a violation.
  const std::vector<Action> &actions = index.schedule.ranks[r].actions;
  std::vector<MemoryAmount> result(actions.size(), 0);
  visitChanges(r, staticAmount, [&](size_t i, const MemoryChange &change) {
    result[i] += change.amount;
  });
  allocationsFirst(actions, result, [](MemoryAmount sum) { return sum; });
  return result;
}

void MemoryCheck::run(ViolationSink &sink) {
  const size_t numRanks = index.schedule.ranks.size();
  rankPeak.assign(numRanks, 0);
  chains.assign(numRanks, {});
  for (size_t r = 0; r < numRanks; ++r) {
    MemoryAmount live = 0;
    std::vector<MemoryAmount> d = deltas(r, live);
    MemoryChain &chain = chains[r];
    chain.rank = static_cast<int32_t>(r);
    // The static memory is the first checkpoint: parameters alone may be
    // over the limit.
    chain.steps.push_back(live);
    chain.values.push_back(live);
    chain.positions.push_back(-1);
    rankPeak[r] = live;
    int32_t firstOver = internalLimit && live > *internalLimit ? -1 : -2;
    MemoryAmount atFirstOver = live;
    MemoryAmount sinceCheckpoint = 0;
    for (size_t i = 0; i < d.size(); ++i) {
      live += d[i];
      sinceCheckpoint += d[i];
      rankPeak[r] = std::max(rankPeak[r], live);
      if (internalLimit && live > *internalLimit && firstOver == -2) {
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
    if (firstOver == -2)
      continue;
    const int64_t id = index.schedule.ranks[r].id;
    if (firstOver == -1) {
      sink.add(ViolationKind::Memory, {static_cast<int32_t>(r), -1},
               llvm::formatv("static memory on rank {0} (the parameters of "
                             "its stages) is {1}, over the limit of {2}",
                             id, format(atFirstOver), format(*internalLimit)));
      continue;
    }
    if (Violation *v = sink.add(
            ViolationKind::Memory, {static_cast<int32_t>(r), firstOver},
            llvm::formatv("memory on rank {0} reaches {1} here, over the "
                          "limit of {2} (its peak is {3})",
                          id, format(atFirstOver), format(*internalLimit),
                          format(rankPeak[r]))))
      explainPeak(*v, r, firstOver);
  }
}

/// How a note names the tensors of a term.
static const char *termName(MemoryTerm term) {
  switch (term) {
  case MemoryTerm::Activation:
    return "whole activations";
  case MemoryTerm::WeightGradResidue:
    return "weight-gradient residues";
  case MemoryTerm::ReceivedActivation:
    return "received activations";
  case MemoryTerm::ReceivedGradient:
    return "received gradients";
  case MemoryTerm::GatheredParameters:
    return "gathered parameters (UNSHARD to RESHARD)";
  case MemoryTerm::UnreducedGradient:
    return "unreduced gradients (first B or W to REDUCE_GRAD)";
  case MemoryTerm::UnsentInputGradient:
    return "input gradients waiting for their send";
  }
  return "";
}

void MemoryCheck::explainPeak(Violation &violation, size_t r,
                              int32_t position) const {
  MemoryAmount staticAmount = 0;
  const std::vector<llvm::SmallVector<MemoryChange, 2>> all =
      changes(r, staticAmount);
  // Replay to `position`: what each live tensor holds, by term.
  std::map<std::tuple<MemoryTerm, int32_t, int32_t>, MemoryAmount> live;
  MemoryAmount total = staticAmount;
  for (int32_t i = 0; i <= position; ++i)
    for (const MemoryChange &c : all[i]) {
      total += c.amount;
      MemoryAmount &held = live[{c.term, c.stage, c.microbatch}];
      held += c.amount;
      if (held == 0)
        live.erase({c.term, c.stage, c.microbatch});
    }
  std::string text = "live here: " + format(total) + " =";
  const char *plus = "";
  for (auto it = live.begin(); it != live.end();) {
    const MemoryTerm term = std::get<0>(it->first);
    MemoryAmount amount = 0;
    size_t count = 0;
    std::string names;
    for (; it != live.end() && std::get<0>(it->first) == term; ++it) {
      amount += it->second;
      auto [unused, stage, mb] = it->first;
      if (count++ < 8)
        names +=
            llvm::formatv("{0}{1}", names.empty() ? "" : " ",
                          mb < 0 ? "stage " + std::to_string(stage)
                                 : llvm::formatv("({0},{1})", stage, mb).str())
                .str();
    }
    text += llvm::formatv("{0} {1} {2} {3} [{4}{5}]", plus, count,
                          termName(term), format(amount), names,
                          count > 8
                              ? llvm::formatv(" and {0} more", count - 8).str()
                              : std::string())
                .str();
    plus = " +";
  }
  if (staticAmount)
    text += llvm::formatv("{0} static {1}", plus, format(staticAmount)).str();
  violation.notes.push_back({{static_cast<int32_t>(r), position}, text});
}

std::vector<double> MemoryCheck::peaks() const {
  std::vector<double> result;
  for (MemoryAmount peak : rankPeak)
    result.push_back(static_cast<double>(peak) / scale);
  return result;
}
