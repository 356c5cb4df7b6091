//===- ExactSolver.cpp - the exact solver of a pipeline problem -----------===//
//
// Each query "a schedule no longer than T" is a fresh encoding: the windows
// [head, T - tail] of the operations decide the order of most pairs before
// Z3 sees them (a pair that fits neither way proves the query unsat at
// once), and only the pairs left open get an order literal. Every operation
// kind of a stage runs its microbatches in order (no schedule is lost:
// relabelling microbatches in the order a stage runs them keeps every
// dependence and every rank's memory), which removes the symmetric
// solutions. The windows come from floating-point path lengths and are
// widened by a relative 1e-9, so they never cut off a schedule.
//
//===----------------------------------------------------------------------===//

#include "lib/Synthesis/ExactSolver.h"
#include "lib/Synthesis/Deadline.h"
#include "lib/Synthesis/LowerBound.h"
#include "lib/Synthesis/RankRelaxationSearch.h"
#include "lib/Synthesis/SlotNeighbourhood.h"
#include "lib/Synthesis/TimeIndexedQuery.h"
#include "lib/Synthesis/WindowBound.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <z3++.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>

using namespace sched;

namespace {

/// The exact decimal a double was written as ("1.2"), for Z3's reals.
std::string exactDecimal(double value) {
  char buffer[400];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value,
                                 std::chars_format::fixed);
  if (ec != std::errc())
    return "0";
  return std::string(buffer, end);
}

/// Which (kind, stage) reaches which, within one microbatch; a pair of
/// operations is ordered by the dependences when the first's microbatch is
/// no later and its (kind, stage) reaches the second's.
class StageReach {
public:
  explicit StageReach(const PipelineProblem &problem)
      : numStages(problem.getNumStages()) {
    const size_t n = 3 * size_t(numStages);
    reach.assign(n * n, false);
    llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
    std::vector<std::vector<size_t>> next(n);
    for (const ProblemDependence &dep : problem.getDependences())
      if (ops[dep.from].microbatch == 0)
        next[node(ops[dep.from])].push_back(node(ops[dep.to]));
    for (size_t from = 0; from < n; ++from) {
      std::vector<size_t> stack = {from};
      while (!stack.empty()) {
        const size_t at = stack.back();
        stack.pop_back();
        if (reach[from * n + at])
          continue;
        reach[from * n + at] = true;
        for (size_t to : next[at])
          stack.push_back(to);
      }
    }
  }

  /// Whether every schedule with each kind's microbatches in order runs
  /// `a` before `b`.
  bool precedes(const ProblemOperation &a, const ProblemOperation &b) const {
    const size_t n = 3 * size_t(numStages);
    return a.microbatch <= b.microbatch && reach[node(a) * n + node(b)] &&
           !(a.microbatch == b.microbatch && node(a) == node(b));
  }

private:
  size_t node(const ProblemOperation &op) const {
    const size_t slot = op.kind == ActionKind::Forward          ? 0
                        : op.kind == ActionKind::BackwardWeight ? 2
                                                                : 1;
    return slot * numStages + op.stage;
  }
  int32_t numStages;
  std::vector<bool> reach;
};

enum class QueryAnswer { Sat, Unsat, Unknown };

/// The shares of a query's time that narrowing its windows, and shaving
/// them within that, may take.
constexpr double kNarrowingShare = 0.5;
constexpr double kShavingShare = 0.25;
/// The share of a query's time left after the windows that its one-rank
/// relaxations may take before the whole query.
constexpr double kRankRelaxationShare = 0.75;
/// The share of that which searching the relaxations
/// (RankRelaxationSearch.h) may take before Z3 is asked them.
constexpr double kRankSearchShare = 0.5;

/// The share of a query's time that searching every rank's relaxation on
/// unshaved windows may take before the neighbourhood search has run.
constexpr double kQuickRelaxationShare = 0.2;

/// A gap (relative to the incumbent) above which the search bisects
/// between the proved bound and the target rather than asking the target.
constexpr double kBisectAbove = 0.02;

/// The share of the time left that the search near the incumbent
/// (SlotNeighbourhood.h) may take once a bisecting query ran out of time.
constexpr double kNeighbourhoodShare = 0.9;

/// One query: is there a schedule with makespan <= T?
class MakespanQuery {
public:
  MakespanQuery(const PipelineProblem &problem, const PathLengths &paths,
                const StageReach &reach, std::optional<double> unit)
      : problem(problem), paths(paths), reach(reach), unit(unit),
        ops(problem.getOperations()) {
    if (unit)
      lagCache.emplace(problem, *unit);
  }

  /// Asks Z3 within `seconds`, building the encoding included (a large one
  /// takes seconds of its own); on Sat, `found` is the model's schedule, on
  /// Unsat `proved` the least makespan left (`bound`, or the next slot
  /// after it when the time-indexed encoding answered). With `relax`, the
  /// one-rank relaxations of the time-indexed query go first, each rank's
  /// search guided by `incumbent`'s order of the rank; with
  /// `yieldWhenRelaxed` too, a query whose every relaxation is satisfied
  /// (searched) answers Unknown, "relaxations hold", before the whole
  /// query: nothing short of it refutes the bound there, and a schedule
  /// that short is likelier near the incumbent (SlotNeighbourhood.h).
  QueryAnswer ask(double bound, double seconds, size_t maxLiterals,
                  size_t maxSlotVariables, bool narrow, bool relax,
                  bool yieldWhenRelaxed, const ProblemSolution &incumbent,
                  ProblemSolution &found, size_t &literals, double &proved,
                  std::string &reason);

private:
  /// Order literal of the open pair (a, b), a < b on one rank: true when
  /// a runs first.
  struct Pair {
    uint32_t a, b;
    int32_t literal;
  };
  const PipelineProblem &problem;
  const PathLengths &paths;
  const StageReach &reach;
  /// The problem's time unit (commonTimeUnit), when it has one.
  std::optional<double> unit;
  llvm::ArrayRef<ProblemOperation> ops;
  /// The one-rank relaxations' lags, computed once per rank for all the
  /// queries (where the problem has a unit).
  std::optional<RankLagCache> lagCache;
  /// The rank whose relaxation refuted the last refuted query, if any:
  /// what binds one makespan usually binds the next.
  std::optional<int32_t> lastRefuter;
};

} // namespace

QueryAnswer MakespanQuery::ask(double bound, double seconds, size_t maxLiterals,
                               size_t maxSlotVariables, bool narrow, bool relax,
                               bool yieldWhenRelaxed,
                               const ProblemSolution &incumbent,
                               ProblemSolution &found, size_t &literals,
                               double &proved, std::string &reason) {
  const Deadline deadline(seconds);
  const double slack = 1e-9 * std::max(1.0, bound);
  // A rank's relaxation refuted the query: what it proves, and where to
  // look first next time.
  auto refutedBy = [&](int32_t r, const TimeIndexedAnswer &one) {
    lastRefuter = r;
    proved = std::max(bound, one.provedBound);
    return QueryAnswer::Unsat;
  };
  // Before the neighbourhood search, each rank's relaxation is searched
  // first on windows narrowed but not shaved (shaving a satisfiable
  // query's windows takes a quarter of its time and refutes nothing): a
  // refuted one answers, and where every one holds the query yields.
  if (unit && relax && yieldWhenRelaxed) {
    const Deadline quickUntil(kQuickRelaxationShare * seconds);
    const std::optional<TimeWindows> unshaved =
        narrowWindows(problem, paths, bound,
                      narrow ? kNarrowingShare * quickUntil.secondsLeft() : 0);
    if (!unshaved)
      return QueryAnswer::Unsat;
    bool everyOneHolds = true;
    for (int32_t r = 0; r < problem.getNumRanks(); ++r) {
      const double mine = quickUntil.secondsLeft() /
                          static_cast<double>(problem.getNumRanks() - r);
      if (mine <= 0) {
        everyOneHolds = false;
        break;
      }
      const TimeIndexedAnswer one = searchRankRelaxation(
          problem, *unshaved, *unit, bound, mine, r, {}, &*lagCache);
      if (one.kind == TimeIndexedAnswer::Kind::Unsat)
        return refutedBy(r, one);
      everyOneHolds &= one.kind == TimeIndexedAnswer::Kind::Sat;
    }
    // Only where the whole query fits its slot Booleans: where it does
    // not, a query near the incumbent is as hopeless (24,576 operations
    // at P = 32), and the query goes on as before.
    size_t slots = 0;
    const int64_t horizon = horizonSlots(bound, *unit);
    for (uint32_t op = 0; op < ops.size() && everyOneHolds; ++op) {
      auto [first, last] = slotWindow(problem, *unshaved, *unit, horizon, op);
      slots += static_cast<size_t>(std::max<int64_t>(0, last - first + 1));
    }
    if (everyOneHolds && slots <= maxSlotVariables) {
      reason = "relaxations hold";
      return QueryAnswer::Unknown;
    }
  }
  // The windows under the bound, narrowed by propagation (WindowBound.h);
  // an empty one refutes the bound.
  const std::optional<TimeWindows> windows = narrowWindows(
      problem, paths, bound, narrow ? kNarrowingShare * seconds : 0,
      narrow ? kShavingShare * seconds : 0);
  if (!windows)
    return QueryAnswer::Unsat;
  // Latest start of each operation within the bound, widened.
  auto latestStart = [&](uint32_t op) {
    return windows->end[op] - ops[op].duration + slack;
  };
  auto canPrecede = [&](uint32_t a, uint32_t b) {
    return windows->head[a] + ops[a].duration <= latestStart(b);
  };
  proved = bound;
  for (uint32_t op = 0; op < ops.size(); ++op)
    if (windows->head[op] > latestStart(op))
      return QueryAnswer::Unsat;

  // Whole time slots, where the problem has a unit and the windows leave
  // few enough of them (TimeIndexedQuery.h); otherwise order literals.
  // One rank at a time first: each rank's relaxation (TimeIndexedQuery.h)
  // is a one-machine problem, small where the whole query is not, and
  // where one rank's memory and the round trips through the others bind
  // it refutes what the windows do not.
  if (unit && relax) {
    std::vector<std::pair<double, int32_t>> byRoom;
    for (int32_t r = 0; r < problem.getNumRanks(); ++r)
      byRoom.push_back({0.0, r});
    for (uint32_t op = 0; op < ops.size(); ++op)
      byRoom[ops[op].rank].first +=
          windows->end[op] - windows->head[op] - ops[op].duration;
    std::sort(byRoom.begin(), byRoom.end());
    const Deadline relaxUntil(kRankRelaxationShare * deadline.secondsLeft());
    // Searched first (RankRelaxationSearch.h): the rank that refuted the
    // last query with two thirds of the search's share; then every rank
    // briefly, guided by the incumbent's order, which satisfies most at
    // once (a satisfied relaxation proves nothing, and unguided the search
    // can be slow to find its solution); then the ranks left split the
    // rest, unguided (the guide slows a refutation down: rank 7 at P = 8
    // under V-Half's memory, 3 s unguided, 29 s guided).
    const Deadline searchUntil(kRankSearchShare * relaxUntil.secondsLeft());
    std::vector<int32_t> open;
    for (auto [room, r] : byRoom)
      open.push_back(r);
    if (lastRefuter) {
      const TimeIndexedAnswer one = searchRankRelaxation(
          problem, *windows, *unit, bound, searchUntil.secondsLeft() * 2 / 3,
          *lastRefuter, {}, &*lagCache);
      if (one.kind == TimeIndexedAnswer::Kind::Unsat)
        return refutedBy(*lastRefuter, one);
      if (one.kind == TimeIndexedAnswer::Kind::Sat)
        llvm::erase(open, *lastRefuter);
    }
    for (bool probe : {true, false}) {
      const double slice = searchUntil.secondsLeft() / (8.0 * open.size() + 1);
      for (int32_t r : std::vector<int32_t>(open)) {
        const double mine =
            probe ? slice
                  : searchUntil.secondsLeft() /
                        static_cast<double>(open.end() - llvm::find(open, r));
        if (mine <= 0)
          break;
        const TimeIndexedAnswer one = searchRankRelaxation(
            problem, *windows, *unit, bound, mine, r,
            probe ? llvm::ArrayRef<uint32_t>(incumbent.order[r])
                  : llvm::ArrayRef<uint32_t>(),
            &*lagCache);
        if (one.kind == TimeIndexedAnswer::Kind::Unsat)
          return refutedBy(r, one);
        if (one.kind == TimeIndexedAnswer::Kind::Sat)
          llvm::erase(open, r);
      }
    }
    // Then the ranks the search left open asked of Z3 (a satisfied one is
    // satisfied for Z3 too), those whose windows leave the least room
    // first, the first with two thirds of the share.
    llvm::erase_if(byRoom, [&](const std::pair<double, int32_t> &entry) {
      return !llvm::is_contained(open, entry.second);
    });
    for (size_t i = 0; i < byRoom.size(); ++i) {
      const double left = relaxUntil.secondsLeft();
      if (left <= 0)
        break;
      const double mine =
          i == 0 ? left * 2 / 3 : left / static_cast<double>(byRoom.size() - i);
      const int32_t r = byRoom[i].second;
      const TimeIndexedAnswer one =
          askTimeIndexed(problem, *windows, *unit, bound, mine,
                         maxSlotVariables, r, &*lagCache);
      if (one.kind == TimeIndexedAnswer::Kind::Unsat)
        return refutedBy(r, one);
    }
  }
  if (unit) {
    TimeIndexedAnswer slots =
        askTimeIndexed(problem, *windows, *unit, bound, deadline.secondsLeft(),
                       maxSlotVariables);
    if (slots.kind == TimeIndexedAnswer::Kind::Unsat) {
      proved = std::max(bound, slots.provedBound);
      return QueryAnswer::Unsat;
    }
    if (slots.kind == TimeIndexedAnswer::Kind::Sat) {
      found = std::move(slots.found);
      return QueryAnswer::Sat;
    }
    if (slots.reason != "too large") {
      reason = slots.reason;
      return QueryAnswer::Unknown;
    }
  }

  // Decide what the windows decide; literals for the rest.
  std::vector<std::vector<uint32_t>> onRank(problem.getNumRanks());
  for (uint32_t op = 0; op < ops.size(); ++op)
    onRank[ops[op].rank].push_back(op);
  std::vector<std::pair<uint32_t, uint32_t>> forced;
  std::vector<Pair> open;
  for (const std::vector<uint32_t> &rankOps : onRank)
    for (size_t i = 0; i < rankOps.size(); ++i)
      for (size_t j = i + 1; j < rankOps.size(); ++j) {
        const uint32_t a = rankOps[i], b = rankOps[j];
        if (reach.precedes(ops[a], ops[b]) || reach.precedes(ops[b], ops[a]))
          continue;
        const bool ab = canPrecede(a, b), ba = canPrecede(b, a);
        if (!ab && !ba)
          return QueryAnswer::Unsat;
        if (ab && ba) {
          open.push_back({a, b, static_cast<int32_t>(open.size())});
          continue;
        }
        forced.push_back(ab ? std::pair{a, b} : std::pair{b, a});
      }
  literals = open.size();
  if (open.size() > maxLiterals) {
    reason = "too large";
    return QueryAnswer::Unknown;
  }

  z3::context context;
  // With every limit as clauses the query is difference logic over the
  // reals, which Z3 decides by its difference-logic solver, several times
  // faster than by the simplex (docs/synthesis.md).
  std::vector<std::optional<std::vector<MemoryClause>>> clauses(
      problem.getNumRanks());
  bool differenceLogic = true;
  for (int32_t r = 0; r < problem.getNumRanks(); ++r) {
    clauses[r] = oneStageMemoryClauses(problem, r);
    differenceLogic &= clauses[r].has_value();
  }
  z3::solver solver(context, differenceLogic ? "QF_RDL" : "QF_LRA");
  auto real = [&](double value) {
    return context.real_val(exactDecimal(value).c_str());
  };
  z3::expr_vector start(context);
  for (uint32_t op = 0; op < ops.size(); ++op)
    start.push_back(context.real_const(("s" + std::to_string(op)).c_str()));
  auto end = [&](uint32_t op) { return start[op] + real(ops[op].duration); };
  const z3::expr limit = real(bound);
  for (uint32_t op = 0; op < ops.size(); ++op) {
    solver.add(start[op] >= real(std::max(0.0, windows->head[op] - slack)));
    solver.add(end(op) <= limit);
    solver.add(end(op) <= real(windows->end[op] + slack));
  }
  for (const ProblemDependence &dep : problem.getDependences())
    solver.add(start[dep.to] >= end(dep.from) + real(dep.latency));
  // Each kind of a stage runs its microbatches in order.
  const int32_t m = problem.getNumMicrobatches();
  for (uint32_t op = 0; op < ops.size(); ++op)
    if (ops[op].microbatch + 1 < m)
      solver.add(start[problem.getOperation(ops[op].kind, ops[op].stage,
                                            ops[op].microbatch + 1)] >=
                 end(op));
  for (auto [a, b] : forced)
    solver.add(start[b] >= end(a));
  z3::expr_vector order(context);
  for (const Pair &pair : open) {
    if (pair.literal % 1024 == 1023 && deadline.passed()) {
      reason = "timeout";
      return QueryAnswer::Unknown;
    }
    z3::expr x = context.bool_const(
        ("o" + std::to_string(pair.a) + "_" + std::to_string(pair.b)).c_str());
    order.push_back(x);
    solver.add(z3::implies(x, start[pair.b] >= end(pair.a)));
    solver.add(z3::implies(!x, start[pair.a] >= end(pair.b)));
  }

  // Whether `other` runs before `f` on their rank: a constant when the
  // dependences, the microbatch order or the windows decide it, else the
  // pair's order literal (built only when asked: the sums below ask for
  // every pair of a rank).
  llvm::DenseMap<std::pair<uint32_t, uint32_t>, int32_t> literalOf;
  for (const Pair &pair : open)
    literalOf[{pair.a, pair.b}] = pair.literal;
  auto decided = [&](uint32_t other, uint32_t f) -> std::optional<bool> {
    if (literalOf.count({std::min(other, f), std::max(other, f)}))
      return std::nullopt;
    return reach.precedes(ops[other], ops[f]) ||
           (ops[other].kind == ops[f].kind &&
            ops[other].stage == ops[f].stage &&
            ops[other].microbatch < ops[f].microbatch) ||
           (!reach.precedes(ops[f], ops[other]) && !canPrecede(f, other));
  };
  auto runsBefore = [&](uint32_t other, uint32_t f) -> z3::expr {
    if (std::optional<bool> known = decided(other, f))
      return context.bool_val(*known);
    const int32_t literal =
        literalOf.lookup({std::min(other, f), std::max(other, f)});
    return other < f ? order[literal] : !order[literal];
  };
  // A rank that holds one stage: its limit as clauses over the order
  // (oneStageMemoryClauses), so the query stays in difference logic, which
  // Z3 decides much faster than sums.
  for (int32_t r = 0; r < problem.getNumRanks(); ++r) {
    if (!clauses[r])
      continue;
    for (const MemoryClause &c : *clauses[r]) {
      z3::expr clause = runsBefore(c.input, c.forward);
      if (clause.is_true())
        continue;
      if (c.weight) {
        z3::expr weight = runsBefore(*c.weight, c.forward);
        if (weight.is_true())
          continue;
        if (!weight.is_false())
          clause = clause.is_false() ? weight : clause || weight;
      }
      if (clause.is_false())
        return QueryAnswer::Unsat;
      solver.add(clause);
    }
  }
  for (int32_t r = 0; r < problem.getNumRanks(); ++r) {
    std::optional<int64_t> cap = problem.getMemoryLimit(r);
    if (!cap)
      continue;
    int64_t all = problem.getStaticMemory(r);
    for (uint32_t op : onRank[r])
      all += std::max<int64_t>(0, ops[op].memoryDelta);
    if (all <= *cap || clauses[r])
      continue;
    // Memory after each forward: every operation that runs before it,
    // decided or by its literal.
    for (uint32_t f : onRank[r]) {
      if (ops[f].kind != ActionKind::Forward)
        continue;
      int64_t fixed = problem.getStaticMemory(r) + ops[f].memoryDelta;
      z3::expr_vector terms(context);
      for (uint32_t other : onRank[r]) {
        if (other == f)
          continue;
        if (std::optional<bool> known = decided(other, f)) {
          if (*known)
            fixed += ops[other].memoryDelta;
          continue;
        }
        terms.push_back(z3::ite(
            runsBefore(other, f),
            context.real_val(std::to_string(ops[other].memoryDelta).c_str()),
            context.real_val(0)));
      }
      if (terms.empty()) {
        if (fixed > *cap)
          return QueryAnswer::Unsat;
        continue;
      }
      solver.add(z3::sum(terms) <=
                 context.real_val(std::to_string(*cap - fixed).c_str()));
    }
  }

  if (deadline.passed()) {
    reason = "timeout";
    return QueryAnswer::Unknown;
  }
  z3::params params(context);
  params.set("timeout", static_cast<unsigned>(
                            std::max(1.0, deadline.secondsLeft() * 1000)));
  solver.set(params);
  const z3::check_result answer = solver.check();
  if (answer == z3::unsat)
    return QueryAnswer::Unsat;
  if (answer == z3::unknown) {
    reason = solver.reason_unknown();
    return QueryAnswer::Unknown;
  }
  z3::model model = solver.get_model();
  std::vector<double> times(ops.size());
  for (uint32_t op = 0; op < ops.size(); ++op)
    times[op] = model.eval(start[op], true).as_double();
  // Ties (zero durations) by the order literals, then by the dependences.
  llvm::DenseMap<std::pair<uint32_t, uint32_t>, bool> firstOf;
  for (const Pair &pair : open)
    firstOf[{pair.a, pair.b}] = model.eval(order[pair.literal], true).is_true();
  std::vector<std::vector<uint32_t>> sequence(problem.getNumRanks());
  for (int32_t r = 0; r < problem.getNumRanks(); ++r) {
    sequence[r] = onRank[r];
    std::stable_sort(
        sequence[r].begin(), sequence[r].end(), [&](uint32_t a, uint32_t b) {
          if (times[a] != times[b])
            return times[a] < times[b];
          if (auto it = firstOf.find({std::min(a, b), std::max(a, b)});
              it != firstOf.end())
            return it->second == (a < b);
          return reach.precedes(ops[a], ops[b]);
        });
  }
  llvm::Expected<ProblemSolution> timed =
      problem.timeOrder(std::move(sequence));
  if (!timed) {
    reason = llvm::toString(timed.takeError());
    return QueryAnswer::Unknown;
  }
  found = std::move(*timed);
  return QueryAnswer::Sat;
}

ExactSolverResult sched::solveExactly(const PipelineProblem &problem,
                                      const ProblemSolution &incumbent,
                                      double lowerBound,
                                      const ExactSolverOptions &options) {
  const auto begin = std::chrono::steady_clock::now();
  auto elapsed = [&]() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         begin)
        .count();
  };
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  ExactSolverResult result;
  result.solution = incumbent;
  result.makespan = incumbent.makespan(ops);
  result.lowerBound = std::min(lowerBound, result.makespan);
  // The canonical model's windows: the search is over canonical schedules.
  const PathLengths paths = computePathLengths(problem, PathModel::Canonical);
  const StageReach reach(problem);
  const std::optional<double> unit =
      options.timeIndexed ? commonTimeUnit(problem) : std::nullopt;
  MakespanQuery query(problem, paths, reach, unit);
  bool searchedNearby = false;
  auto gap = [&]() { return relativeGap(result.makespan, result.lowerBound); };

  // Doubles time the schedules and Z3 reasons on the decimals they print
  // as, so a makespan within a relative 1e-9 of the incumbent is the same.
  const double rounding = 1e-9;
  // The least makespan a bisection query ran out of time on.
  double hardest = std::numeric_limits<double>::infinity();
  // The least makespan whose every one-rank relaxation held.
  double relaxedAt = std::numeric_limits<double>::infinity();
  // Shorter schedules near the incumbent, once: when the bound side is
  // stuck (a bisecting query ran out of time) or nothing but the whole
  // query can refute the bound (every relaxation holds).
  auto searchNearby = [&]() {
    searchedNearby = true;
    SlotNeighbourhoodResult nearby = improveInSlotBands(
        problem, paths, *unit, result.solution, result.lowerBound,
        kNeighbourhoodShare * (options.timeLimitSeconds - elapsed()),
        options.neighbourhoodSlots, options.maxSlotVariables,
        options.targetGap);
    result.queries += nearby.queries;
    if (nearby.improvements > 0) {
      result.solution = std::move(nearby.solution);
      result.makespan = nearby.makespan;
      result.improvements += nearby.improvements;
    }
  };
  try {
    while (true) {
      // The gap a refuted bound leaves is the target, up to rounding.
      if (gap() <= options.targetGap + 1e-12) {
        result.optimal = gap() <= 0;
        result.stopReason = result.optimal ? "optimal" : "gap reached";
        break;
      }
      const double left = options.timeLimitSeconds - elapsed();
      if (left <= 0) {
        result.stopReason = "time limit";
        break;
      }
      // Certify the target gap, or, for 0, that nothing is shorter.
      const bool exact = options.targetGap <= 0;
      const double goal =
          result.makespan * (1 - (exact ? rounding : options.targetGap));
      // A wide gap is bisected: a makespan between the proved bound and
      // the goal is a query whose windows are tighter (often refuted at
      // once) and whose answer either way narrows the gap; one that runs
      // out of its share of the time bisects towards the bound. A narrow
      // gap asks the goal itself, with all the time left.
      //
      // Where every relaxation held at a makespan (relaxedAt) and the search
      // near the incumbent has not run, the queries bisect below it down to
      // a slot first: the relaxations refute what they can there at once
      // (the bound the neighbourhood then stops at), and the search near
      // the incumbent follows.
      const bool canSearchNearby =
          unit && options.neighbourhoodSlots > 0 && !searchedNearby;
      const bool raising = canSearchNearby && relaxedAt <= goal;
      const double upper = std::min({goal, hardest, relaxedAt});
      if (raising && upper - result.lowerBound <= *unit) {
        searchNearby();
        continue;
      }
      const bool bisect =
          raising || upper - result.lowerBound > kBisectAbove * result.makespan;
      const double bound =
          bisect ? result.lowerBound + (upper - result.lowerBound) / 2 : goal;
      const double slice =
          bisect ? std::max(left / 3, std::min(left, 1.0)) : left;
      ProblemSolution found;
      std::string reason;
      double proved = bound;
      ++result.queries;
      const QueryAnswer answer = query.ask(
          bound, slice, options.maxOrderLiterals, options.maxSlotVariables,
          options.narrowWindows, options.rankRelaxations, canSearchNearby,
          result.solution, found, result.orderLiterals, proved, reason);
      if (answer == QueryAnswer::Unknown && reason == "relaxations hold") {
        relaxedAt = bound;
        continue;
      }
      if (answer == QueryAnswer::Unknown) {
        const bool outOfTime = reason == "timeout" || reason == "canceled";
        if (bisect && outOfTime) {
          hardest = bound;
          // The bound side is stuck: try the schedule's, once.
          if (canSearchNearby)
            searchNearby();
          continue;
        }
        result.stopReason = outOfTime ? "time limit" : reason;
        break;
      }
      if (answer == QueryAnswer::Unsat) {
        result.lowerBound = exact && bound == goal
                                ? result.makespan
                                : std::max(result.lowerBound,
                                           std::min(proved, result.makespan));
        continue;
      }
      if (llvm::Error error = problem.verify(found)) {
        result.stopReason =
            "z3's model does not verify: " + llvm::toString(std::move(error));
        break;
      }
      const double makespan = found.makespan(ops);
      if (makespan >= result.makespan * (1 - rounding)) {
        result.stopReason = "z3's model is no shorter when timed";
        break;
      }
      result.solution = std::move(found);
      result.makespan = makespan;
      ++result.improvements;
    }
  } catch (const z3::exception &error) {
    result.stopReason = std::string("z3: ") + error.msg();
  }
  result.seconds = elapsed();
  return result;
}
