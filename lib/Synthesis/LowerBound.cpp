//===- LowerBound.cpp - lower bounds on a pipeline problem's makespan -----===//

#include "lib/Synthesis/LowerBound.h"

#include <algorithm>
#include <limits>
#include <queue>

using namespace sched;

/// The operations of `problem` in an order where every dependence points
/// forward.
static std::vector<uint32_t> topologicalOrder(const PipelineProblem &problem) {
  const size_t n = problem.getOperations().size();
  std::vector<uint32_t> waiting(n, 0), order;
  order.reserve(n);
  for (const ProblemDependence &dep : problem.getDependences())
    ++waiting[dep.to];
  for (uint32_t op = 0; op < n; ++op)
    if (waiting[op] == 0)
      order.push_back(op);
  for (size_t i = 0; i < order.size(); ++i)
    for (uint32_t dep : problem.getSuccessors(order[i])) {
      const uint32_t to = problem.getDependences()[dep].to;
      if (--waiting[to] == 0)
        order.push_back(to);
    }
  return order;
}

PathLengths sched::computePathLengths(const PipelineProblem &problem) {
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  llvm::ArrayRef<ProblemDependence> deps = problem.getDependences();
  const std::vector<uint32_t> order = topologicalOrder(problem);
  PathLengths paths;
  paths.head.assign(ops.size(), 0);
  paths.tail.assign(ops.size(), 0);
  for (uint32_t op : order)
    for (uint32_t dep : problem.getSuccessors(op))
      paths.head[deps[dep].to] =
          std::max(paths.head[deps[dep].to],
                   paths.head[op] + ops[op].duration + deps[dep].latency);
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (uint32_t dep : problem.getSuccessors(*it)) {
      const uint32_t to = deps[dep].to;
      paths.tail[*it] = std::max(paths.tail[*it], deps[dep].latency +
                                                      ops[to].duration +
                                                      paths.tail[to]);
    }
  return paths;
}

/// Jackson's preemptive schedule of `jobs` on one machine: the least
/// max(end + tail) when jobs may be interrupted, a bound for the
/// non-preemptive problem.
static double jacksonPreemptive(std::vector<uint32_t> jobs,
                                llvm::ArrayRef<ProblemOperation> ops,
                                const PathLengths &paths) {
  std::sort(jobs.begin(), jobs.end(), [&](uint32_t a, uint32_t b) {
    return paths.head[a] < paths.head[b];
  });
  // Available jobs by largest tail, with their remaining time.
  std::priority_queue<std::pair<double, uint32_t>> available;
  std::vector<double> remaining(ops.size(), 0);
  double time = 0, bound = 0;
  size_t next = 0;
  while (next < jobs.size() || !available.empty()) {
    if (available.empty())
      time = std::max(time, paths.head[jobs[next]]);
    for (; next < jobs.size() && paths.head[jobs[next]] <= time; ++next) {
      remaining[jobs[next]] = ops[jobs[next]].duration;
      available.push({paths.tail[jobs[next]], jobs[next]});
    }
    const uint32_t job = available.top().second;
    const double release = next < jobs.size()
                               ? paths.head[jobs[next]]
                               : std::numeric_limits<double>::infinity();
    const double run = std::min(remaining[job], release - time);
    time += run;
    remaining[job] -= run;
    if (remaining[job] <= 0) {
      available.pop();
      bound = std::max(bound, time + paths.tail[job]);
    }
  }
  return bound;
}

/// Rank `r` can start no backward before `firstBackward`; until then it
/// runs forwards only, and no more than its memory holds (no backward has
/// freed any). Everything else follows, then the shortest tail.
static double memoryWaitBound(const PipelineProblem &problem, int32_t r,
                              const PathLengths &paths) {
  const std::optional<int64_t> limit = problem.getMemoryLimit(r);
  if (!limit)
    return 0;
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  const int32_t m = problem.getNumMicrobatches();
  double firstBackward = std::numeric_limits<double>::infinity();
  double firstForward = std::numeric_limits<double>::infinity();
  double work = 0, shortestTail = std::numeric_limits<double>::infinity();
  // (time per byte, time, bytes) of one forward per stage.
  struct Item {
    double duration;
    int64_t bytes;
  };
  std::vector<Item> items;
  for (int32_t s : problem.getStagesOf(r)) {
    const uint32_t f = problem.getOperation(ActionKind::Forward, s, 0);
    firstForward = std::min(firstForward, paths.head[f]);
    items.push_back({ops[f].duration, ops[f].memoryDelta});
    work += m * ops[f].duration;
    shortestTail = std::min(shortestTail, paths.tail[f]);
    for (ActionKind kind : problem.getBackwardKinds()) {
      const uint32_t b = problem.getOperation(kind, s, 0);
      if (kind != ActionKind::BackwardWeight)
        firstBackward = std::min(firstBackward, paths.head[b]);
      work += m * ops[b].duration;
      shortestTail = std::min(shortestTail, paths.tail[b]);
    }
  }
  // The most forward time the memory holds: a fractional knapsack, most
  // time per byte first, at most m forwards per stage.
  std::sort(items.begin(), items.end(), [](const Item &a, const Item &b) {
    return a.duration * std::max<int64_t>(b.bytes, 1) >
           b.duration * std::max<int64_t>(a.bytes, 1);
  });
  double room = static_cast<double>(*limit - problem.getStaticMemory(r));
  double forwardWork = 0;
  for (const Item &item : items) {
    double copies = m;
    if (item.bytes > 0)
      copies = std::min<double>(m, room / item.bytes);
    copies = std::max(0.0, copies);
    forwardWork += copies * item.duration;
    room -= copies * item.bytes;
  }
  forwardWork =
      std::min(forwardWork, std::max(0.0, firstBackward - firstForward));
  return firstBackward + (work - forwardWork) + shortestTail;
}

/// Rank `r` holds at most floor(room / activation) forwards of stage `s`
/// whose input gradient has not run, so (microbatches of a stage running
/// in order loses no schedule) the forward of microbatch j + K waits for
/// the input gradient of microbatch j, K = floor(room / activation): a
/// round trip down the pipeline and back. When the weight-gradient residues
/// of K microbatches do not fit either, it waits for W too.
static double memoryRoundTripBound(const PipelineProblem &problem, int32_t r,
                                   const PathLengths &paths) {
  const std::optional<int64_t> limit = problem.getMemoryLimit(r);
  if (!limit)
    return 0;
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  const int64_t room = *limit - problem.getStaticMemory(r);
  const int32_t m = problem.getNumMicrobatches();
  const ActionKind backward = problem.getBackwardKinds().front();
  double bound = 0;
  for (int32_t s : problem.getStagesOf(r)) {
    const uint32_t f = problem.getOperation(ActionKind::Forward, s, 0);
    const int64_t activation = ops[f].memoryDelta;
    if (activation <= 0)
      continue;
    const int64_t k = room / activation;
    if (k < 1 || k >= m)
      continue;
    const uint32_t b = problem.getOperation(backward, s, 0);
    double trip = paths.head[b] + ops[b].duration - paths.head[f];
    double tail = paths.tail[b];
    if (problem.getSpec().splitBackward) {
      const uint32_t w =
          problem.getOperation(ActionKind::BackwardWeight, s, 0);
      const int64_t residue = -ops[w].memoryDelta;
      // With I of microbatches j .. j+K-1 run and W of j not, the forward
      // of j + K would hold one activation and K residues.
      if (__int128(activation) + __int128(residue) * k > room) {
        trip += ops[w].duration;
        tail = std::max(0.0, tail - ops[w].duration);
      }
    }
    const int64_t rounds = (m - 1) / k, rest = (m - 1) % k;
    const double lastForward =
        paths.head[f] + rounds * trip + rest * ops[f].duration;
    bound = std::max(bound, lastForward + trip + tail);
  }
  return bound;
}

LowerBound sched::computeLowerBound(const PipelineProblem &problem) {
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  const PathLengths paths = computePathLengths(problem);
  LowerBound bound;
  for (uint32_t op = 0; op < ops.size(); ++op)
    bound.criticalPath =
        std::max(bound.criticalPath,
                 paths.head[op] + ops[op].duration + paths.tail[op]);
  bound.value = bound.criticalPath;
  std::vector<std::vector<uint32_t>> onRank(problem.getNumRanks());
  for (uint32_t op = 0; op < ops.size(); ++op)
    onRank[ops[op].rank].push_back(op);
  for (int32_t r = 0; r < problem.getNumRanks(); ++r) {
    const double work = jacksonPreemptive(onRank[r], ops, paths);
    const double memory = std::max(memoryWaitBound(problem, r, paths),
                                   memoryRoundTripBound(problem, r, paths));
    bound.rankWork = std::max(bound.rankWork, work);
    bound.memoryWait = std::max(bound.memoryWait, memory);
    if (std::max(work, memory) > bound.value) {
      bound.value = std::max(work, memory);
      bound.bindingRank = r;
    }
  }
  return bound;
}

double sched::relativeGap(double makespan, double bound) {
  if (makespan <= 0)
    return 0;
  const double gap = (makespan - bound) / makespan;
  // Times are sums of doubles: closer than that is equal.
  return gap < 1e-9 ? 0 : gap;
}
