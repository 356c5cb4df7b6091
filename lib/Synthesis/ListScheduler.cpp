//===- ListScheduler.cpp - the fast solver of a pipeline problem ----------===//

#include "lib/Synthesis/ListScheduler.h"
#include "llvm/ADT/SmallVector.h"
#include "lib/Synthesis/LocalSearch.h"
#include "lib/Synthesis/LowerBound.h"
#include "lib/Generate/Strategy.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <tuple>

using namespace sched;

namespace {

/// How far a seeded policy scales each operation's path ahead (a share).
constexpr double kUrgencyJitter = 0.5;
/// The share of the search's time the restarts may take, and the most
/// operations they schedule in all (a budget in work, not time: on a
/// large problem fewer restarts, the same ones whatever the load).
constexpr double kRestartShare = 0.5;
constexpr int64_t kRestartOperations = 2500000;

/// The state of one list-scheduling run.
class ListRun {
public:
  ListRun(const PipelineProblem &problem, const ListPolicy &policy,
          const PathLengths &paths);
  /// The schedule; none when an operation would end at or after `cutoff`
  /// (a schedule that long cannot beat one already found).
  llvm::Expected<std::optional<ProblemSolution>>
  run(double cutoff = std::numeric_limits<double>::infinity());

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
  /// Places `op`; true when that opened or closed the pipeline's entry to
  /// a new microbatch under reservation (the entry rank must choose again).
  bool place(uint32_t op, double start);
  /// Whether rank `q` cannot reserve one more microbatch's activations.
  bool reservationFull(int32_t q) const {
    return limits[q] && live[q] + pendingForward[q] + need[q] > *limits[q];
  }
  int priorityOf(const ProblemOperation &op, bool forwardHeld) const;

  const PipelineProblem &problem;
  const ListPolicy &policy;
  const PathLengths &paths;
  llvm::ArrayRef<ProblemOperation> ops;
  /// The path ahead of each operation, randomly scaled under a seed.
  std::vector<double> urgency;
  int32_t numRanks, numMicrobatches;
  std::vector<uint32_t> unscheduledPreds;
  std::vector<double> readyAt;
  std::vector<double> clock;
  std::vector<int64_t> live, pendingForward, need;
  std::vector<std::optional<int64_t>> limits;
  /// The kinds a rank's stages run, in the order choose() considers them.
  llvm::SmallVector<ActionKind, 3> kinds;
  /// Ranks where reservationFull holds (kept up to date by place()).
  int32_t fullRanks = 0;
  /// Next microbatch per (kind slot, stage): each kind of a stage runs its
  /// microbatches in order, which loses no schedule (microbatches are
  /// alike: relabelling them in the order a stage runs them keeps every
  /// dependence and every rank's memory).
  std::vector<std::vector<int32_t>> next;
  /// The stage whose forwards and backwards the in-flight cap counts: the
  /// first, or the one above a global-batch aux head (every microbatch
  /// passes the head's forward before any leaves it, so the cap counts the
  /// stages above it); -1: none (a head on the last stage).
  int32_t capStage = 0;
  int32_t entered = 0, firstStageBackwards = 0;
  ProblemSolution solution;
};

} // namespace

ListRun::ListRun(const PipelineProblem &problem, const ListPolicy &policy,
                 const PathLengths &paths)
    : problem(problem), policy(policy), paths(paths),
      ops(problem.getOperations()), numRanks(problem.getNumRanks()),
      numMicrobatches(problem.getNumMicrobatches()), urgency(paths.tail) {
  if (policy.seed != 0) {
    std::mt19937 random(policy.seed);
    std::uniform_real_distribution<double> scale(1 - kUrgencyJitter,
                                                 1 + kUrgencyJitter);
    for (double &u : urgency)
      u *= scale(random);
  }
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
    // A microbatch reserves its activations; the transfers' buffers are
    // not the problem's memory (TransferBuffers.h fits them).
    need[r] = problem.getMicrobatchActivations(r);
  }
  for (int32_t r = 0; r < numRanks; ++r) {
    limits.push_back(problem.getMemoryLimit(r));
    fullRanks += reservationFull(r);
  }
  kinds.push_back(ActionKind::Forward);
  for (ActionKind kind : {ActionKind::Backward, ActionKind::BackwardInput,
                          ActionKind::BackwardWeight})
    if (llvm::is_contained(problem.getBackwardKinds(), kind))
      kinds.push_back(kind);
  next.assign(3, std::vector<int32_t>(problem.getNumStages(), 0));
  if (const int32_t head = problem.getSpec().globalBatchHead; head >= 0)
    capStage = head + 1 < problem.getNumStages() ? head + 1 : -1;
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
  if (o.stage == capStage && policy.inFlightCap > 0 &&
      entered - firstStageBackwards >= policy.inFlightCap)
    return false;
  if (policy.reserve) {
    // A microbatch in flight has its forwards' memory reserved.
    if (!enters)
      return true;
    if (fullRanks > 0) {
      memoryBound = true;
      return false;
    }
    return true;
  }
  const std::optional<int64_t> &limit = limits[o.rank];
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
    for (ActionKind kind : kinds) {
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
  // The operations that compete: those that can start first, or, waiting
  // for an urgent one, those that can start before the first would end.
  double horizon = std::numeric_limits<double>::infinity();
  for (const Candidate &c : candidates) {
    best.start = std::min(best.start, c.start);
    horizon = std::min(horizon, c.start + ops[c.op].duration);
  }
  const double slack = 1e-12 * std::max(1.0, best.start);
  if (!policy.waitForUrgent)
    horizon = best.start + slack;
  else
    horizon -= slack;
  // Among them, the most urgent.
  best.start = std::numeric_limits<double>::infinity();
  for (const Candidate &c : candidates) {
    if (c.start > horizon)
      continue;
    int priority = priorityOf(ops[c.op], forwardHeld);
    // A restart ranks forwards and input gradients by urgency alone.
    if (policy.seed != 0 && priority == 2)
      priority = 1;
    auto better = [&]() {
      if (!best.valid || priority != best.priority)
        return !best.valid || priority < best.priority;
      const ProblemOperation &a = ops[c.op], &b = ops[best.op];
      const bool byTail =
          a.kind != ActionKind::Forward || policy.forwardByTail;
      if (byTail && urgency[c.op] != urgency[best.op])
        return urgency[c.op] > urgency[best.op];
      return a.microbatch < b.microbatch;
    };
    if (better()) {
      best.op = c.op;
      best.start = c.start;
      best.priority = priority;
      best.valid = true;
    }
  }
  return best;
}

bool ListRun::place(uint32_t op, double start) {
  const ProblemOperation &o = ops[op];
  const double end = start + o.duration;
  const bool entryOpen = fullRanks == 0;
  // Ranks whose reservation state place() may change count again.
  auto changing = [&](int32_t q, auto &&change) {
    if (!policy.reserve) {
      change();
      return;
    }
    fullRanks -= reservationFull(q);
    change();
    fullRanks += reservationFull(q);
  };
  solution.start[op] = start;
  solution.order[o.rank].push_back(op);
  clock[o.rank] = end;
  ++next[slotOf(o.kind)][o.stage];
  if (o.kind == ActionKind::Forward) {
    if (o.stage == capStage)
      ++entered;
    if (o.stage == 0) {
      if (policy.reserve)
        for (int32_t q = 0; q < numRanks; ++q)
          changing(q, [&] { pendingForward[q] += need[q]; });
    }
    if (policy.reserve)
      changing(o.rank, [&] { pendingForward[o.rank] -= o.memoryDelta; });
  } else if (o.stage == capStage && o.kind != ActionKind::BackwardWeight) {
    ++firstStageBackwards;
  }
  changing(o.rank, [&] { live[o.rank] += o.memoryDelta; });
  for (const ProblemOutEdge &d : problem.getOutgoing(op)) {
    readyAt[d.to] = std::max(readyAt[d.to], end + d.latency);
    --unscheduledPreds[d.to];
  }
  return policy.reserve && entryOpen != (fullRanks == 0);
}

llvm::Expected<std::optional<ProblemSolution>> ListRun::run(double cutoff) {
  // Each rank's choice is kept until what it depends on changes: its own
  // clock, memory and operations, the inputs its operations wait for, and
  // for the rank that admits microbatches (it holds stage 0) whether every
  // rank has room to reserve one more microbatch, which only its forwards
  // of stage 0 consult (its in-flight count changes with its own stage 0).
  // The ranks' choices sit in a tournament tree over the ranks, whose root
  // is the earliest start, then the most urgent, then the lowest rank: a
  // rank that chooses again updates its leaf and the path above it.
  std::vector<Choice> choices(numRanks);
  int32_t leaves = 1;
  while (leaves < numRanks)
    leaves *= 2;
  // Per node, the best rank below it (-1: none has a choice).
  std::vector<int32_t> tree(2 * size_t(leaves), -1);
  auto before = [&](int32_t a, int32_t b) {
    if (a < 0 || b < 0)
      return b < 0 && a >= 0;
    return std::tie(choices[a].start, choices[a].priority, a) <
           std::tie(choices[b].start, choices[b].priority, b);
  };
  auto refresh = [&](int32_t r) {
    choices[r] = choose(r);
    size_t node = size_t(leaves) + r;
    tree[node] = choices[r].valid ? r : -1;
    for (node /= 2; node >= 1; node /= 2) {
      const int32_t left = tree[2 * node], right = tree[2 * node + 1];
      tree[node] = before(right, left) ? right : left;
    }
  };
  for (int32_t r = 0; r < numRanks; ++r)
    refresh(r);
  const int32_t entryRank = problem.getRankOf(0);
  std::vector<int32_t> stale;
  std::vector<bool> isStale(numRanks, false);
  auto markStale = [&](int32_t r) {
    if (!isStale[r]) {
      isStale[r] = true;
      stale.push_back(r);
    }
  };
  for (size_t placed = 0; placed < ops.size(); ++placed) {
    if (tree[1] < 0)
      return llvm::createStringError(
          "the list schedule is stuck: every rank's memory holds microbatches "
          "that wait for each other");
    const Choice best = choices[tree[1]];
    if (best.start + ops[best.op].duration >= cutoff)
      return std::nullopt;
    const bool entryChanged = place(best.op, best.start);
    const ProblemOperation &o = ops[best.op];
    markStale(o.rank);
    // The entry rank's choice depends on other ranks only through whether
    // a microbatch may enter.
    if (entryChanged)
      markStale(entryRank);
    for (const ProblemOutEdge &d : problem.getOutgoing(best.op))
      markStale(d.rank);
    for (int32_t r : stale) {
      isStale[r] = false;
      refresh(r);
    }
    stale.clear();
  }
  return std::optional<ProblemSolution>(std::move(solution));
}

llvm::Expected<ProblemSolution>
sched::runListPolicy(const PipelineProblem &problem, const ListPolicy &policy) {
  const PathLengths paths = computePathLengths(problem);
  llvm::Expected<std::optional<ProblemSolution>> run =
      ListRun(problem, policy, paths).run();
  if (!run)
    return run.takeError();
  return std::move(**run);
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
  std::vector<ListPolicy> policies;
  for (bool reserve : {true, false})
    for (WeightGradPolicy w :
         {WeightGradPolicy::Fill, WeightGradPolicy::MemoryFirst,
          WeightGradPolicy::Eager})
      for (int32_t cap : caps)
        for (bool byTail : {true, false})
          for (bool wait : {false, true}) {
            if (w != WeightGradPolicy::Fill && !problem.getSpec().splitBackward)
              continue;
            ListPolicy policy;
            policy.reserve = reserve;
            policy.weightGrad = w;
            policy.inFlightCap = cap;
            policy.forwardByTail = byTail;
            policy.waitForUrgent = wait;
            policies.push_back(policy);
          }
  ListSchedulerResult result;
  bool found = false;
  auto runPolicy = [&](const ListPolicy &policy) {
    ++result.policies;
    // A run that reaches the best makespan so far cannot replace it: it
    // stops there.
    llvm::Expected<std::optional<ProblemSolution>> run =
        ListRun(problem, policy, paths)
            .run(found ? result.makespan
                       : std::numeric_limits<double>::infinity());
    if (!run) {
      llvm::consumeError(run.takeError());
      return;
    }
    if (!*run)
      return;
    const double makespan = (*run)->makespan(ops);
    if (!found || makespan < result.makespan) {
      result.solution = std::move(**run);
      result.makespan = makespan;
      result.origin = "list";
      found = true;
    }
  };
  for (const ListPolicy &policy : policies)
    runPolicy(policy);
  // Restarts: each policy in turn, its priorities randomly scaled.
  for (int32_t seed = 1;
       found && seed <= options.restarts &&
       int64_t(seed) * int64_t(ops.size()) <= kRestartOperations &&
       elapsed() < kRestartShare * options.searchSeconds &&
       result.makespan > options.target + 1e-9 * result.makespan;
       ++seed) {
    ListPolicy policy = policies[(seed - 1) % policies.size()];
    policy.seed = static_cast<uint32_t>(seed);
    runPolicy(policy);
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
  LocalSearchLimits limits;
  // A budget beyond a week is none (and keeps the time point in range).
  if (options.searchSeconds < 7 * 24 * 3600.0)
    limits.deadline =
        begin + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(
                        std::max(0.0, options.searchSeconds)));
  limits.maxMoves = options.maxMoves;
  limits.maxTrials = options.maxTrials;
  limits.maxWork = options.maxWork;
  limits.target = options.target;
  const LocalSearchStats stats =
      improveByLocalSearch(problem, result.solution, result.makespan, limits);
  result.trials = stats.trials;
  result.improvingMoves = stats.improvingMoves;
  result.searchWork = stats.work;
  return result;
}
