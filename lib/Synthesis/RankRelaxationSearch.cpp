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
  /// A bound on the time one machine, free from the free slot with the
  /// memory held, runs the first `forwards` of `allocating` and the first
  /// `frees` of `freeing` (earliest starts, sorted), each for
  /// `leastLength`, an allocating one only where the frees before it make
  /// room for `leastAllocation` each, a free freeing `mostFreed`. The
  /// caller passes as many frees as the (forwards + 1)-th needs, which is
  /// enough for every earlier one.
  int64_t gatedFinish(llvm::ArrayRef<int64_t> allocating,
                      llvm::ArrayRef<int64_t> freeing, size_t forwards,
                      size_t frees, int64_t mostFreed, int64_t leastAllocation,
                      int64_t leastLength) const;
  /// How many allocating operations not done precede `i` by the delays.
  size_t ancestorsNotDone(uint32_t i) const;
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
  /// The allocating operations that precede each operation by the delays,
  /// `words` 64-bit words per operation, and the done ones as bits.
  size_t words = 0;
  std::vector<uint64_t> allocatingAncestors, doneBits;
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
  words = (n + 63) / 64;
  doneBits.assign(words, 0);
  allocatingAncestors.assign(n * words, 0);
  for (uint32_t i : topological)
    for (const Delay &d : preds[i]) {
      for (size_t w = 0; w < words; ++w)
        allocatingAncestors[i * words + w] |=
            allocatingAncestors[d.other * words + w];
      if (delta[d.other] > 0)
        allocatingAncestors[i * words + d.other / 64] |= uint64_t(1)
                                                         << (d.other % 64);
    }
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

int64_t RelaxationSearch::gatedFinish(llvm::ArrayRef<int64_t> allocating,
                                      llvm::ArrayRef<int64_t> freeing,
                                      size_t forwards, size_t frees,
                                      int64_t mostFreed,
                                      int64_t leastAllocation,
                                      int64_t leastLength) const {
  // Each kind in the order of its earliest starts, the j-th allocating one
  // after the free that makes room for it: precedences, which raise the
  // release dates (each job no earlier than its predecessor's end); then
  // the earliest release first, which is no later than any schedule of
  // the jobs (docs/synthesis.md).
  llvm::SmallVector<int64_t, 128> freed(frees), allocated(forwards);
  for (size_t q = 0; q < frees; ++q)
    freed[q] =
        std::max(freeing[q], q == 0 ? freeAt : freed[q - 1] + leastLength);
  for (size_t f = 0; f < forwards; ++f) {
    int64_t at = std::max(allocating[f],
                          f == 0 ? freeAt : allocated[f - 1] + leastLength);
    const int64_t need =
        memory + static_cast<int64_t>(f + 1) * leastAllocation - room;
    if (need > 0) {
      // need grows with f and the caller asked for as many frees as the
      // (forwards + 1)-th allocating one needs: there are enough.
      assert(mostFreed > 0 && "the caller refuses when nothing frees");
      const size_t q = static_cast<size_t>((need + mostFreed - 1) / mostFreed);
      assert(q <= frees && "the caller asks for the frees the last needs");
      at = std::max(at, freed[q - 1] + leastLength);
    }
    allocated[f] = at;
  }
  int64_t now = freeAt;
  size_t f = 0, q = 0;
  while (f < forwards || q < frees) {
    const bool takeFree =
        q < frees && (f == forwards || freed[q] <= allocated[f]);
    const int64_t release = takeFree ? freed[q++] : allocated[f++];
    now = std::max(now, release) + leastLength;
  }
  return now;
}

bool RelaxationSearch::raiseByMemory() {
  if (room == std::numeric_limits<int64_t>::max())
    return true;
  // Before the k-th allocating operation from here (k = 1, 2, ...) the
  // rank has run k - 1 others and freed memory + k * least - room or more,
  // by that many freeing operations (each freeing at most the most one
  // frees), each of those before an allocating one having made room for
  // it: a bound on the time one machine runs the earliest such
  // operations, each for the least length (gatedFinish), bounds its start.
  // An allocating operation with a allocating ancestors not done is the
  // (a + 1)-th from here or a later one.
  int64_t leastAllocation = std::numeric_limits<int64_t>::max();
  int64_t mostFreed = 0, leastLength = std::numeric_limits<int64_t>::max();
  llvm::SmallVector<int64_t, 128> allocating, freeing;
  for (uint32_t i = 0; i < n; ++i) {
    if (done[i])
      continue;
    leastLength = std::min(leastLength, length[i]);
    if (delta[i] > 0) {
      leastAllocation = std::min(leastAllocation, delta[i]);
      allocating.push_back(earliest[i]);
    } else if (delta[i] < 0) {
      mostFreed = std::max(mostFreed, -delta[i]);
      freeing.push_back(earliest[i]);
    }
  }
  if (allocating.empty())
    return true;
  std::sort(allocating.begin(), allocating.end());
  std::sort(freeing.begin(), freeing.end());
  // startOf[k - 1]: the least start of the k-th allocating one from here,
  // for k up to the most allocating ancestors an operation not done has.
  size_t deepest = 0;
  for (uint32_t i = 0; i < n; ++i)
    if (!done[i] && delta[i] > 0)
      deepest = std::max(deepest, ancestorsNotDone(i) + 1);
  llvm::SmallVector<int64_t, 64> startOf;
  for (size_t k = 1; k <= deepest; ++k) {
    const int64_t need =
        memory + static_cast<int64_t>(k) * leastAllocation - room;
    if (need > 0 && mostFreed <= 0)
      return false; // Nothing left frees any.
    const size_t q =
        need <= 0 ? 0 : static_cast<size_t>((need + mostFreed - 1) / mostFreed);
    if (q > freeing.size())
      return false; // Nothing left frees enough.
    startOf.push_back(gatedFinish(allocating, freeing, k - 1, q, mostFreed,
                                  leastAllocation, leastLength));
  }
  bool raised = false;
  for (uint32_t i = 0; i < n; ++i) {
    if (done[i] || delta[i] <= 0)
      continue;
    const int64_t at = startOf[ancestorsNotDone(i)];
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

size_t RelaxationSearch::ancestorsNotDone(uint32_t i) const {
  size_t count = 0;
  for (size_t w = 0; w < words; ++w)
    count += llvm::popcount(allocatingAncestors[i * words + w] & ~doneBits[w]);
  return count;
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
    doneBits[i / 64] |= uint64_t(1) << (i % 64);
    ++nextOfChain[c];
    freeAt = start[i] + length[i];
    memory += delta[i];
    const Result result = search(numDone + 1);
    memory -= delta[i];
    freeAt = wasFree;
    --nextOfChain[c];
    done[i] = 0;
    doneBits[i / 64] &= ~(uint64_t(1) << (i % 64));
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
