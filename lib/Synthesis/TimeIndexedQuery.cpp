//===- TimeIndexedQuery.cpp - a makespan query over whole time slots ------===//

#include "lib/Synthesis/TimeIndexedQuery.h"
#include "lib/Synthesis/Deadline.h"
#include "lib/Synthesis/LowerBound.h"

#include <z3++.h>

#include <algorithm>
#include <cassert>
#include <climits>
#include <cmath>
#include <limits>
#include <numeric>

using namespace sched;

std::optional<double> sched::commonTimeUnit(const PipelineProblem &problem) {
  std::vector<double> values;
  for (const ProblemOperation &op : problem.getOperations()) {
    if (!(op.duration > 0))
      return std::nullopt;
    values.push_back(op.duration);
  }
  for (const ProblemDependence &dep : problem.getDependences())
    if (dep.latency > 0)
      values.push_back(dep.latency);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  // The least q that makes every value whole is the least common
  // denominator; the unit is then the greatest common divisor over q.
  for (int64_t q = 1; q <= 1000; ++q) {
    int64_t divisor = 0;
    bool whole = true;
    for (double value : values) {
      const double scaled = value * double(q);
      const double nearest = std::round(scaled);
      if (nearest < 1 || nearest > 1e12 ||
          std::abs(scaled - nearest) > 1e-9 * std::max(1.0, scaled)) {
        whole = false;
        break;
      }
      divisor = std::gcd(divisor, static_cast<int64_t>(nearest));
    }
    if (whole)
      return double(divisor) / double(q);
  }
  return std::nullopt;
}

int64_t sched::horizonSlots(double makespan, double unit) {
  const double slots = makespan / unit;
  // The exact solver asks 1e-9 below an incumbent for a proof of
  // optimality, which is the slot before; the doubles' rounding is 1e-15.
  return static_cast<int64_t>(std::floor(slots + 1e-12 * std::max(1.0, slots)));
}

std::pair<int64_t, int64_t> sched::slotWindow(const PipelineProblem &problem,
                                              const TimeWindows &windows,
                                              double unit, int64_t horizon,
                                              uint32_t op) {
  auto tolerance = [](double slots) {
    return 1e-9 * std::max(1.0, std::abs(slots));
  };
  const int64_t length =
      std::llround(problem.getOperations()[op].duration / unit);
  const double head = windows.head[op] / unit;
  const double end = windows.end[op] / unit;
  const int64_t first = std::max<int64_t>(
      0, static_cast<int64_t>(std::ceil(head - tolerance(head))));
  const int64_t last =
      std::min<int64_t>(static_cast<int64_t>(std::floor(end + tolerance(end))),
                        horizon) -
      length;
  return {first, last};
}

std::optional<std::vector<RankLag>>
sched::computeRankLags(const PipelineProblem &problem, double unit,
                       int32_t rank, const Deadline &deadline) {
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  const std::vector<llvm::SmallVector<PathEdge, 4>> edges =
      computePrecedences(problem, PathModel::Canonical);
  const std::vector<uint32_t> order = topologicalOrder(edges);
  std::vector<size_t> position(ops.size());
  for (size_t i = 0; i < order.size(); ++i)
    position[order[i]] = i;
  std::vector<int64_t> length(ops.size());
  for (uint32_t op = 0; op < ops.size(); ++op)
    length[op] = std::llround(ops[op].duration / unit);
  constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> distance(ops.size());
  std::vector<RankLag> lags;
  for (uint32_t from = 0; from < ops.size(); ++from) {
    if (ops[from].rank != rank)
      continue;
    std::fill(distance.begin(), distance.end(), kNone);
    distance[from] = 0;
    for (size_t i = position[from]; i < order.size(); ++i) {
      const uint32_t op = order[i];
      if (distance[op] == kNone)
        continue;
      if (op != from && ops[op].rank == rank) {
        lags.push_back({from, op, distance[op]});
        continue; // Paths beyond it follow from its own.
      }
      for (const PathEdge &edge : edges[op])
        distance[edge.to] = std::max<int64_t>(
            distance[edge.to],
            distance[op] + length[op] + std::llround(edge.latency / unit));
    }
    if (deadline.passed())
      return std::nullopt;
  }
  return lags;
}

const std::vector<RankLag> *RankLagCache::lagsOf(int32_t rank,
                                                 const Deadline &deadline) {
  std::optional<std::vector<RankLag>> &mine = lags[rank];
  if (!mine)
    mine = computeRankLags(problem, unit, rank, deadline);
  return mine ? &*mine : nullptr;
}

namespace {

/// A literal of the encoding: a constant, or a slot Boolean (negated or
/// not).
struct Literal {
  enum class Kind { False, True, Variable } kind = Kind::False;
  size_t variable = 0;
  bool negated = false;

  static Literal constant(bool value) {
    return {value ? Kind::True : Kind::False, 0, false};
  }
  Literal operator!() const {
    if (kind != Kind::Variable)
      return constant(kind == Kind::False);
    return {kind, variable, !negated};
  }
};

/// The slots of the operations and their "started by slot k" Booleans.
class SlotEncoding {
public:
  SlotEncoding(const PipelineProblem &problem, z3::context &context)
      : problem(problem), context(context), variables(context) {}

  /// Lays out the slots within `windows` under a horizon of `horizon`
  /// slots; false when a window holds no slot (no schedule fits).
  bool layOut(const TimeWindows &windows, double unit, int64_t horizon,
              int32_t onlyRank) {
    llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
    length.resize(ops.size());
    first.resize(ops.size());
    last.resize(ops.size());
    offset.resize(ops.size());
    size_t count = 0;
    for (uint32_t op = 0; op < ops.size(); ++op) {
      length[op] = std::llround(ops[op].duration / unit);
      std::tie(first[op], last[op]) =
          slotWindow(problem, windows, unit, horizon, op);
      if (first[op] > last[op])
        return false;
      offset[op] = count;
      // Another rank's operation of a one-rank relaxation has no slots.
      if (onlyRank >= 0 && ops[op].rank != onlyRank) {
        last[op] = first[op];
        continue;
      }
      count += static_cast<size_t>(last[op] - first[op]);
    }
    numVariables = count;
    return true;
  }

  size_t getNumVariables() const { return numVariables; }

  /// False when `deadline` passed before every variable was made.
  bool createVariables(const Deadline &deadline) {
    for (size_t v = 0; v < numVariables; ++v) {
      if (v % 4096 == 4095 && deadline.passed())
        return false;
      variables.push_back(
          context.bool_const(("y" + std::to_string(v)).c_str()));
    }
    return true;
  }

  /// "`op` started at slot `k` or before".
  Literal started(uint32_t op, int64_t k) const {
    if (k < first[op])
      return Literal::constant(false);
    if (k >= last[op])
      return Literal::constant(true);
    return {Literal::Kind::Variable,
            offset[op] + static_cast<size_t>(k - first[op]), false};
  }

  z3::expr expr(const Literal &l) const {
    if (l.kind != Literal::Kind::Variable)
      return context.bool_val(l.kind == Literal::Kind::True);
    return l.negated ? !variables[l.variable] : variables[l.variable];
  }

  /// The slot `op` starts on in `model`.
  int64_t startIn(const z3::model &model, uint32_t op) const {
    for (int64_t k = first[op]; k < last[op]; ++k)
      if (model.eval(expr(started(op, k)), true).is_true())
        return k;
    return last[op];
  }

  std::vector<int64_t> length, first, last;

private:
  const PipelineProblem &problem;
  z3::context &context;
  z3::expr_vector variables;
  std::vector<size_t> offset;
  size_t numVariables = 0;
};

} // namespace

TimeIndexedAnswer sched::askTimeIndexed(const PipelineProblem &problem,
                                        const TimeWindows &windows, double unit,
                                        double makespan, double seconds,
                                        size_t maxVariables, int32_t onlyRank,
                                        RankLagCache *lagCache) {
  using Kind = TimeIndexedAnswer::Kind;
  const Deadline deadline(seconds);
  TimeIndexedAnswer answer;
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  const int64_t horizon = horizonSlots(makespan, unit);
  // Every schedule is no shorter than some canonical active one, which
  // starts (and so ends) its operations on slots: refuting `horizon`
  // slots refutes every makespan below the next slot.
  answer.provedBound = double(horizon + 1) * unit;
  // Building a large encoding takes seconds of its own: the deadline is
  // asked between its parts, so a query with no time left builds nothing.
  auto late = [&]() {
    if (!deadline.passed())
      return false;
    answer.reason = "timeout";
    return true;
  };
  if (late())
    return answer;
  try {
    z3::context context;
    SlotEncoding slotsOf(problem, context);
    if (!slotsOf.layOut(windows, unit, horizon, onlyRank)) {
      answer.kind = Kind::Unsat;
      return answer;
    }
    answer.variables = slotsOf.getNumVariables();
    if (answer.variables > maxVariables) {
      answer.reason = "too large";
      return answer;
    }
    if (!slotsOf.createVariables(deadline)) {
      answer.reason = "timeout";
      return answer;
    }
    z3::solver solver(context, "QF_FD");
    size_t added = 0;
    bool refuted = false;
    // Adds the clause `literals`; an empty one refutes the query.
    auto clause = [&](std::initializer_list<Literal> literals) {
      z3::expr_vector disjuncts(context);
      for (const Literal &l : literals) {
        if (l.kind == Literal::Kind::True)
          return;
        if (l.kind == Literal::Kind::Variable)
          disjuncts.push_back(slotsOf.expr(l));
      }
      if (disjuncts.empty()) {
        refuted = true;
        return;
      }
      solver.add(z3::mk_or(disjuncts));
      ++added;
    };
    auto outOfTime = [&]() {
      return added % 4096 == 4095 && deadline.passed();
    };
    // Started by k, started by k + 1.
    for (uint32_t op = 0; op < ops.size(); ++op) {
      for (int64_t k = slotsOf.first[op]; k + 1 < slotsOf.last[op]; ++k)
        clause({!slotsOf.started(op, k), slotsOf.started(op, k + 1)});
      if (late())
        return answer;
    }
    // `to` starts `latency` slots after `from` ends: started by k implies
    // `from` started by k - latency - its length (k past the last slot of
    // `to` asks nothing more than k at it).
    auto precedes = [&](uint32_t from, uint32_t to, int64_t latency) {
      for (int64_t k = slotsOf.first[to]; k <= slotsOf.last[to]; ++k)
        clause({!slotsOf.started(to, k),
                slotsOf.started(from, k - latency - slotsOf.length[from])});
    };
    // The canonical model's precedences: the dependences, each kind of a
    // stage in microbatch order, and the round trips memory forces
    // (LowerBound.h); every canonical schedule obeys them.
    if (onlyRank < 0) {
      const std::vector<llvm::SmallVector<PathEdge, 4>> edges =
          computePrecedences(problem, PathModel::Canonical);
      for (uint32_t from = 0; from < ops.size() && !refuted; ++from) {
        for (const PathEdge &edge : edges[from])
          precedes(from, edge.to, std::llround(edge.latency / unit));
        if (outOfTime()) {
          answer.reason = "timeout";
          return answer;
        }
      }
    } else {
      // The relaxation keeps, between two operations of the rank, the
      // longest path of precedences through the others: the other
      // operations, free of their ranks, only relay it.
      std::optional<RankLagCache> own;
      if (!lagCache)
        lagCache = &own.emplace(problem, unit);
      assert(lagCache->getUnit() == unit && "lags of another unit");
      const std::vector<RankLag> *lags = lagCache->lagsOf(onlyRank, deadline);
      if (!lags) {
        answer.reason = "timeout";
        return answer;
      }
      for (const RankLag &lag : *lags) {
        if (refuted)
          break;
        precedes(lag.from, lag.to, lag.slots - slotsOf.length[lag.from]);
      }
    }
    if (refuted) {
      answer.kind = Kind::Unsat;
      return answer;
    }
    std::vector<std::vector<uint32_t>> onRank(problem.getNumRanks());
    for (uint32_t op = 0; op < ops.size(); ++op)
      onRank[ops[op].rank].push_back(op);
    for (int32_t r = 0; r < problem.getNumRanks(); ++r) {
      if (onlyRank >= 0 && r != onlyRank)
        continue;
      // One operation at a time: at most one runs in each slot. `running`
      // is forced on where the operation runs (it may be on elsewhere,
      // which only asks more).
      std::vector<z3::expr_vector> running;
      std::vector<int64_t> forcedOn;
      int64_t end = 0;
      for (uint32_t op : onRank[r])
        end = std::max(end, slotsOf.last[op] + slotsOf.length[op]);
      for (int64_t k = 0; k < end; ++k)
        running.emplace_back(context);
      forcedOn.assign(end, 0);
      for (uint32_t op : onRank[r])
        for (int64_t k = slotsOf.first[op];
             k < slotsOf.last[op] + slotsOf.length[op]; ++k) {
          const Literal by = slotsOf.started(op, k);
          const Literal before = slotsOf.started(op, k - slotsOf.length[op]);
          if (by.kind == Literal::Kind::False ||
              before.kind == Literal::Kind::True)
            continue;
          if (by.kind == Literal::Kind::True &&
              before.kind == Literal::Kind::False) {
            ++forcedOn[k];
            continue;
          }
          z3::expr on = context.bool_const(
              ("r" + std::to_string(op) + "_" + std::to_string(k)).c_str());
          solver.add(!slotsOf.expr(by) || slotsOf.expr(before) || on);
          running[k].push_back(on);
        }
      for (int64_t k = 0; k < end; ++k) {
        if (forcedOn[k] > 1) {
          answer.kind = Kind::Unsat;
          return answer;
        }
        if (forcedOn[k] == 1) {
          for (unsigned i = 0; i < running[k].size(); ++i)
            solver.add(!running[k][i]);
          continue;
        }
        if (running[k].size() > 1)
          solver.add(z3::atmost(running[k], 1));
      }
      // Implied, for the solver's counting: the operations that ended by
      // slot k ran one at a time before it, and those not started by k
      // run one at a time after it.
      for (int64_t k = 1; k < horizon; ++k) {
        if (late())
          return answer;
        z3::expr_vector before(context), after(context);
        std::vector<int> beforeLength, afterLength;
        int64_t beforeFixed = 0, afterFixed = 0, beforeTotal = 0,
                afterTotal = 0;
        for (uint32_t op : onRank[r]) {
          const int64_t len = slotsOf.length[op];
          const Literal ended = slotsOf.started(op, k - len);
          if (ended.kind == Literal::Kind::True)
            beforeFixed += len;
          else if (ended.kind == Literal::Kind::Variable) {
            before.push_back(slotsOf.expr(ended));
            beforeLength.push_back(static_cast<int>(len));
            beforeTotal += len;
          }
          const Literal waits = !slotsOf.started(op, k - 1);
          if (waits.kind == Literal::Kind::True)
            afterFixed += len;
          else if (waits.kind == Literal::Kind::Variable) {
            after.push_back(slotsOf.expr(waits));
            afterLength.push_back(static_cast<int>(len));
            afterTotal += len;
          }
        }
        if (beforeFixed > k || afterFixed > horizon - k) {
          answer.kind = Kind::Unsat;
          return answer;
        }
        if (beforeTotal + beforeFixed > k)
          solver.add(z3::pble(before, beforeLength.data(),
                              static_cast<int>(k - beforeFixed)));
        if (afterTotal + afterFixed > horizon - k)
          solver.add(z3::pble(after, afterLength.data(),
                              static_cast<int>(horizon - k - afterFixed)));
      }
      if (deadline.passed()) {
        answer.reason = "timeout";
        return answer;
      }
    }
    // The memory of a limited rank after every slot where a forward may
    // start: its parameters and what the operations started by then
    // allocated and freed, within the limit (the largest value along the
    // rank's order is right after a forward; the other kinds free).
    for (int32_t r = 0; r < problem.getNumRanks(); ++r) {
      const std::optional<int64_t> limit = problem.getMemoryLimit(r);
      if (!limit || (onlyRank >= 0 && r != onlyRank))
        continue;
      int64_t divisor = 0, allocated = 0, freed = 0;
      int64_t forwardFrom = INT64_MAX, forwardTo = -1;
      for (uint32_t op : onRank[r]) {
        divisor = std::gcd(divisor, std::abs(ops[op].memoryDelta));
        allocated += std::max<int64_t>(0, ops[op].memoryDelta);
        freed += std::max<int64_t>(0, -ops[op].memoryDelta);
        if (ops[op].kind == ActionKind::Forward) {
          forwardFrom = std::min(forwardFrom, slotsOf.first[op]);
          forwardTo = std::max(forwardTo, slotsOf.last[op]);
        }
      }
      const int64_t room = *limit - problem.getStaticMemory(r);
      if (allocated <= room || divisor == 0)
        continue;
      if (room < 0 ||
          (allocated + freed) / divisor + room / divisor > INT_MAX) {
        answer.reason = "too large";
        return answer;
      }
      const int64_t units = room / divisor;
      for (int64_t k = forwardFrom; k <= forwardTo; ++k) {
        if (late())
          return answer;
        // -c y is c (not y) - c: the sum with nonnegative coefficients.
        int64_t bound = units;
        z3::expr_vector terms(context);
        std::vector<int> coefficients;
        int64_t total = 0;
        for (uint32_t op : onRank[r]) {
          const int64_t c = ops[op].memoryDelta / divisor;
          const Literal by = slotsOf.started(op, k);
          if (c == 0 || by.kind == Literal::Kind::False)
            continue;
          if (by.kind == Literal::Kind::True) {
            bound -= c;
            continue;
          }
          terms.push_back(slotsOf.expr(c > 0 ? by : !by));
          coefficients.push_back(static_cast<int>(std::abs(c)));
          total += std::abs(c);
          if (c < 0)
            bound += -c;
        }
        if (bound < 0) {
          answer.kind = Kind::Unsat;
          return answer;
        }
        if (total > bound)
          solver.add(
              z3::pble(terms, coefficients.data(), static_cast<int>(bound)));
      }
    }
    if (deadline.passed()) {
      answer.reason = "timeout";
      return answer;
    }
    z3::params params(context);
    params.set("timeout", static_cast<unsigned>(
                              std::max(1.0, deadline.secondsLeft() * 1000)));
    solver.set(params);
    const z3::check_result result = solver.check();
    if (result == z3::unsat) {
      answer.kind = Kind::Unsat;
      return answer;
    }
    if (result == z3::unknown) {
      answer.reason = solver.reason_unknown();
      return answer;
    }
    if (onlyRank >= 0) {
      // The relaxation's model is no schedule of the problem.
      answer.kind = Kind::Sat;
      return answer;
    }
    z3::model model = solver.get_model();
    std::vector<int64_t> start(ops.size());
    for (uint32_t op = 0; op < ops.size(); ++op)
      start[op] = slotsOf.startIn(model, op);
    std::vector<std::vector<uint32_t>> sequence = onRank;
    for (std::vector<uint32_t> &order : sequence)
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return start[a] < start[b];
      });
    llvm::Expected<ProblemSolution> timed =
        problem.timeOrder(std::move(sequence));
    if (!timed) {
      answer.reason = llvm::toString(timed.takeError());
      return answer;
    }
    answer.found = std::move(*timed);
    answer.kind = Kind::Sat;
  } catch (const z3::exception &error) {
    answer.kind = Kind::Unknown;
    answer.reason = std::string("z3: ") + error.msg();
  }
  return answer;
}
