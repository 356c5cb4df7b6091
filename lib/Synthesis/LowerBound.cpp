//===- LowerBound.cpp - lower bounds on a pipeline problem's makespan -----===//

#include "lib/Synthesis/LowerBound.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

using namespace sched;

using Edge = PathEdge;

std::vector<llvm::SmallVector<PathEdge, 4>>
sched::computePrecedences(const PipelineProblem &problem, PathModel model) {
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  std::vector<llvm::SmallVector<Edge, 4>> out(ops.size());
  for (const ProblemDependence &dep : problem.getDependences())
    out[dep.from].push_back({dep.to, dep.latency});
  if (model == PathModel::Dependences)
    return out;
  const int32_t m = problem.getNumMicrobatches();
  for (uint32_t op = 0; op < ops.size(); ++op)
    if (ops[op].microbatch + 1 < m)
      out[op].push_back({problem.getOperation(ops[op].kind, ops[op].stage,
                                              ops[op].microbatch + 1),
                         0.0});
  const ActionKind backward = problem.getBackwardKinds().front();
  for (int32_t r = 0; r < problem.getNumRanks(); ++r) {
    const std::optional<int64_t> limit = problem.getMemoryLimit(r);
    if (!limit)
      continue;
    const int64_t room = *limit - problem.getStaticMemory(r);
    llvm::ArrayRef<int32_t> stages = problem.getStagesOf(r);
    auto activationOf = [&](int32_t s) {
      return ops[problem.getOperation(ActionKind::Forward, s, 0)].memoryDelta;
    };
    // While F(s, j) runs, every lower stage of the rank holds microbatch
    // j's activation (its forward came before, its backward comes after
    // this stage's): that much of the room is taken.
    int64_t below = 0;
    for (int32_t s : stages) {
      const int64_t activation = activationOf(s);
      const int64_t free = room - below;
      below += activation;
      if (activation <= 0 || free < activation)
        continue;
      const int64_t k = free / activation;
      if (k >= m)
        continue;
      ActionKind frees = backward;
      if (problem.getSpec().splitBackward) {
        const int64_t residue =
            -ops[problem.getOperation(ActionKind::BackwardWeight, s, 0)]
                 .memoryDelta;
        if (__int128(activation) + __int128(residue) * k > free)
          frees = ActionKind::BackwardWeight;
      }
      for (int32_t j = 0; j + k < m; ++j)
        out[problem.getOperation(frees, s, j)].push_back(
            {problem.getOperation(ActionKind::Forward, s,
                                  static_cast<int32_t>(j + k)),
             0.0});
    }
    // A lower stage's forwards wait for a higher one's: when F(t, j) runs,
    // each lower stage s of the rank holds microbatch j's activation and
    // every later one it has started (its backwards run in order, the j-th
    // after F(t, j)), so F(s, j + k) comes after F(t, j) once k + 1 of
    // stage s's activations, F(t, j)'s and those of the other stages below
    // t do not fit.
    for (size_t ti = 1; ti < stages.size(); ++ti) {
      const int32_t t = stages[ti];
      int64_t lower = 0;
      for (size_t si = 0; si < ti; ++si)
        lower += activationOf(stages[si]);
      for (size_t si = 0; si < ti; ++si) {
        const int32_t s = stages[si];
        const int64_t activation = activationOf(s);
        const int64_t free = room - activationOf(t) - (lower - activation);
        if (activation <= 0 || free < activation)
          continue;
        const int64_t k = free / activation;
        for (int32_t j = 0; j + k < m; ++j)
          out[problem.getOperation(ActionKind::Forward, t, j)].push_back(
              {problem.getOperation(ActionKind::Forward, s,
                                    static_cast<int32_t>(j + k)),
               0.0});
      }
    }
  }
  return out;
}

/// Microbatches up to which the canonical heads take the serial memory
/// bound (its cost grows as the cube of the microbatches per rank).
static constexpr int32_t kSerialHeadsMicrobatches = 64;

/// The least time by which one machine finishes the first `counts[k]`
/// operations of each chain `chains[k]` (operations of one stage and kind
/// in microbatch order, heads nondecreasing), each no earlier than its
/// head: the earliest-release order, optimal for one machine with release
/// times (1|r_j|C_max).
static double serialFinish(
    llvm::ArrayRef<llvm::ArrayRef<uint32_t>> chains,
    llvm::ArrayRef<int32_t> counts, llvm::ArrayRef<ProblemOperation> ops,
    const PathLengths &paths) {
  llvm::SmallVector<int32_t, 3> next(chains.size(), 0);
  double time = 0;
  while (true) {
    int best = -1;
    for (size_t k = 0; k < chains.size(); ++k)
      if (next[k] < counts[k] &&
          (best < 0 || paths.head[chains[k][next[k]]] <
                           paths.head[chains[best][next[best]]]))
        best = static_cast<int>(k);
    if (best < 0)
      return time;
    const uint32_t op = chains[best][next[best]++];
    time = std::max(time, paths.head[op]) + ops[op].duration;
  }
}

/// A bound on when forward `op` (stage s, microbatch n) can start, on a
/// rank that holds stage s alone under a memory limit, with a split
/// backward: before it the rank has run the n forwards before it and
/// enough input and weight gradients i and w (canonical order: I(0..i-1),
/// W(0..w-1)) that one more activation fits,
///   (n - i) a + (i - w) r + a <= room,  w <= i <= n,
/// a the activation, r the part W keeps; the least time one machine
/// finishes those, over every (i, w) that fits, bounds the start. Memory
/// and the rank's serial work bind together here where the canonical
/// path, which takes each alone, does not: with a round trip longer than
/// the memory's worth of work, the rank runs I, W and F in turn.
static double serialForwardHead(const PipelineProblem &problem, uint32_t op,
                                const PathLengths &paths) {
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  const ProblemOperation &f = ops[op];
  const std::optional<int64_t> limit = problem.getMemoryLimit(f.rank);
  if (!limit || problem.getStagesOf(f.rank).size() != 1 || f.microbatch == 0)
    return 0;
  const int32_t s = f.stage, n = f.microbatch;
  const __int128 room = *limit - problem.getStaticMemory(f.rank);
  const __int128 a = f.memoryDelta;
  const __int128 r =
      -ops[problem.getOperation(ActionKind::BackwardWeight, s, 0)].memoryDelta;
  if (a <= 0 || r < 0 || r > a || (n + 1) * a <= room)
    return 0;
  std::vector<uint32_t> forwards(n), inputs(n), weights(n);
  for (int32_t j = 0; j < n; ++j) {
    forwards[j] = problem.getOperation(ActionKind::Forward, s, j);
    inputs[j] = problem.getOperation(ActionKind::BackwardInput, s, j);
    weights[j] = problem.getOperation(ActionKind::BackwardWeight, s, j);
  }
  const llvm::ArrayRef<uint32_t> chains[] = {forwards, inputs, weights};
  double least = std::numeric_limits<double>::infinity();
  for (int32_t i = 0; i <= n; ++i) {
    // (n + 1) a - i (a - r) - w r <= room: the fewest weight gradients.
    const __int128 need = (n + 1) * a - i * (a - r) - room;
    int32_t w = 0;
    if (need > 0) {
      if (r == 0)
        continue;
      const __int128 fewest = (need + r - 1) / r;
      if (fewest > i)
        continue;
      w = static_cast<int32_t>(fewest);
    }
    const int32_t counts[] = {n, i, w};
    least = std::min(least, serialFinish(chains, counts, ops, paths));
  }
  return std::isinf(least) ? 0 : least;
}

/// Microbatches up to which the canonical heads take the serial memory
/// bound of a rank with two stages (its cost grows as the fifth power).
static constexpr int32_t kPairedHeadsMicrobatches = 32;

/// The serial memory bound of serialForwardHead on a rank that holds two
/// stages lo < hi (the V, an interleaved loop with vpp = 2), split
/// backward. In a canonical schedule, before forward F(x, n) of one of
/// them the rank has run prefixes of its six chains: fl forwards, il input
/// and wl weight gradients of lo, fh, ih, wh of hi, with
///   wl <= il, wh <= ih, il <= ih <= fh <= fl   (I(hi, j) -> I(lo, j),
///   F(lo, j) -> F(hi, j), each through the pipeline's other stages),
/// and fl = n (x = lo) or fl >= n + 1, fh = n (x = hi); one more
/// activation of x fits:
///   al (fl - il) + rl (il - wl) + ah (fh - ih) + rh (ih - wh)
///     + a_x <= room    (fl, fh counted before F(x, n)).
/// Fewer forwards only lower the memory and the work, so the least finish
/// takes fh = ih (x = lo: ih >= il; one more F and I of hi adds rh >= 0)
/// or fl = n + 1 (x = hi); then every (il, ih, wl) with the fewest wh that
/// fits is tried, and the least time one machine finishes those prefixes
/// from their heads (serialFinish, optimal for one machine with release
/// times, and no less for more operations) bounds F(x, n)'s start.
static double pairedForwardHead(const PipelineProblem &problem, uint32_t op,
                                const PathLengths &paths) {
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  const ProblemOperation &f = ops[op];
  const std::optional<int64_t> limit = problem.getMemoryLimit(f.rank);
  llvm::ArrayRef<int32_t> stages = problem.getStagesOf(f.rank);
  if (!limit || stages.size() != 2)
    return 0;
  const int32_t lo = stages[0], hi = stages[1], n = f.microbatch;
  const bool upper = f.stage == hi;
  const int32_t m = problem.getNumMicrobatches();
  const __int128 room = *limit - problem.getStaticMemory(f.rank);
  auto activation = [&](int32_t s) -> __int128 {
    return ops[problem.getOperation(ActionKind::Forward, s, 0)].memoryDelta;
  };
  auto residue = [&](int32_t s) -> __int128 {
    return -ops[problem.getOperation(ActionKind::BackwardWeight, s, 0)]
                .memoryDelta;
  };
  const __int128 al = activation(lo), ah = activation(hi);
  const __int128 rl = residue(lo), rh = residue(hi);
  if (al <= 0 || ah <= 0 || rl < 0 || rh < 0 || rl > al || rh > ah)
    return 0;
  // Memory never binds when every microbatch of both stages fits.
  if ((al + ah) * m <= room)
    return 0;
  const int32_t fl = upper ? std::min(n + 1, m) : n;
  std::vector<uint32_t> chain[6];
  for (int32_t j = 0; j <= n && j < m; ++j) {
    chain[0].push_back(problem.getOperation(ActionKind::Forward, lo, j));
    chain[1].push_back(problem.getOperation(ActionKind::BackwardInput, lo, j));
    chain[2].push_back(problem.getOperation(ActionKind::BackwardWeight, lo, j));
    chain[3].push_back(problem.getOperation(ActionKind::Forward, hi, j));
    chain[4].push_back(problem.getOperation(ActionKind::BackwardInput, hi, j));
    chain[5].push_back(problem.getOperation(ActionKind::BackwardWeight, hi, j));
  }
  const llvm::ArrayRef<uint32_t> chains[] = {chain[0], chain[1], chain[2],
                                             chain[3], chain[4], chain[5]};
  const __int128 own = upper ? ah : al;
  // The fewest operations (no gradient, no forward of hi before F(lo, n))
  // fit: every other choice runs more, so no later finish is less.
  if (al * fl + (upper ? ah * n : 0) + own <= room) {
    const int32_t counts[] = {fl, 0, 0, upper ? n : 0, 0, 0};
    return serialFinish(chains, counts, ops, paths);
  }
  double least = std::numeric_limits<double>::infinity();
  // x = hi: fh = n and ih <= n; x = lo: fh = ih <= n.
  for (int32_t ih = 0; ih <= n; ++ih) {
    const int32_t fh = upper ? n : ih;
    for (int32_t il = upper ? 0 : ih; il <= std::min(ih, fl); ++il)
      for (int32_t wl = 0; wl <= il; ++wl) {
        // Memory before the fewest weight gradients of hi.
        const __int128 held =
            al * (fl - il) + rl * (il - wl) + ah * (fh - ih) + rh * ih + own;
        int32_t wh = 0;
        if (held > room) {
          if (rh == 0)
            continue;
          const __int128 fewest = (held - room + rh - 1) / rh;
          if (fewest > ih)
            continue;
          wh = static_cast<int32_t>(fewest);
        }
        const int32_t counts[] = {fl, il, wl, fh, ih, wh};
        least = std::min(least, serialFinish(chains, counts, ops, paths));
      }
  }
  return std::isinf(least) ? 0 : least;
}

std::vector<uint32_t>
sched::topologicalOrder(llvm::ArrayRef<llvm::SmallVector<PathEdge, 4>> out) {
  // Kahn's order; `out` is acyclic (the precedences: every edge stays
  // within a microbatch or goes to a later one; a rank relaxation's
  // delays: each is at least its source's length).
  std::vector<uint32_t> waiting(out.size(), 0), order;
  order.reserve(out.size());
  for (const auto &edges : out)
    for (const Edge &e : edges)
      ++waiting[e.to];
  for (uint32_t op = 0; op < out.size(); ++op)
    if (waiting[op] == 0)
      order.push_back(op);
  for (size_t i = 0; i < order.size(); ++i)
    for (const Edge &e : out[order[i]])
      if (--waiting[e.to] == 0)
        order.push_back(e.to);
  return order;
}

PathLengths sched::computePathLengths(const PipelineProblem &problem,
                                      PathModel model) {
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  const std::vector<llvm::SmallVector<Edge, 4>> out =
      computePrecedences(problem, model);
  const std::vector<uint32_t> order = topologicalOrder(out);
  PathLengths paths;
  paths.head.assign(ops.size(), 0);
  paths.tail.assign(ops.size(), 0);
  // The canonical model's heads are raised, where a rank's memory and its
  // serial work bind together (SerialMemoryHeads), in a second pass that
  // starts from the first's heads: every value stays a lower bound.
  const bool serial = model == PathModel::Canonical &&
                      problem.getSpec().splitBackward &&
                      problem.getNumMicrobatches() <= kSerialHeadsMicrobatches;
  const bool paired = model == PathModel::Canonical &&
                      problem.getSpec().splitBackward &&
                      problem.getNumMicrobatches() <= kPairedHeadsMicrobatches;
  for (int pass = 0; pass < (serial || paired ? 2 : 1); ++pass)
    for (uint32_t op : order) {
      if (serial && ops[op].kind == ActionKind::Forward)
        paths.head[op] =
            std::max(paths.head[op], serialForwardHead(problem, op, paths));
      if (paired && ops[op].kind == ActionKind::Forward)
        paths.head[op] =
            std::max(paths.head[op], pairedForwardHead(problem, op, paths));
      for (const Edge &e : out[op])
        paths.head[e.to] = std::max(paths.head[e.to], paths.head[op] +
                                                          ops[op].duration +
                                                          e.latency);
    }
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (const Edge &e : out[*it])
      paths.tail[*it] = std::max(paths.tail[*it], e.latency +
                                                      ops[e.to].duration +
                                                      paths.tail[e.to]);
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
    // The last microbatch's tails are the shortest (in the canonical
    // model later microbatches have less after them).
    shortestTail = std::min(
        shortestTail,
        paths.tail[problem.getOperation(ActionKind::Forward, s, m - 1)]);
    for (ActionKind kind : problem.getBackwardKinds()) {
      const uint32_t b = problem.getOperation(kind, s, 0);
      if (kind != ActionKind::BackwardWeight)
        firstBackward = std::min(firstBackward, paths.head[b]);
      work += m * ops[b].duration;
      shortestTail = std::min(
          shortestTail, paths.tail[problem.getOperation(kind, s, m - 1)]);
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

LowerBound sched::computeLowerBound(const PipelineProblem &problem) {
  llvm::ArrayRef<ProblemOperation> ops = problem.getOperations();
  const PathLengths plain = computePathLengths(problem);
  const PathLengths paths =
      computePathLengths(problem, PathModel::Canonical);
  LowerBound bound;
  for (uint32_t op = 0; op < ops.size(); ++op) {
    bound.criticalPath =
        std::max(bound.criticalPath,
                 plain.head[op] + ops[op].duration + plain.tail[op]);
    bound.memoryPath = std::max(
        bound.memoryPath, paths.head[op] + ops[op].duration + paths.tail[op]);
  }
  bound.value = std::max(bound.criticalPath, bound.memoryPath);
  std::vector<std::vector<uint32_t>> onRank(problem.getNumRanks());
  for (uint32_t op = 0; op < ops.size(); ++op)
    onRank[ops[op].rank].push_back(op);
  for (int32_t r = 0; r < problem.getNumRanks(); ++r) {
    const double work = jacksonPreemptive(onRank[r], ops, paths);
    const double memory = memoryWaitBound(problem, r, paths);
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
