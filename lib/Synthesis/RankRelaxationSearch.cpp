//===- RankRelaxationSearch.cpp - one rank's relaxation by search ---------===//

#include "lib/Synthesis/RankRelaxationSearch.h"
#include "lib/Synthesis/Deadline.h"
#include "lib/Synthesis/LowerBound.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <string>
#include <tuple>
#include <unordered_map>

using namespace sched;

namespace {

/// A delay of the relaxation: the other end starts `slots` or more after
/// this end's start.
struct Delay {
  uint32_t other;
  int64_t slots;
};

/// The depth-first search over one rank's sequences.
class RelaxationSearch {
public:
  enum class Result { Feasible, Infeasible, Timeout };

  RelaxationSearch(const PipelineProblem &problem, const TimeWindows &windows,
                   double unit, int64_t horizon, int32_t rank,
                   llvm::ArrayRef<RankLag> lags, llvm::ArrayRef<uint32_t> guide,
                   const Deadline &deadline);

  /// False when some operation's window holds no slot.
  bool windowsHoldSlots() const { return nonEmpty; }

  Result run() { return search(0); }

private:
  Result search(size_t numDone);
  /// The earliest starts of the operations not done (`earliest`), the
  /// state's key (the operations done) and what it leaves (the machine's
  /// free slot, then for each operation not done that a done one delays,
  /// the slot it delays it to, at least the free one); false when one
  /// passes its window.
  bool computeEarliest(std::string &key, std::vector<int64_t> &leaves);
  /// Whether a state with `key` that leaves every slot of `leaves` or an
  /// earlier one already failed (every slot of a state only delays).
  bool dominated(const std::string &key,
                 const std::vector<int64_t> &leaves) const;
  /// Raises the earliest starts of the forwards not done by the memory
  /// they need freed first, and what follows them; false when one passes
  /// its window.
  bool raiseByMemory();
  /// Whether Jackson's preemptive schedule from the earliest starts meets
  /// every latest end.
  bool jacksonMeetsDeadlines();

  size_t n = 0;
  bool nonEmpty = true;
  std::vector<int64_t> first, latest, length, delta;
  std::vector<llvm::SmallVector<Delay, 4>> preds;
  /// The operations in an order that every delay follows.
  std::vector<uint32_t> topological;
  /// Each kind of a stage, in microbatch order, and how many of it are done.
  std::vector<std::vector<uint32_t>> chains;
  std::vector<size_t> nextOfChain;
  /// Each operation's place in the guide, the order tried first.
  std::vector<size_t> position;
  std::vector<uint8_t> done;
  std::vector<int64_t> start, earliest;
  /// The slot the machine is free from, and the memory held.
  int64_t freeAt = 0, memory = 0, room = std::numeric_limits<int64_t>::max();
  std::unordered_map<std::string, std::vector<std::vector<int64_t>>> failed;
  const Deadline &deadline;
  size_t nodes = 0;
};

RelaxationSearch::RelaxationSearch(const PipelineProblem &problem,
                                   const TimeWindows &windows, double unit,
                                   int64_t horizon, int32_t rank,
                                   llvm::ArrayRef<RankLag> lags,
                                   llvm::ArrayRef<uint32_t> guide,
                                   const Deadline &deadline)
    : deadline(deadline) {
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  std::vector<uint32_t> mine;
  std::vector<uint32_t> local(ops.size(), UINT32_MAX);
  for (uint32_t op = 0; op < ops.size(); ++op)
    if (ops[op].rank == rank) {
      local[op] = static_cast<uint32_t>(mine.size());
      mine.push_back(op);
    }
  n = mine.size();
  first.resize(n);
  latest.resize(n);
  length.resize(n);
  delta.resize(n);
  preds.resize(n);
  done.assign(n, 0);
  start.assign(n, 0);
  earliest.assign(n, 0);
  std::map<std::pair<int, int32_t>, std::vector<std::pair<int32_t, uint32_t>>>
      byKindAndStage;
  for (uint32_t i = 0; i < n; ++i) {
    const ProblemOperation &op = ops[mine[i]];
    length[i] = std::llround(op.duration / unit);
    std::tie(first[i], latest[i]) =
        slotWindow(problem, windows, unit, horizon, mine[i]);
    nonEmpty &= first[i] <= latest[i];
    delta[i] = op.memoryDelta;
    byKindAndStage[{static_cast<int>(op.kind), op.stage}].push_back(
        {op.microbatch, i});
  }
  // The delays out of each operation, as LowerBound.h's edges (their
  // latencies whole slots) for its topological order.
  std::vector<llvm::SmallVector<PathEdge, 4>> succs(n);
  auto addDelay = [&](uint32_t from, uint32_t to, int64_t slots) {
    preds[to].push_back({from, slots});
    succs[from].push_back({to, static_cast<double>(slots)});
  };
  for (const RankLag &lag : lags)
    addDelay(local[lag.from], local[lag.to], lag.slots);
  for (auto &[kindAndStage, members] : byKindAndStage) {
    std::sort(members.begin(), members.end());
    chains.emplace_back();
    for (auto [microbatch, i] : members) {
      if (!chains.back().empty())
        addDelay(chains.back().back(), i, length[chains.back().back()]);
      chains.back().push_back(i);
    }
  }
  nextOfChain.assign(chains.size(), 0);
  // Without a guide (or for what it leaves out), the most urgent first.
  position.assign(n, guide.size());
  for (size_t k = 0; k < guide.size(); ++k)
    if (local[guide[k]] != UINT32_MAX)
      position[local[guide[k]]] = k;
  // The delays have no cycle (each is at least its source's length).
  topological = topologicalOrder(succs);
  // A successor's latest start bounds its predecessors' (the windows were
  // narrowed over real times; this adds nothing unsound).
  for (size_t k = topological.size(); k-- > 0;) {
    const uint32_t i = topological[k];
    for (const PathEdge &e : succs[i])
      latest[i] =
          std::min<int64_t>(latest[i], latest[e.to] - std::llround(e.latency));
    nonEmpty &= first[i] <= latest[i];
  }
  if (std::optional<int64_t> limit = problem.getMemoryLimit(rank))
    room = *limit - problem.getStaticMemory(rank);
}

bool RelaxationSearch::computeEarliest(std::string &key,
                                       std::vector<int64_t> &leaves) {
  for (size_t next : nextOfChain) {
    const uint16_t count = static_cast<uint16_t>(next);
    key.append(reinterpret_cast<const char *>(&count), sizeof(count));
  }
  leaves.push_back(freeAt);
  for (uint32_t i : topological) {
    if (done[i])
      continue;
    int64_t fromDone = std::numeric_limits<int64_t>::min();
    int64_t at = std::max(first[i], freeAt);
    bool delayed = false;
    for (const Delay &d : preds[i]) {
      if (done[d.other]) {
        fromDone = std::max(fromDone, start[d.other] + d.slots);
        delayed = true;
      } else {
        at = std::max(at, earliest[d.other] + d.slots);
      }
    }
    // The operations done decide which are delayed by them, so the same
    // key lists the same ones.
    if (delayed)
      leaves.push_back(std::max(freeAt, fromDone));
    at = std::max(at, fromDone);
    earliest[i] = at;
    if (at > latest[i])
      return false;
  }
  return true;
}

bool RelaxationSearch::raiseByMemory() {
  if (room == std::numeric_limits<int64_t>::max())
    return true;
  // The k-th forward from here (k = 1, 2, ...) adds at least the least
  // activation, so before it the rank has freed memory + k * least - room
  // or more, by that many operations that free (each at most the most one
  // frees); those and the k - 1 forwards before it run one at a time from
  // their earliest starts, each for at least the least length.
  int64_t leastAllocation = std::numeric_limits<int64_t>::max();
  int64_t mostFreed = 0, leastLength = std::numeric_limits<int64_t>::max();
  size_t forwardsLeft = 0;
  llvm::SmallVector<int64_t, 128> frees;
  for (uint32_t i = 0; i < n; ++i) {
    if (done[i])
      continue;
    leastLength = std::min(leastLength, length[i]);
    if (delta[i] > 0) {
      leastAllocation = std::min(leastAllocation, delta[i]);
      ++forwardsLeft;
    } else if (delta[i] < 0) {
      mostFreed = std::max(mostFreed, -delta[i]);
      frees.push_back(earliest[i]);
    }
  }
  if (forwardsLeft == 0)
    return true;
  std::sort(frees.begin(), frees.end());
  // freedBy[q]: the least slot by which q operations that free can end.
  llvm::SmallVector<int64_t, 128> freedBy = {freeAt};
  for (int64_t release : frees)
    freedBy.push_back(std::max(freedBy.back(), release) + leastLength);
  // startOf[k - 1]: the least start of the k-th forward from here.
  llvm::SmallVector<int64_t, 64> startOf;
  for (size_t k = 1; k <= forwardsLeft; ++k) {
    const int64_t need =
        memory + static_cast<int64_t>(k) * leastAllocation - room;
    const size_t q =
        need <= 0 ? 0 : static_cast<size_t>((need + mostFreed - 1) / mostFreed);
    if (q >= freedBy.size())
      return false; // Nothing left frees enough.
    startOf.push_back(std::max(
        freedBy[q], freeAt + static_cast<int64_t>(k - 1 + q) * leastLength));
  }
  // The j-th forward of a chain from here is the (j + 1)-th forward or a
  // later one.
  bool raised = false;
  for (size_t c = 0; c < chains.size(); ++c)
    for (size_t j = nextOfChain[c]; j < chains[c].size(); ++j) {
      const uint32_t i = chains[c][j];
      if (delta[i] <= 0)
        break;
      const int64_t at = startOf[j - nextOfChain[c]];
      if (at > earliest[i]) {
        earliest[i] = at;
        raised = true;
      }
    }
  if (!raised)
    return true;
  for (uint32_t i : topological) {
    if (done[i])
      continue;
    for (const Delay &d : preds[i])
      if (!done[d.other])
        earliest[i] = std::max(earliest[i], earliest[d.other] + d.slots);
    if (earliest[i] > latest[i])
      return false;
  }
  return true;
}

bool RelaxationSearch::jacksonMeetsDeadlines() {
  llvm::SmallVector<uint32_t, 128> waiting;
  for (uint32_t i = 0; i < n; ++i)
    if (!done[i])
      waiting.push_back(i);
  std::sort(waiting.begin(), waiting.end(),
            [&](uint32_t a, uint32_t b) { return earliest[a] < earliest[b]; });
  // (latest end, slots left), the most urgent on top.
  using Job = std::pair<int64_t, int64_t>;
  std::priority_queue<Job, std::vector<Job>, std::greater<Job>> ready;
  int64_t now = std::numeric_limits<int64_t>::min();
  size_t k = 0;
  while (k < waiting.size() || !ready.empty()) {
    if (ready.empty())
      now = std::max(now, earliest[waiting[k]]);
    while (k < waiting.size() && earliest[waiting[k]] <= now) {
      const uint32_t i = waiting[k++];
      ready.push({latest[i] + length[i], length[i]});
    }
    Job job = ready.top();
    ready.pop();
    const int64_t nextRelease = k < waiting.size()
                                    ? earliest[waiting[k]]
                                    : std::numeric_limits<int64_t>::max();
    const int64_t run = std::min(job.second, nextRelease - now);
    now += run;
    job.second -= run;
    if (job.second > 0)
      ready.push(job);
    else if (now > job.first)
      return false;
  }
  return true;
}

RelaxationSearch::Result RelaxationSearch::search(size_t numDone) {
  if (numDone == n)
    return Result::Feasible;
  if (++nodes % 1024 == 0 && deadline.passed())
    return Result::Timeout;
  std::string key;
  std::vector<int64_t> leaves;
  if (!computeEarliest(key, leaves) || dominated(key, leaves))
    return Result::Infeasible;
  // The candidates start at their earliest slots before the memory's
  // raise, which only bounds what follows.
  llvm::SmallVector<int64_t, 8> startAt(chains.size());
  for (size_t c = 0; c < chains.size(); ++c)
    if (nextOfChain[c] < chains[c].size())
      startAt[c] = earliest[chains[c][nextOfChain[c]]];
  if (!raiseByMemory() || !jacksonMeetsDeadlines()) {
    failed[key].push_back(std::move(leaves));
    return Result::Infeasible;
  }
  // The chains' heads whose delays are all done, most urgent first.
  llvm::SmallVector<uint32_t, 8> candidates;
  for (size_t c = 0; c < chains.size(); ++c) {
    if (nextOfChain[c] == chains[c].size())
      continue;
    const uint32_t i = chains[c][nextOfChain[c]];
    if (delta[i] > 0 && memory + delta[i] > room)
      continue;
    if (llvm::all_of(preds[i], [&](const Delay &d) { return done[d.other]; }))
      candidates.push_back(static_cast<uint32_t>(c));
  }
  auto headOf = [&](uint32_t c) { return chains[c][nextOfChain[c]]; };
  std::sort(candidates.begin(), candidates.end(), [&](uint32_t a, uint32_t b) {
    const uint32_t x = headOf(a), y = headOf(b);
    return std::make_tuple(position[x], latest[x] + length[x], startAt[a]) <
           std::make_tuple(position[y], latest[y] + length[y], startAt[b]);
  });
  // A candidate that leaves the machine idle before it, while another one
  // that allocates nothing fits in that gap, is dominated: moving the other
  // into the gap, wherever the sequence had it later, changes no start but
  // its own, which moves earlier, and holds no more memory anywhere.
  auto fillsGapBefore = [&](uint32_t other, uint32_t c) {
    const uint32_t j = headOf(other);
    return other != c && delta[j] <= 0 &&
           startAt[other] + length[j] <= startAt[c];
  };
  const int64_t wasFree = freeAt;
  for (uint32_t c : candidates) {
    const uint32_t i = headOf(c);
    if (startAt[c] > freeAt && llvm::any_of(candidates, [&](uint32_t other) {
          return fillsGapBefore(other, c);
        }))
      continue;
    start[i] = startAt[c];
    done[i] = 1;
    ++nextOfChain[c];
    freeAt = start[i] + length[i];
    memory += delta[i];
    const Result result = search(numDone + 1);
    memory -= delta[i];
    freeAt = wasFree;
    --nextOfChain[c];
    done[i] = 0;
    if (result != Result::Infeasible)
      return result;
  }
  failed[key].push_back(std::move(leaves));
  return Result::Infeasible;
}

bool RelaxationSearch::dominated(const std::string &key,
                                 const std::vector<int64_t> &leaves) const {
  auto it = failed.find(key);
  if (it == failed.end())
    return false;
  for (const std::vector<int64_t> &earlier : it->second) {
    bool noLater = true;
    for (size_t k = 0; k < leaves.size() && noLater; ++k)
      noLater = earlier[k] <= leaves[k];
    if (noLater)
      return true;
  }
  return false;
}

} // namespace

TimeIndexedAnswer sched::searchRankRelaxation(const PipelineProblem &problem,
                                              const TimeWindows &windows,
                                              double unit, double makespan,
                                              double seconds, int32_t rank,
                                              llvm::ArrayRef<uint32_t> guide,
                                              RankLagCache *lagCache) {
  using Kind = TimeIndexedAnswer::Kind;
  const Deadline deadline(seconds);
  TimeIndexedAnswer answer;
  const int64_t horizon = horizonSlots(makespan, unit);
  answer.provedBound = double(horizon + 1) * unit;
  std::optional<RankLagCache> own;
  if (!lagCache)
    lagCache = &own.emplace(problem, unit);
  assert(lagCache->getUnit() == unit && "lags of another unit");
  const std::vector<RankLag> *lags = lagCache->lagsOf(rank, deadline);
  if (!lags) {
    answer.reason = "timeout";
    return answer;
  }
  RelaxationSearch search(problem, windows, unit, horizon, rank, *lags, guide,
                          deadline);
  if (!search.windowsHoldSlots()) {
    answer.kind = Kind::Unsat;
    return answer;
  }
  switch (search.run()) {
  case RelaxationSearch::Result::Feasible:
    answer.kind = Kind::Sat;
    break;
  case RelaxationSearch::Result::Infeasible:
    answer.kind = Kind::Unsat;
    break;
  case RelaxationSearch::Result::Timeout:
    answer.reason = "timeout";
    break;
  }
  return answer;
}
