//===- ListScheduler.cpp - the fast solver of a pipeline problem ----------===//

#include "lib/Synthesis/ListScheduler.h"
#include "llvm/ADT/SmallVector.h"
#include "lib/Synthesis/LowerBound.h"
#include "lib/Generate/Strategy.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <limits>

using namespace sched;

namespace {

/// The state of one list-scheduling run.
class ListRun {
public:
  ListRun(const PipelineProblem &problem, const ListPolicy &policy,
          const PathLengths &paths);
  llvm::Expected<ProblemSolution> run();

private:
  /// The operation rank `r` would run next, and when; none when nothing
  /// of it can run.
  struct Choice {
    uint32_t op = 0;
    double start = std::numeric_limits<double>::infinity();
    int priority = 0;
    bool valid = false;
  };
  Choice choose(int32_t r) const;
  /// Whether forward `op` may run now: the memory and in-flight rules.
  /// Sets `memoryBound` when memory (not the cap) holds it back.
  bool admits(uint32_t op, bool &memoryBound) const;
  void place(uint32_t op, double start);
  int priorityOf(const ProblemOperation &op, bool forwardHeld) const;

  const PipelineProblem &problem;
  const ListPolicy &policy;
  const PathLengths &paths;
  llvm::ArrayRef<ProblemOperation> ops;
  int32_t numRanks, numMicrobatches;
  std::vector<uint32_t> unscheduledPreds;
  std::vector<double> readyAt;
  std::vector<double> clock;
  std::vector<int64_t> live, pendingForward, need;
  /// Next microbatch per (kind slot, stage): each kind of a stage runs its
  /// microbatches in order, which loses no schedule (microbatches are
  /// alike: relabelling them in the order a stage runs them keeps every
  /// dependence and every rank's memory).
  std::vector<std::vector<int32_t>> next;
  int32_t entered = 0, firstStageBackwards = 0;
  ProblemSolution solution;
};

} // namespace

ListRun::ListRun(const PipelineProblem &problem, const ListPolicy &policy,
                 const PathLengths &paths)
    : problem(problem), policy(policy), paths(paths),
      ops(problem.getOperations()), numRanks(problem.getNumRanks()),
      numMicrobatches(problem.getNumMicrobatches()) {
  unscheduledPreds.assign(ops.size(), 0);
  for (uint32_t op = 0; op < ops.size(); ++op)
    unscheduledPreds[op] = problem.getPredecessors(op).size();
  readyAt.assign(ops.size(), 0);
  clock.assign(numRanks, 0);
  live.assign(numRanks, 0);
  pendingForward.assign(numRanks, 0);
  need.assign(numRanks, 0);
  for (int32_t r = 0; r < numRanks; ++r) {
    live[r] = problem.getStaticMemory(r);
    need[r] = problem.getSmallestFeasibleLimit(r) - live[r];
  }
  next.assign(3, std::vector<int32_t>(problem.getNumStages(), 0));
  solution.order.assign(numRanks, {});
  solution.start.assign(ops.size(), 0);
}

static int slotOf(ActionKind kind) {
  if (kind == ActionKind::Forward)
    return 0;
  return kind == ActionKind::BackwardWeight ? 2 : 1;
}

bool ListRun::admits(uint32_t op, bool &memoryBound) const {
  const ProblemOperation &o = ops[op];
  memoryBound = false;
  const bool enters = o.stage == 0;
  if (enters && policy.inFlightCap > 0 &&
      entered - firstStageBackwards >= policy.inFlightCap)
    return false;
  if (policy.reserve) {
    // A microbatch in flight has its forwards' memory reserved.
    if (!enters)
      return true;
    for (int32_t q = 0; q < numRanks; ++q) {
      std::optional<int64_t> limit = problem.getMemoryLimit(q);
      if (limit && live[q] + pendingForward[q] + need[q] > *limit) {
        memoryBound = true;
        return false;
      }
    }
    return true;
  }
  std::optional<int64_t> limit = problem.getMemoryLimit(o.rank);
  if (limit && live[o.rank] + o.memoryDelta > *limit) {
    memoryBound = true;
    return false;
  }
  return true;
}

int ListRun::priorityOf(const ProblemOperation &op, bool forwardHeld) const {
  switch (op.kind) {
  case ActionKind::BackwardWeight:
    if (policy.weightGrad == WeightGradPolicy::Eager ||
        (policy.weightGrad == WeightGradPolicy::MemoryFirst && forwardHeld))
      return 0;
    return 3;
  case ActionKind::Forward:
    return 2;
  default:
    return 1;
  }
}

ListRun::Choice ListRun::choose(int32_t r) const {
  struct Candidate {
    uint32_t op;
    double start;
  };
  llvm::SmallVector<Candidate, 8> candidates;
  bool forwardHeld = false;
  for (int32_t s : problem.getStagesOf(r))
    for (ActionKind kind : {ActionKind::Forward, ActionKind::Backward,
                            ActionKind::BackwardInput,
                            ActionKind::BackwardWeight}) {
      if (kind != ActionKind::Forward &&
          !llvm::is_contained(problem.getBackwardKinds(), kind))
        continue;
      const int32_t mb = next[slotOf(kind)][s];
      if (mb >= numMicrobatches)
        continue;
      const uint32_t op = problem.getOperation(kind, s, mb);
      if (unscheduledPreds[op] != 0)
        continue;
      if (kind == ActionKind::Forward) {
        bool memoryBound = false;
        if (!admits(op, memoryBound)) {
          forwardHeld |= memoryBound;
          continue;
        }
      }
      candidates.push_back({op, std::max(clock[r], readyAt[op])});
    }
  Choice best;
  for (const Candidate &c : candidates)
    best.start = std::min(best.start, c.start);
  // Among the operations that can start first, the most urgent.
  const double slack = 1e-12 * std::max(1.0, best.start);
  for (const Candidate &c : candidates) {
    if (c.start > best.start + slack)
      continue;
    const int priority = priorityOf(ops[c.op], forwardHeld);
    auto better = [&]() {
      if (!best.valid || priority != best.priority)
        return !best.valid || priority < best.priority;
      const ProblemOperation &a = ops[c.op], &b = ops[best.op];
      const bool byTail =
          a.kind != ActionKind::Forward || policy.forwardByTail;
      if (byTail && paths.tail[c.op] != paths.tail[best.op])
        return paths.tail[c.op] > paths.tail[best.op];
      return a.microbatch < b.microbatch;
    };
    if (better()) {
      best.op = c.op;
      best.priority = priority;
      best.valid = true;
    }
  }
  return best;
}

void ListRun::place(uint32_t op, double start) {
  const ProblemOperation &o = ops[op];
  const double end = start + o.duration;
  solution.start[op] = start;
  solution.order[o.rank].push_back(op);
  clock[o.rank] = end;
  ++next[slotOf(o.kind)][o.stage];
  if (o.kind == ActionKind::Forward) {
    if (o.stage == 0) {
      ++entered;
      if (policy.reserve)
        for (int32_t q = 0; q < numRanks; ++q)
          pendingForward[q] += need[q];
    }
    if (policy.reserve)
      pendingForward[o.rank] -= o.memoryDelta;
  } else if (o.stage == 0 && o.kind != ActionKind::BackwardWeight) {
    ++firstStageBackwards;
  }
  live[o.rank] += o.memoryDelta;
  for (uint32_t dep : problem.getSuccessors(op)) {
    const ProblemDependence &d = problem.getDependences()[dep];
    readyAt[d.to] = std::max(readyAt[d.to], end + d.latency);
    --unscheduledPreds[d.to];
  }
}

llvm::Expected<ProblemSolution> ListRun::run() {
  for (size_t placed = 0; placed < ops.size(); ++placed) {
    Choice best;
    for (int32_t r = 0; r < numRanks; ++r) {
      Choice c = choose(r);
      if (c.valid && (!best.valid || c.start < best.start ||
                      (c.start == best.start && c.priority < best.priority)))
        best = c;
    }
    if (!best.valid)
      return llvm::createStringError(
          "the list schedule is stuck: every rank's memory holds microbatches "
          "that wait for each other");
    place(best.op, best.start);
  }
  return std::move(solution);
}

llvm::Expected<ProblemSolution>
sched::runListPolicy(const PipelineProblem &problem, const ListPolicy &policy) {
  const PathLengths paths = computePathLengths(problem);
  return ListRun(problem, policy, paths).run();
}

//===----------------------------------------------------------------------===//
// Local search
//===----------------------------------------------------------------------===//

/// Whether every rank of `solution` stays within its limit.
static bool withinMemory(const PipelineProblem &problem,
                         const ProblemSolution &solution) {
  const std::vector<int64_t> peaks = problem.peakMemory(solution);
  for (int32_t r = 0; r < problem.getNumRanks(); ++r) {
    std::optional<int64_t> limit = problem.getMemoryLimit(r);
    if (limit && peaks[r] > *limit)
      return false;
  }
  return true;
}

/// The operations of a critical chain of `solution` that wait for the
/// operation before them on their rank, with that operation's position:
/// swapping such a pair is the move that can shorten the chain.
static std::vector<std::pair<int32_t, size_t>>
rankBoundCriticalPairs(const PipelineProblem &problem,
                       const ProblemSolution &solution) {
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  std::vector<size_t> position(ops.size());
  for (const std::vector<uint32_t> &order : solution.order)
    for (size_t i = 0; i < order.size(); ++i)
      position[order[i]] = i;
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

std::vector<std::pair<std::string, ProblemSolution>>
sched::strategySeeds(const PipelineProblem &problem) {
  const SynthesisSpec &spec = problem.getSpec();
  const PipelineShape shape = spec.shape();
  std::vector<std::pair<std::string, ProblemSolution>> seeds;
  for (Strategy strategy : allStrategies()) {
    if (llvm::Error error = checkPipelineShape(strategy, shape)) {
      llvm::consumeError(std::move(error));
      continue;
    }
    // The V strategies place their stages in a V whatever the shape says.
    const bool vStrategy = strategy == Strategy::ZBV ||
                           strategy == Strategy::VHalf ||
                           strategy == Strategy::VMin ||
                           strategy == Strategy::DualPipeV;
    if (vStrategy != (spec.placement == StagePlacement::V) && spec.vpp > 1)
      continue;
    llvm::Expected<Schedule> schedule = generateSchedule(strategy, shape);
    if (!schedule) {
      llvm::consumeError(schedule.takeError());
      continue;
    }
    bool usable = schedule->replicas == 1;
    for (RankProgram &rank : schedule->ranks) {
      std::vector<Action> actions;
      for (const Action &a : rank.actions) {
        usable &= a.bundle == 0;
        const bool split = a.kind == ActionKind::BackwardInput ||
                           a.kind == ActionKind::BackwardWeight;
        usable &= !split || spec.splitBackward;
        if (a.kind == ActionKind::Backward && spec.splitBackward) {
          actions.push_back(
              Action::compute(ActionKind::BackwardInput, a.stage, a.microbatch));
          actions.push_back(Action::compute(ActionKind::BackwardWeight,
                                            a.stage, a.microbatch));
          continue;
        }
        actions.push_back(a);
      }
      rank.actions = std::move(actions);
    }
    if (!usable)
      continue;
    llvm::Expected<std::vector<std::vector<uint32_t>>> order =
        problem.orderOf(*schedule);
    if (!order) {
      llvm::consumeError(order.takeError());
      continue;
    }
    llvm::Expected<ProblemSolution> timed = problem.timeOrder(std::move(*order));
    if (!timed) {
      llvm::consumeError(timed.takeError());
      continue;
    }
    if (llvm::Error error = problem.verify(*timed)) {
      llvm::consumeError(std::move(error));
      continue;
    }
    seeds.push_back({strategyName(strategy).str(), std::move(*timed)});
  }
  return seeds;
}

llvm::Expected<ListSchedulerResult>
sched::solveWithListScheduling(const PipelineProblem &problem,
                               const ListSchedulerOptions &options) {
  if (llvm::Error error = problem.checkMemory())
    return std::move(error);
  const auto begin = std::chrono::steady_clock::now();
  auto elapsed = [&]() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         begin)
        .count();
  };
  const PathLengths paths = computePathLengths(problem);
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  const int32_t pp = problem.getNumRanks();
  const int32_t m = problem.getNumMicrobatches();
  std::vector<int32_t> caps = {0};
  for (int32_t cap : {pp, 2 * pp - 1, 2 * pp})
    if (cap < m && !llvm::is_contained(caps, cap))
      caps.push_back(cap);
  ListSchedulerResult result;
  bool found = false;
  for (bool reserve : {true, false})
    for (WeightGradPolicy w :
         {WeightGradPolicy::Fill, WeightGradPolicy::MemoryFirst,
          WeightGradPolicy::Eager})
      for (int32_t cap : caps)
        for (bool byTail : {true, false}) {
          if (w != WeightGradPolicy::Fill && !problem.getSpec().splitBackward)
            continue;
          ListPolicy policy;
          policy.reserve = reserve;
          policy.weightGrad = w;
          policy.inFlightCap = cap;
          policy.forwardByTail = byTail;
          ++result.policies;
          llvm::Expected<ProblemSolution> run =
              ListRun(problem, policy, paths).run();
          if (!run) {
            llvm::consumeError(run.takeError());
            continue;
          }
          const double makespan = run->makespan(ops);
          if (!found || makespan < result.makespan) {
            result.solution = std::move(*run);
            result.makespan = makespan;
            result.origin = "list";
            found = true;
          }
        }
  for (auto &[name, seed] : strategySeeds(problem)) {
    const double makespan = seed.makespan(ops);
    if (!found || makespan < result.makespan) {
      result.solution = std::move(seed);
      result.makespan = makespan;
      result.origin = name;
      found = true;
    }
  }
  if (!found)
    return llvm::createStringError("no list-scheduling policy found a "
                                   "schedule");
  // Local search: swap a critical operation with the one before it on its
  // rank while that shortens the step and keeps memory within the limits.
  const double slack = 1e-9 * std::max(1.0, result.makespan);
  bool improved = true;
  while (improved && elapsed() < options.searchSeconds &&
         result.makespan > options.target + slack) {
    improved = false;
    for (auto [r, i] : rankBoundCriticalPairs(problem, result.solution)) {
      if (elapsed() >= options.searchSeconds)
        break;
      std::vector<std::vector<uint32_t>> order = result.solution.order;
      std::swap(order[r][i], order[r][i + 1]);
      llvm::Expected<ProblemSolution> timed =
          problem.timeOrder(std::move(order));
      if (!timed) {
        llvm::consumeError(timed.takeError());
        continue;
      }
      const double makespan = timed->makespan(ops);
      if (makespan < result.makespan - slack &&
          withinMemory(problem, *timed)) {
        result.solution = std::move(*timed);
        result.makespan = makespan;
        ++result.improvingMoves;
        improved = true;
        break;
      }
    }
  }
  return result;
}
