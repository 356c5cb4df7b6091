//===- WindowBound.cpp - time windows narrowed by propagation -------------===//
//
// Every rule below removes only start times that no canonical schedule of
// makespan <= T uses, so a window that empties proves that none is that
// short, and since some optimal schedule is canonical (docs/synthesis.md),
// that the optimum is longer. Comparisons allow a relative 1e-9 (the
// schedules are timed in doubles), so rounding never refutes a schedule.
//
//===----------------------------------------------------------------------===//

#include "lib/Synthesis/WindowBound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

using namespace sched;

std::optional<std::vector<MemoryClause>>
sched::oneStageMemoryClauses(const PipelineProblem &problem, int32_t rank) {
  std::vector<MemoryClause> clauses;
  const std::optional<int64_t> cap = problem.getMemoryLimit(rank);
  if (!cap)
    return clauses;
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  int64_t all = problem.getStaticMemory(rank);
  for (const ProblemOperation &op : ops)
    if (op.rank == rank)
      all += std::max<int64_t>(0, op.memoryDelta);
  if (all <= *cap)
    return clauses;
  if (problem.getStagesOf(rank).size() != 1)
    return std::nullopt;
  const int32_t s = problem.getStagesOf(rank).front();
  llvm::ArrayRef<ActionKind> kinds = problem.getBackwardKinds();
  auto delta = [&](ActionKind kind) {
    return ops[problem.getOperation(kind, s, 0)].memoryDelta;
  };
  const int64_t forward = delta(ActionKind::Forward);
  const int64_t input = delta(kinds.front());
  const int64_t weight = kinds.size() > 1 ? delta(kinds[1]) : 0;
  if (forward < 0 || input > 0 || weight > 0)
    return std::nullopt;
  // After F(s, n) the rank holds its parameters and n + 1 activations,
  // less what the i input gradients and w weight gradients before it
  // freed. Fewer input gradients need at least as many weight gradients,
  // so "I(s, i) before F(s, n), or W(s, w_i - 1)", w_i the fewest weight
  // gradients that fit beside i input gradients, states the limit.
  const int32_t m = problem.getNumMicrobatches();
  for (int32_t n = 0; n < m; ++n)
    for (int32_t i = 0; i <= n; ++i) {
      const int64_t excess =
          problem.getStaticMemory(rank) + (n + 1) * forward + i * input - *cap;
      if (excess <= 0)
        break;
      MemoryClause clause;
      clause.forward = problem.getOperation(ActionKind::Forward, s, n);
      clause.input = problem.getOperation(kinds.front(), s, i);
      const int64_t weights =
          weight < 0 ? (excess + -weight - 1) / -weight : int64_t(m) + 1;
      if (weights <= i)
        clause.weight = problem.getOperation(kinds[1], s,
                                             static_cast<int32_t>(weights - 1));
      clauses.push_back(clause);
    }
  return clauses;
}

namespace {

/// Ranks with more operations than this skip edge finding (cubic in them).
constexpr size_t kEdgeFindingOperations = 128;
/// Most sweeps of the rules per makespan.
constexpr int kMaxSweeps = 200;

/// The rules, set up once per problem and run per makespan.
class WindowNarrowing {
public:
  WindowNarrowing(const PipelineProblem &problem, const PathLengths &paths)
      : problem(problem), paths(paths), ops(problem.getOperations()),
        edges(computePrecedences(problem, PathModel::Canonical)),
        order(topologicalOrder(edges)), onRank(problem.getNumRanks()) {
    for (uint32_t op = 0; op < ops.size(); ++op)
      onRank[ops[op].rank].push_back(op);
    for (int32_t r = 0; r < problem.getNumRanks(); ++r)
      if (std::optional<std::vector<MemoryClause>> c =
              oneStageMemoryClauses(problem, r))
        clauses.insert(clauses.end(), c->begin(), c->end());
  }

  /// The windows under `makespan`, shaved for up to `shavingSeconds`;
  /// the rules stop at `until` (narrowing less, never refuting more).
  std::optional<TimeWindows>
  run(double makespan, double shavingSeconds,
      std::chrono::steady_clock::time_point until =
          std::chrono::steady_clock::time_point::max());

private:
  /// Raises `value` to `to`; notes a change beyond rounding.
  void raise(double &value, double to) {
    if (to > value + epsilon) {
      value = to;
      changed = true;
    }
  }
  void lower(double &value, double to) {
    if (to < value - epsilon) {
      value = to;
      changed = true;
    }
  }
  /// Whether `a` can end before `b` starts on their rank.
  bool canPrecede(uint32_t a, uint32_t b) const {
    return w.head[a] + ops[a].duration <= w.end[b] - ops[b].duration + slack;
  }
  /// `a` runs before `b` on their rank.
  void order2(uint32_t a, uint32_t b) {
    raise(w.head[b], w.head[a] + ops[a].duration);
    lower(w.end[a], w.end[b] - ops[b].duration);
  }
  bool precedences();
  bool pairs(const std::vector<uint32_t> &rank);
  bool edgeFinding(const std::vector<uint32_t> &rank);
  bool memory();
  /// Runs the rules until nothing changes; false when a window empties.
  bool fixpoint();
  /// Shaving: a half of a window that the rules refute is cut off, until
  /// nothing is or the deadline; false when a window empties.
  bool shave(std::chrono::steady_clock::time_point deadline);

  const PipelineProblem &problem;
  const PathLengths &paths;
  llvm::ArrayRef<ProblemOperation> ops;
  std::vector<llvm::SmallVector<PathEdge, 4>> edges;
  std::vector<uint32_t> order;
  std::vector<std::vector<uint32_t>> onRank;
  std::vector<MemoryClause> clauses;
  TimeWindows w;
  double slack = 0, epsilon = 0;
  bool changed = false;
  std::chrono::steady_clock::time_point deadline;
};

} // namespace

bool WindowNarrowing::precedences() {
  for (uint32_t op : order)
    for (const PathEdge &e : edges[op])
      raise(w.head[e.to], w.head[op] + ops[op].duration + e.latency);
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (const PathEdge &e : edges[*it])
      lower(w.end[*it], w.end[e.to] - ops[e.to].duration - e.latency);
  for (uint32_t op = 0; op < ops.size(); ++op)
    if (w.head[op] + ops[op].duration > w.end[op] + slack)
      return false;
  return true;
}

/// Two operations of a rank that fit one way only run that way.
bool WindowNarrowing::pairs(const std::vector<uint32_t> &rank) {
  for (size_t i = 0; i < rank.size(); ++i)
    for (size_t j = i + 1; j < rank.size(); ++j) {
      const uint32_t a = rank[i], b = rank[j];
      const bool ab = canPrecede(a, b), ba = canPrecede(b, a);
      if (!ab && !ba)
        return false;
      if (!ab)
        order2(b, a);
      else if (!ba)
        order2(a, b);
    }
  return true;
}

/// Edge finding (Carlier and Pinson): for a set S of a rank's operations
/// (those with head >= h and end <= d, a task interval) and one more, i:
/// when S and i cannot all end by d, i runs after all of S, so it starts
/// no earlier than S can end; when they cannot all run from h by i's end
/// or d, i runs before all of S, so it ends by d less S's work. A set that
/// does not fit between h and d alone refutes the makespan.
bool WindowNarrowing::edgeFinding(const std::vector<uint32_t> &rank) {
  if (rank.size() > kEdgeFindingOperations)
    return true;
  std::vector<uint32_t> set;
  std::vector<char> inSet(ops.size(), 0);
  for (uint32_t last : rank) {
    const double d = w.end[last];
    set.clear();
    for (uint32_t op : rank)
      if (w.end[op] <= d)
        set.push_back(op);
    // Latest head first: each prefix is the task interval of its last head.
    std::sort(set.begin(), set.end(),
              [&](uint32_t a, uint32_t b) { return w.head[a] > w.head[b]; });
    double work = 0, earliestEnd = 0;
    for (size_t k = 0; k < set.size(); ++k) {
      const double h = w.head[set[k]];
      work += ops[set[k]].duration;
      inSet[set[k]] = 1;
      if (h + work > d + slack) {
        for (uint32_t op : set)
          inSet[op] = 0;
        return false;
      }
      // The set's operations all end no earlier than this (each prefix is
      // a subset that starts at its head).
      earliestEnd = std::max(earliestEnd, h + work);
      for (uint32_t i : rank) {
        if (inSet[i])
          continue;
        const double p = ops[i].duration;
        if (std::min(h, w.head[i]) + work + p > d + slack)
          raise(w.head[i], earliestEnd);
        if (h + work + p > std::max(d, w.end[i]) + slack)
          lower(w.end[i], d - work);
      }
    }
    for (uint32_t op : set)
      inSet[op] = 0;
  }
  return true;
}

/// A memory clause whose one side cannot hold holds by the other.
bool WindowNarrowing::memory() {
  for (const MemoryClause &c : clauses) {
    const bool input = canPrecede(c.input, c.forward);
    const bool weight = c.weight && canPrecede(*c.weight, c.forward);
    if (!input && !weight)
      return false;
    if (!weight)
      order2(c.input, c.forward);
    else if (!input)
      order2(*c.weight, c.forward);
  }
  return true;
}

bool WindowNarrowing::fixpoint() {
  changed = true;
  for (int sweep = 0; changed && sweep < kMaxSweeps &&
                      std::chrono::steady_clock::now() < deadline;
       ++sweep) {
    changed = false;
    if (!precedences())
      return false;
    if (!memory())
      return false;
    for (const std::vector<uint32_t> &rank : onRank)
      if (!pairs(rank) || !edgeFinding(rank))
        return false;
  }
  return precedences();
}

bool WindowNarrowing::shave(std::chrono::steady_clock::time_point deadline) {
  bool shaved = true;
  while (shaved) {
    shaved = false;
    for (uint32_t op = 0; op < ops.size(); ++op) {
      if (std::chrono::steady_clock::now() >= deadline)
        return true;
      for (bool early : {true, false}) {
        const double room = w.end[op] - ops[op].duration - w.head[op];
        if (room <= 10 * slack)
          continue;
        // Can `op` start in the first (last) half of its window? If the
        // rules refute it, it starts in the other half.
        const TimeWindows saved = w;
        if (early)
          w.end[op] = w.head[op] + room / 2 + ops[op].duration;
        else
          w.head[op] += room / 2;
        const bool feasible = fixpoint();
        w = saved;
        if (feasible)
          continue;
        if (early)
          w.head[op] += room / 2;
        else
          w.end[op] -= room / 2;
        shaved = true;
        if (!fixpoint())
          return false;
      }
    }
  }
  return true;
}

std::optional<TimeWindows>
WindowNarrowing::run(double makespan, double shavingSeconds,
                     std::chrono::steady_clock::time_point until) {
  deadline = until;
  const auto shavingDeadline = std::min(
      until,
      std::chrono::steady_clock::now() +
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
              std::chrono::duration<double>(std::max(0.0, shavingSeconds))));
  slack = 1e-10 * std::max(1.0, makespan);
  epsilon = slack;
  w.head = paths.head;
  w.end.resize(ops.size());
  for (uint32_t op = 0; op < ops.size(); ++op)
    w.end[op] = makespan - paths.tail[op];
  if (!fixpoint())
    return std::nullopt;
  if (shavingSeconds > 0 && !shave(shavingDeadline))
    return std::nullopt;
  return w;
}

std::optional<TimeWindows> sched::narrowWindows(const PipelineProblem &problem,
                                                const PathLengths &canonical,
                                                double makespan, double seconds,
                                                double shavingSeconds) {
  const auto now = std::chrono::steady_clock::now();
  const auto until =
      seconds >= 1e9
          ? std::chrono::steady_clock::time_point::max()
          : now +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(std::max(0.0, seconds)));
  return WindowNarrowing(problem, canonical)
      .run(makespan, shavingSeconds, until);
}

double sched::windowBound(const PipelineProblem &problem, double lower,
                          double upper, double seconds) {
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(std::max(0.0, seconds)));
  const PathLengths paths = computePathLengths(problem, PathModel::Canonical);
  WindowNarrowing narrowing(problem, paths);
  double refuted = lower, open = upper;
  while (open - refuted > 2e-10 * std::max(1.0, open) &&
         std::chrono::steady_clock::now() < deadline) {
    const double mid = refuted + (open - refuted) / 2;
    if (narrowing.run(mid, 0, deadline))
      open = mid;
    else
      refuted = mid;
  }
  return refuted;
}
