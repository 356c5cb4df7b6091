//===- LocalSearch.cpp - swaps on a schedule's critical chain -------------===//

#include "lib/Synthesis/LocalSearch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <queue>

using namespace sched;

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

/// Each operation's position in its rank's order.
std::vector<uint32_t> positionsOf(const ProblemSolution &solution,
                                  size_t numOps) {
  std::vector<uint32_t> position(numOps, 0);
  for (const std::vector<uint32_t> &order : solution.order)
    for (size_t i = 0; i < order.size(); ++i)
      position[order[i]] = static_cast<uint32_t>(i);
  return position;
}

std::vector<std::pair<int32_t, size_t>>
criticalPairsAt(const PipelineProblem &problem, const ProblemSolution &solution,
                llvm::ArrayRef<uint32_t> position, int64_t &work) {
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  const double makespan = solution.makespan(ops);
  uint32_t op = 0;
  for (uint32_t o = 0; o < ops.size(); ++o)
    if (solution.start[o] + ops[o].duration >= makespan - 1e-9 * makespan)
      op = o;
  std::vector<std::pair<int32_t, size_t>> pairs;
  auto near = [](double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(a));
  };
  while (true) {
    ++work;
    const double start = solution.start[op];
    std::optional<uint32_t> cause;
    for (uint32_t dep : problem.getPredecessors(op)) {
      const ProblemDependence &d = problem.getDependences()[dep];
      if (near(solution.start[d.from] + ops[d.from].duration + d.latency,
               start)) {
        cause = d.from;
        break;
      }
    }
    const int32_t r = ops[op].rank;
    const size_t i = position[op];
    if (i > 0) {
      const uint32_t before = solution.order[r][i - 1];
      if (near(solution.start[before] + ops[before].duration, start)) {
        const ProblemOperation &a = ops[before], &b = ops[op];
        if (a.kind != b.kind || a.stage != b.stage)
          pairs.push_back({r, i - 1});
        if (!cause)
          cause = before;
      }
    }
    if (!cause)
      break;
    op = *cause;
  }
  return pairs;
}

/// A timed order kept up to date under swaps of adjacent operations.
class IncrementalSchedule {
public:
  IncrementalSchedule(const PipelineProblem &problem,
                      ProblemSolution &solution);

  /// Times the swap of operations `i` and `i + 1` of rank `r`; keeps it
  /// when its makespan is below `below` and memory stays within the
  /// limits, else restores the schedule. False, with nothing changed, when
  /// the swap makes the order wait in a cycle.
  bool trySwap(int32_t r, size_t i, double below, bool &kept);

  double makespan() const { return solution.makespan(ops); }
  llvm::ArrayRef<double> tails() const { return toEnd; }
  llvm::ArrayRef<uint32_t> positions() const { return position; }
  /// Operations re-timed and tails recomputed so far.
  int64_t work = 0;

private:
  uint32_t rankNext(uint32_t op) const {
    const auto &order = solution.order[ops[op].rank];
    return position[op] + 1 < order.size() ? order[position[op] + 1] : kNone;
  }
  uint32_t rankPrevious(uint32_t op) const {
    return position[op] > 0 ? solution.order[ops[op].rank][position[op] - 1]
                            : kNone;
  }
  /// The earliest start of `op` after its dependences and the operation
  /// before it on its rank (timeOrder's rule).
  double earliestStart(uint32_t op) const;
  /// The longest path from `op`'s start to the end (pathsToEnd's rule).
  double tailOf(uint32_t op) const;
  /// Whether a path of dependences and rank orders leads from one of
  /// `from`'s dependence successors to `to` (which starts no earlier).
  bool reaches(uint32_t from, uint32_t to);
  void swapInOrder(int32_t r, size_t i);
  /// Label correcting: `relax(op, push)` each seed in the order given (each
  /// after the ones it depends on), then each operation it pushes, in
  /// `Compare` order of their start times, until nothing is pushed.
  template <typename Compare, typename Relax>
  void propagate(llvm::ArrayRef<uint32_t> seeds, Relax relax);
  /// Re-times the operations from `seeds` on, logging each old start.
  void retime(llvm::ArrayRef<uint32_t> seeds);
  /// Recomputes the tails from `seeds` back.
  void updateTails(llvm::ArrayRef<uint32_t> seeds);
  /// Whether live memory `live` on rank `r` is over its limit.
  bool over(int32_t r, int64_t live) const {
    return limits[r] && live > *limits[r];
  }

  const PipelineProblem &problem;
  llvm::ArrayRef<ProblemOperation> ops;
  llvm::ArrayRef<ProblemDependence> deps;
  ProblemSolution &solution;
  std::vector<uint32_t> position;
  std::vector<double> toEnd;
  std::vector<std::optional<int64_t>> limits;
  /// Per rank, the memory live after each operation of its order, and how
  /// many of these (and parameters alone) are over the limit, all ranks.
  std::vector<std::vector<int64_t>> live;
  int64_t overCount = 0;
  std::vector<std::pair<uint32_t, double>> undo;
  std::vector<uint8_t> queued;
  std::vector<uint32_t> stack;
  std::vector<uint8_t> visited;
};

} // namespace

IncrementalSchedule::IncrementalSchedule(const PipelineProblem &problem,
                                         ProblemSolution &solution)
    : problem(problem), ops(problem.getOperations()),
      deps(problem.getDependences()), solution(solution),
      position(positionsOf(solution, problem.getOperations().size())),
      toEnd(pathsToEnd(problem, solution)), queued(ops.size(), 0),
      visited(ops.size(), 0) {
  const int32_t numRanks = problem.getNumRanks();
  live.resize(numRanks);
  for (int32_t r = 0; r < numRanks; ++r) {
    limits.push_back(problem.getMemoryLimit(r));
    int64_t memory = problem.getStaticMemory(r);
    overCount += over(r, memory);
    for (uint32_t op : solution.order[r]) {
      memory += ops[op].memoryDelta;
      live[r].push_back(memory);
      overCount += over(r, memory);
    }
  }
}

double IncrementalSchedule::earliestStart(uint32_t op) const {
  double at = 0;
  for (uint32_t dep : problem.getPredecessors(op)) {
    const ProblemDependence &d = deps[dep];
    at =
        std::max(at, solution.start[d.from] + ops[d.from].duration + d.latency);
  }
  const uint32_t before = rankPrevious(op);
  if (before != kNone)
    at = std::max(at, solution.start[before] + ops[before].duration);
  return at;
}

double IncrementalSchedule::tailOf(uint32_t op) const {
  const uint32_t next = rankNext(op);
  double after = next != kNone ? toEnd[next] : 0;
  for (uint32_t dep : problem.getSuccessors(op))
    after = std::max(after, deps[dep].latency + toEnd[deps[dep].to]);
  return ops[op].duration + after;
}

bool IncrementalSchedule::reaches(uint32_t from, uint32_t to) {
  // Starts never decrease along a path, so one that reaches `to` passes
  // only operations that start no later than it.
  const double limit = solution.start[to];
  stack.clear();
  std::vector<uint32_t> seen;
  auto push = [&](uint32_t op) {
    if (visited[op] || solution.start[op] > limit)
      return;
    visited[op] = 1;
    seen.push_back(op);
    stack.push_back(op);
  };
  for (uint32_t dep : problem.getSuccessors(from))
    push(deps[dep].to);
  bool found = false;
  while (!stack.empty() && !found) {
    const uint32_t op = stack.back();
    stack.pop_back();
    if (op == to) {
      found = true;
      break;
    }
    for (uint32_t dep : problem.getSuccessors(op))
      push(deps[dep].to);
    const uint32_t next = rankNext(op);
    if (next != kNone)
      push(next);
  }
  for (uint32_t op : seen)
    visited[op] = 0;
  return found;
}

void IncrementalSchedule::swapInOrder(int32_t r, size_t i) {
  std::vector<uint32_t> &order = solution.order[r];
  std::swap(order[i], order[i + 1]);
  position[order[i]] = static_cast<uint32_t>(i);
  position[order[i + 1]] = static_cast<uint32_t>(i + 1);
}

template <typename Compare, typename Relax>
void IncrementalSchedule::propagate(llvm::ArrayRef<uint32_t> seeds,
                                    Relax relax) {
  using Item = std::pair<double, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, Compare> heap;
  auto push = [&](uint32_t op) {
    if (!queued[op]) {
      queued[op] = 1;
      heap.push({solution.start[op], op});
    }
  };
  for (uint32_t op : seeds)
    relax(op, push);
  while (!heap.empty()) {
    const uint32_t op = heap.top().second;
    heap.pop();
    queued[op] = 0;
    relax(op, push);
  }
}

void IncrementalSchedule::retime(llvm::ArrayRef<uint32_t> seeds) {
  // Earliest (old) start first: an operation is timed again when something
  // before it moved, until nothing moves. The order has no cycle, so this
  // ends with timeOrder's times.
  using Item = std::pair<double, uint32_t>;
  propagate<std::greater<Item>>(seeds, [&](uint32_t op, auto &push) {
    const double start = earliestStart(op);
    if (start == solution.start[op])
      return;
    undo.push_back({op, solution.start[op]});
    ++work;
    solution.start[op] = start;
    for (uint32_t dep : problem.getSuccessors(op))
      push(deps[dep].to);
    const uint32_t next = rankNext(op);
    if (next != kNone)
      push(next);
  });
}

void IncrementalSchedule::updateTails(llvm::ArrayRef<uint32_t> seeds) {
  // The same, backwards: latest start first.
  using Item = std::pair<double, uint32_t>;
  propagate<std::less<Item>>(seeds, [&](uint32_t op, auto &push) {
    const double tail = tailOf(op);
    if (tail == toEnd[op])
      return;
    toEnd[op] = tail;
    ++work;
    for (uint32_t dep : problem.getPredecessors(op))
      push(deps[dep].from);
    const uint32_t before = rankPrevious(op);
    if (before != kNone)
      push(before);
  });
}

bool IncrementalSchedule::trySwap(int32_t r, size_t i, double below,
                                  bool &kept) {
  kept = false;
  std::vector<uint32_t> &order = solution.order[r];
  const uint32_t a = order[i], b = order[i + 1];
  // The swap closes a cycle when b already follows a by another path.
  if (reaches(a, b))
    return false;
  swapInOrder(r, i);
  undo.clear();
  llvm::SmallVector<uint32_t, 3> seeds = {b, a};
  if (i + 2 < order.size())
    seeds.push_back(order[i + 2]);
  retime(seeds);
  // Memory changes only after the first of the pair.
  const int64_t before = i > 0 ? live[r][i - 1] : problem.getStaticMemory(r);
  const int64_t between = before + ops[b].memoryDelta;
  const int64_t overAfter = overCount - over(r, live[r][i]) + over(r, between);
  if (overAfter == 0 && makespan() < below) {
    live[r][i] = between;
    overCount = overAfter;
    llvm::SmallVector<uint32_t, 3> tailSeeds = {a, b};
    if (i > 0)
      tailSeeds.push_back(order[i - 1]);
    updateTails(tailSeeds);
    kept = true;
    return true;
  }
  for (auto it = undo.rbegin(); it != undo.rend(); ++it)
    solution.start[it->first] = it->second;
  swapInOrder(r, i);
  return true;
}

std::vector<std::pair<int32_t, size_t>>
sched::criticalSwapPairs(const PipelineProblem &problem,
                         const ProblemSolution &solution) {
  int64_t work = 0;
  return criticalPairsAt(problem, solution,
                         positionsOf(solution, problem.getOperations().size()),
                         work);
}

std::vector<double> sched::pathsToEnd(const PipelineProblem &problem,
                                      const ProblemSolution &solution) {
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  llvm::ArrayRef<ProblemDependence> deps = problem.getDependences();
  std::vector<uint32_t> next(ops.size(), kNone), previous(ops.size(), kNone);
  for (const std::vector<uint32_t> &order : solution.order)
    for (size_t i = 0; i + 1 < order.size(); ++i) {
      next[order[i]] = order[i + 1];
      previous[order[i + 1]] = order[i];
    }
  std::vector<uint32_t> outstanding(ops.size(), 0);
  std::vector<uint32_t> ready;
  for (uint32_t op = 0; op < ops.size(); ++op) {
    outstanding[op] = problem.getSuccessors(op).size() + (next[op] != kNone);
    if (outstanding[op] == 0)
      ready.push_back(op);
  }
  std::vector<double> path(ops.size(), 0);
  auto done = [&](uint32_t op) {
    if (--outstanding[op] == 0)
      ready.push_back(op);
  };
  while (!ready.empty()) {
    const uint32_t op = ready.back();
    ready.pop_back();
    double after = next[op] != kNone ? path[next[op]] : 0;
    for (uint32_t dep : problem.getSuccessors(op))
      after = std::max(after, deps[dep].latency + path[deps[dep].to]);
    path[op] = ops[op].duration + after;
    for (uint32_t dep : problem.getPredecessors(op))
      done(deps[dep].from);
    if (previous[op] != kNone)
      done(previous[op]);
  }
  return path;
}

double sched::swapBound(const PipelineProblem &problem,
                        const ProblemSolution &solution,
                        llvm::ArrayRef<double> toEnd, int32_t r, size_t i) {
  // What runs before the pair and what runs after it keep their times (they
  // depend on neither), so the paths through the swapped pair are these.
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  llvm::ArrayRef<ProblemDependence> deps = problem.getDependences();
  const std::vector<uint32_t> &order = solution.order[r];
  const uint32_t a = order[i], b = order[i + 1];
  auto ready = [&](uint32_t op) {
    double at = 0;
    for (uint32_t dep : problem.getPredecessors(op)) {
      const ProblemDependence &d = deps[dep];
      if (d.from == a && op == b)
        return std::numeric_limits<double>::infinity();
      at = std::max(at,
                    solution.start[d.from] + ops[d.from].duration + d.latency);
    }
    return at;
  };
  auto tail = [&](uint32_t op) {
    double after = 0;
    for (uint32_t dep : problem.getSuccessors(op))
      after = std::max(after, deps[dep].latency + toEnd[deps[dep].to]);
    return after;
  };
  const double readyB = ready(b);
  if (std::isinf(readyB))
    return readyB;
  const double before =
      i > 0 ? solution.start[order[i - 1]] + ops[order[i - 1]].duration : 0;
  const double afterPair = i + 2 < order.size() ? toEnd[order[i + 2]] : 0;
  const double pathA = ops[a].duration + std::max(tail(a), afterPair);
  const double pathB = ops[b].duration + std::max(tail(b), pathA);
  const double startB = std::max(before, readyB);
  const double startA = std::max(startB + ops[b].duration, ready(a));
  return std::max(startB + pathB, startA + pathA);
}

LocalSearchStats sched::improveByLocalSearch(const PipelineProblem &problem,
                                             ProblemSolution &solution,
                                             double &makespan,
                                             const LocalSearchLimits &limits) {
  LocalSearchStats stats;
  IncrementalSchedule schedule(problem, solution);
  auto timeLeft = [&]() {
    return std::chrono::steady_clock::now() < limits.deadline;
  };
  auto trialsLeft = [&]() {
    stats.work = schedule.work;
    return (limits.maxTrials < 0 || stats.trials < limits.maxTrials) &&
           (limits.maxWork < 0 || schedule.work < limits.maxWork);
  };
  const double slack = 1e-9 * std::max(1.0, makespan);
  bool improved = true;
  while (improved && timeLeft() &&
         (limits.maxMoves < 0 || stats.improvingMoves < limits.maxMoves) &&
         trialsLeft() && makespan > limits.target + slack) {
    improved = false;
    for (auto [r, i] : criticalPairsAt(problem, solution, schedule.positions(),
                                       schedule.work)) {
      if (!timeLeft() || !trialsLeft())
        break;
      // Only a swap whose bound is below the makespan can shorten it.
      if (swapBound(problem, solution, schedule.tails(), r, i) >=
          makespan - slack)
        continue;
      ++stats.trials;
      bool kept = false;
      if (!schedule.trySwap(r, i, makespan - slack, kept) || !kept)
        continue;
      makespan = schedule.makespan();
      ++stats.improvingMoves;
      improved = true;
      break;
    }
  }
  stats.work = schedule.work;
  return stats;
}
