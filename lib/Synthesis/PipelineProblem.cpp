//===- PipelineProblem.cpp - the pipeline schedule synthesis problem ------===//

#include "lib/Synthesis/PipelineProblem.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <queue>

using namespace sched;

double ProblemSolution::makespan(
    llvm::ArrayRef<ProblemOperation> operations) const {
  double end = 0;
  for (size_t op = 0; op < start.size(); ++op)
    end = std::max(end, start[op] + operations[op].duration);
  return end;
}

PipelineShape SynthesisSpec::shape() const {
  PipelineShape result;
  result.pp = pp;
  result.vpp = vpp;
  result.microbatches = microbatches;
  result.placement = placement;
  result.stageCosts = stages;
  return result;
}

bool sched::declaresSizes(llvm::ArrayRef<StageCost> stages) {
  for (const StageCost &cost : stages)
    if (cost.activation > 0 || cost.parameters > 0)
      return true;
  return false;
}

SynthesisSpec sched::makeSynthesisSpec(const PipelineShape &shape,
                                       const SynthesisRequest &request) {
  SynthesisSpec spec;
  spec.pp = shape.pp;
  spec.vpp = shape.vpp;
  spec.microbatches = shape.microbatches;
  spec.placement = shape.placement;
  spec.stages = shape.stageCosts;
  spec.splitBackward = request.splitBackward;
  spec.comm = request.comm;
  spec.weightGradFraction = request.weightGradFraction;
  spec.globalBatchHead = request.globalBatchHead;
  if (request.memoryLimit && !request.memoryLimit->isUnbounded()) {
    const __int128 scaled = request.memoryLimit->floorScaled(
        declaresSizes(spec.stages) ? 1 : kActivationUnit);
    // Past 2^62 a limit bounds nothing synthesis can hold.
    if (scaled < (__int128(1) << 62))
      spec.memoryLimit = {static_cast<int64_t>(scaled)};
  }
  return spec;
}

static bool isFiniteNonNegative(double value) {
  return std::isfinite(value) && value >= 0;
}

llvm::ArrayRef<ActionKind> PipelineProblem::getBackwardKinds() const {
  static const ActionKind split[] = {ActionKind::BackwardInput,
                                     ActionKind::BackwardWeight};
  static const ActionKind full[] = {ActionKind::Backward};
  if (spec.splitBackward)
    return split;
  return full;
}

uint32_t PipelineProblem::addOperation(ActionKind kind, int32_t stage,
                                       int32_t mb) {
  const StageCost cost =
      spec.stages.empty() ? StageCost() : spec.stages[stage];
  ProblemOperation op;
  op.kind = kind;
  op.stage = stage;
  op.microbatch = mb;
  op.rank = stageRank[stage];
  const int64_t activation = bytes ? cost.activation : kActivationUnit;
  const int64_t residue =
      bytes ? cost.weightGrad
            : std::llround(spec.weightGradFraction * kActivationUnit);
  switch (kind) {
  case ActionKind::Forward:
    op.duration = cost.forward;
    op.memoryDelta = activation;
    break;
  case ActionKind::Backward:
    op.duration = cost.backwardInput + cost.backwardWeight;
    op.memoryDelta = -activation;
    break;
  case ActionKind::BackwardInput:
    op.duration = cost.backwardInput;
    op.memoryDelta = -(activation - residue);
    break;
  default:
    op.duration = cost.backwardWeight;
    op.memoryDelta = -residue;
    break;
  }
  const uint32_t id = static_cast<uint32_t>(operations.size());
  operations.push_back(op);
  assert(id == getOperation(kind, stage, mb) &&
         "operations are added in getOperation's order");
  return id;
}

void PipelineProblem::addDependence(uint32_t from, uint32_t to) {
  const bool remote = operations[from].rank != operations[to].rank;
  dependences.push_back({from, to, remote ? spec.comm : 0.0});
}

PipelineProblem::Adjacency PipelineProblem::adjacency(bool incoming) const {
  Adjacency result;
  result.offsets.assign(operations.size() + 1, 0);
  for (const ProblemDependence &d : dependences)
    ++result.offsets[(incoming ? d.to : d.from) + 1];
  for (size_t op = 0; op < operations.size(); ++op)
    result.offsets[op + 1] += result.offsets[op];
  result.items.resize(dependences.size());
  std::vector<uint32_t> filled(result.offsets.begin(),
                               result.offsets.end() - 1);
  for (uint32_t id = 0; id < dependences.size(); ++id) {
    const ProblemDependence &d = dependences[id];
    result.items[filled[incoming ? d.to : d.from]++] = id;
  }
  return result;
}

llvm::Expected<PipelineProblem>
PipelineProblem::build(const SynthesisSpec &spec) {
  auto fail = [](const llvm::Twine &message) {
    return llvm::createStringError(message.str());
  };
  if (spec.pp < 1 || spec.vpp < 1 || spec.microbatches < 1)
    return fail(llvm::formatv("synthesis needs pp, vpp and microbatches >= 1, "
                              "got {0}, {1}, {2}",
                              spec.pp, spec.vpp, spec.microbatches));
  if (spec.placement == StagePlacement::V && spec.vpp != 2)
    return fail(llvm::formatv("placement v needs vpp = 2 (two stages per rank "
                              "in a V), got vpp = {0}",
                              spec.vpp));
  const int64_t numOps = int64_t(spec.pp) * spec.vpp * spec.microbatches *
                         (spec.splitBackward ? 3 : 2);
  if (numOps > (int64_t(1) << 24))
    return fail(llvm::formatv("synthesis takes up to {0} operations, this "
                              "pipeline has {1}",
                              int64_t(1) << 24, numOps));
  if (!spec.stages.empty() &&
      spec.stages.size() != static_cast<size_t>(spec.numStages()))
    return fail(llvm::formatv("{0} stage costs for {1} stages",
                              spec.stages.size(), spec.numStages()));
  if (!isFiniteNonNegative(spec.comm))
    return fail("the transfer time must be a finite number >= 0");
  if (!(spec.weightGradFraction >= 0 && spec.weightGradFraction <= 1))
    return fail("the weight-gradient fraction must lie in [0, 1]");
  for (size_t s = 0; s < spec.stages.size(); ++s) {
    const StageCost &c = spec.stages[s];
    if (!isFiniteNonNegative(c.forward) ||
        !isFiniteNonNegative(c.backwardInput) ||
        !isFiniteNonNegative(c.backwardWeight))
      return fail(llvm::formatv("stage {0}: times must be finite numbers >= 0",
                                s));
    if (c.activation < 0 || c.weightGrad < 0 || c.parameters < 0 ||
        c.weightGrad > c.activation)
      return fail(llvm::formatv("stage {0}: sizes must be >= 0 with "
                                "weight_grad <= activation",
                                s));
  }
  for (int64_t limit : spec.memoryLimit)
    if (limit < 0)
      return fail("a memory limit must be >= 0");
  if (spec.globalBatchHead < -1 || spec.globalBatchHead >= spec.numStages())
    return fail(llvm::formatv("a global_batch aux head at stage {0} of a "
                              "pipeline of {1} stages",
                              spec.globalBatchHead, spec.numStages()));
  if (spec.globalBatchHead >= 0 &&
      (spec.vpp != 1 || spec.placement != StagePlacement::Loop))
    return fail(llvm::formatv(
        "a global_batch aux head is synthesized with one stage per rank "
        "(vpp = 1 on a loop), not on {0} with vpp = {1}; lower with a "
        "strategy and sched-legalize-aux-loss, or use scope aux_free, "
        "microbatch or sequence",
        spec.placement == StagePlacement::V ? "a V" : "a loop", spec.vpp));
  if (spec.globalBatchHead >= 0 &&
      llvm::any_of(spec.stages,
                   [](const StageCost &c) { return c.output > 0; }))
    return fail("a global_batch aux head is synthesized for stages without "
                "an output size: the transfers' buffers beside every "
                "microbatch's activations (gradients that arrive before the "
                "head's last forward) are not modelled yet; lower with a "
                "strategy and sched-legalize-aux-loss, or use scope "
                "aux_free, microbatch or sequence");
  if (spec.memoryLimit.size() > 1 &&
      spec.memoryLimit.size() != static_cast<size_t>(spec.pp))
    return fail(llvm::formatv("{0} memory limits for {1} ranks",
                              spec.memoryLimit.size(), spec.pp));

  PipelineProblem problem;
  problem.spec = spec;
  const int32_t S = spec.numStages(), M = spec.microbatches;
  problem.bytes = declaresSizes(spec.stages);
  problem.stageRank.resize(S);
  problem.stagesOfRank.assign(spec.pp, {});
  problem.staticMemory.assign(spec.pp, 0);
  // Sums stay below 2^62: the largest is a rank's parameters plus every
  // activation of every microbatch.
  std::vector<__int128> total(spec.pp, 0);
  for (int32_t s = 0; s < S; ++s) {
    const int32_t r = rankOfStage(s, spec.pp, spec.placement);
    problem.stageRank[s] = r;
    problem.stagesOfRank[r].push_back(s);
    if (problem.bytes) {
      problem.staticMemory[r] += spec.stages[s].parameters;
      total[r] += spec.stages[s].parameters +
                  __int128(spec.stages[s].activation) * M;
    }
  }
  for (int32_t r = 0; r < spec.pp; ++r)
    if (total[r] >= (__int128(1) << 62))
      return fail(llvm::formatv("rank {0}: parameters and activations over "
                                "2^62 bytes are beyond synthesis",
                                r));

  problem.operations.reserve(numOps);
  for (int32_t s = 0; s < S; ++s)
    for (int32_t m = 0; m < M; ++m) {
      problem.addOperation(ActionKind::Forward, s, m);
      for (ActionKind kind : problem.getBackwardKinds())
        problem.addOperation(kind, s, m);
    }
  const ActionKind backward = problem.getBackwardKinds().front();
  for (int32_t s = 0; s < S; ++s)
    for (int32_t m = 0; m < M; ++m) {
      const uint32_t f = problem.getOperation(ActionKind::Forward, s, m);
      const uint32_t b = problem.getOperation(backward, s, m);
      if (s + 1 < S) {
        problem.addDependence(
            f, problem.getOperation(ActionKind::Forward, s + 1, m));
        problem.addDependence(problem.getOperation(backward, s + 1, m), b);
      } else {
        problem.addDependence(f, b);
      }
      if (spec.splitBackward)
        problem.addDependence(
            b, problem.getOperation(ActionKind::BackwardWeight, s, m));
    }
  // The global-batch loss at stage h: every forward there before any
  // backward there (all pairs, so that a solution in any microbatch order
  // keeps it; the solvers' canonical order needs only F(h, M-1) -> I(h, 0)).
  if (const int32_t h = spec.globalBatchHead; h >= 0)
    for (int32_t m = 0; m < M; ++m)
      for (int32_t j = 0; j < M; ++j)
        if (h + 1 < S || m != j)
          problem.addDependence(problem.getOperation(ActionKind::Forward, h, m),
                                problem.getOperation(backward, h, j));
  problem.predecessors = problem.adjacency(/*incoming=*/true);
  problem.successors = problem.adjacency(/*incoming=*/false);
  problem.outgoing.reserve(problem.dependences.size());
  for (uint32_t id : problem.successors.items) {
    const ProblemDependence &d = problem.dependences[id];
    problem.outgoing.push_back(
        {d.to, problem.operations[d.to].rank, d.latency});
  }
  return problem;
}

std::optional<int64_t> PipelineProblem::getMemoryLimit(int32_t rank) const {
  if (spec.memoryLimit.empty())
    return std::nullopt;
  if (spec.memoryLimit.size() == 1)
    return spec.memoryLimit.front();
  return spec.memoryLimit[rank];
}

int64_t PipelineProblem::getTransferHeadroom(int32_t rank) const {
  if (!bytes)
    return 0;
  const int32_t S = spec.numStages();
  auto output = [&](int32_t s) {
    return s >= 0 && s < S ? std::max<int64_t>(spec.stages[s].output, 0) : 0;
  };
  // Stage s's activation arrives from stage s - 1 and its gradient from
  // stage s + 1 when they sit on other ranks (a transfer carries the lower
  // stage's output); its input gradient (stage s - 1's output) waits for
  // its send or for the backward before it on this rank.
  int64_t held = 0, activations = 0, most = 0;
  for (int32_t s : stagesOfRank[rank]) {
    const int64_t activation =
        operations[getOperation(ActionKind::Forward, s, 0)].memoryDelta;
    const int64_t residue =
        spec.splitBackward
            ? -operations[getOperation(ActionKind::BackwardWeight, s, 0)]
                   .memoryDelta
            : 0;
    const int64_t arriving = s > 0 && stageRank[s - 1] != rank ? output(s - 1) : 0;
    const int64_t gradient =
        s + 1 < S && stageRank[s + 1] != rank ? output(s) : 0;
    // As the verifier counts a rank's memory action by action: a received
    // activation beside the microbatch's activations of the stages before
    // (the forward takes it as it allocates its own), a received gradient
    // beside those up to this stage, and after the backward the residue
    // and the input gradient beside those before.
    most = std::max({most, held + arriving, held + activation + gradient,
                     held + residue + (s > 0 ? output(s - 1) : 0)});
    held += activation;
    activations += activation;
  }
  return std::max<int64_t>(0, most - activations);
}

int64_t PipelineProblem::getMicrobatchActivations(int32_t rank) const {
  int64_t activations = 0;
  for (int32_t s : stagesOfRank[rank])
    activations +=
        operations[getOperation(ActionKind::Forward, s, 0)].memoryDelta;
  return activations;
}

bool PipelineProblem::holdsEveryMicrobatch(int32_t rank) const {
  return llvm::any_of(stagesOfRank[rank], [&](int32_t s) {
    return s <= spec.globalBatchHead;
  });
}

int64_t PipelineProblem::getSmallestFeasibleLimit(int32_t rank) const {
  const int64_t held =
      holdsEveryMicrobatch(rank) ? int64_t(spec.microbatches) : 1;
  return staticMemory[rank] + held * getMicrobatchActivations(rank) +
         getTransferHeadroom(rank);
}

std::string PipelineProblem::formatMemory(int64_t amount) const {
  if (bytes)
    return std::to_string(amount) + " bytes";
  std::string text = llvm::formatv("{0}", amount / kActivationUnit).str();
  if (int64_t fraction = amount % kActivationUnit) {
    std::string digits = llvm::formatv("{0:6}", fraction).str();
    std::replace(digits.begin(), digits.end(), ' ', '0');
    digits.erase(digits.find_last_not_of('0') + 1);
    text += "." + digits;
  }
  return text + (amount == kActivationUnit ? " stage activation"
                                           : " stage activations");
}

llvm::Error PipelineProblem::checkMemory() const {
  for (int32_t r = 0; r < spec.pp; ++r) {
    std::optional<int64_t> limit = getMemoryLimit(r);
    if (!limit || *limit >= getSmallestFeasibleLimit(r))
      continue;
    int64_t least = 0;
    for (int32_t q = 0; q < spec.pp; ++q)
      least = std::max(least, getSmallestFeasibleLimit(q));
    return llvm::createStringError(
        llvm::formatv("no schedule fits the memory limit of {0}: rank {1} "
                      "needs {2} (its parameters and {5} activations of its "
                      "stages{6}{3}); the smallest feasible limit is {4}",
                      formatMemory(*limit), r,
                      formatMemory(getSmallestFeasibleLimit(r)),
                      getTransferHeadroom(r) > 0
                          ? ", with the largest transfer buffer it holds "
                            "beside them"
                          : "",
                      formatMemory(least),
                      holdsEveryMicrobatch(r)
                          ? llvm::formatv("all {0} microbatches'",
                                          spec.microbatches)
                                .str()
                          : std::string("one microbatch's"),
                      holdsEveryMicrobatch(r)
                          ? llvm::formatv(", held together before the "
                                          "global_batch aux head at stage "
                                          "{0} runs its first backward",
                                          spec.globalBatchHead)
                                .str()
                          : std::string())
            .str());
  }
  return llvm::Error::success();
}

llvm::Error PipelineProblem::verify(const ProblemSolution &solution) const {
  auto fail = [](const llvm::Twine &message) {
    return llvm::createStringError(message.str());
  };
  auto describe = [&](uint32_t op) {
    const ProblemOperation &o = operations[op];
    return llvm::formatv("{0}(stage {1}, mb {2})", computeLetter(o.kind),
                         o.stage, o.microbatch)
        .str();
  };
  if (solution.start.size() != operations.size())
    return fail(llvm::formatv("the solution times {0} operations, the problem "
                              "has {1}",
                              solution.start.size(), operations.size()));
  if (solution.order.size() != static_cast<size_t>(spec.pp))
    return fail(llvm::formatv("the solution orders {0} ranks, the problem has "
                              "{1}",
                              solution.order.size(), spec.pp));
  std::vector<bool> seen(operations.size(), false);
  for (int32_t r = 0; r < spec.pp; ++r) {
    double free = 0;
    __int128 live = staticMemory[r];
    const std::optional<int64_t> limit = getMemoryLimit(r);
    if (limit && live > *limit)
      return fail(llvm::formatv("rank {0}: its parameters alone are over the "
                                "limit",
                                r));
    for (uint32_t op : solution.order[r]) {
      if (op >= operations.size() || seen[op])
        return fail(llvm::formatv("rank {0} runs an operation twice or one "
                                  "that does not exist",
                                  r));
      seen[op] = true;
      if (operations[op].rank != r)
        return fail(llvm::formatv("{0} belongs to rank {1}, not rank {2}",
                                  describe(op), operations[op].rank, r));
      const double start = solution.start[op];
      if (!std::isfinite(start) || start < 0)
        return fail(describe(op) + " has no finite start time >= 0");
      if (start < free)
        return fail(llvm::formatv("{0} starts at {1} while rank {2} is busy "
                                  "until {3}",
                                  describe(op), start, r, free));
      free = start + operations[op].duration;
      live += operations[op].memoryDelta;
      if (limit && live > *limit)
        return fail(llvm::formatv("rank {0} holds {1} after {2}, over its "
                                  "limit of {3}",
                                  r, formatMemory(static_cast<int64_t>(live)),
                                  describe(op), formatMemory(*limit)));
    }
  }
  for (uint32_t op = 0; op < operations.size(); ++op)
    if (!seen[op])
      return fail(describe(op) + " is not scheduled");
  for (const ProblemDependence &dep : dependences) {
    const double ready =
        solution.start[dep.from] + operations[dep.from].duration + dep.latency;
    // Times are sums of the same doubles either way; allow their rounding.
    if (solution.start[dep.to] + 1e-9 * std::max(1.0, ready) < ready)
      return fail(llvm::formatv("{0} starts at {1}, before its input from {2} "
                                "is there at {3}",
                                describe(dep.to), solution.start[dep.to],
                                describe(dep.from), ready));
  }
  return llvm::Error::success();
}

llvm::Expected<ProblemSolution>
PipelineProblem::timeOrder(std::vector<std::vector<uint32_t>> order) const {
  ProblemSolution solution;
  solution.start.assign(operations.size(), 0);
  // Kahn's algorithm over dependences plus each rank's order.
  std::vector<uint32_t> waiting(operations.size(), 0);
  std::vector<int64_t> nextOnRank(operations.size(), -1);
  std::vector<bool> placed(operations.size(), false);
  for (const std::vector<uint32_t> &ops : order)
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i] >= operations.size() || placed[ops[i]])
        return llvm::createStringError("the order names an operation twice "
                                       "or one that does not exist");
      placed[ops[i]] = true;
      if (i + 1 < ops.size()) {
        nextOnRank[ops[i]] = ops[i + 1];
        ++waiting[ops[i + 1]];
      }
    }
  if (std::count(placed.begin(), placed.end(), false))
    return llvm::createStringError("the order leaves an operation out");
  for (const ProblemDependence &dep : dependences)
    ++waiting[dep.to];
  std::vector<uint32_t> ready;
  for (uint32_t op = 0; op < operations.size(); ++op)
    if (waiting[op] == 0)
      ready.push_back(op);
  size_t done = 0;
  auto release = [&](uint32_t to, double at) {
    solution.start[to] = std::max(solution.start[to], at);
    if (--waiting[to] == 0)
      ready.push_back(to);
  };
  while (!ready.empty()) {
    const uint32_t op = ready.back();
    ready.pop_back();
    ++done;
    const double end = solution.start[op] + operations[op].duration;
    for (uint32_t dep : successors.of(op))
      release(dependences[dep].to, end + dependences[dep].latency);
    if (nextOnRank[op] >= 0)
      release(static_cast<uint32_t>(nextOnRank[op]), end);
  }
  if (done != operations.size())
    return llvm::createStringError("the order waits in a cycle");
  solution.order = std::move(order);
  return solution;
}

llvm::Expected<std::vector<std::vector<uint32_t>>>
PipelineProblem::orderOf(const Schedule &schedule) const {
  if (schedule.ranks.size() != static_cast<size_t>(spec.pp) ||
      schedule.numStages != spec.numStages() ||
      schedule.numMicrobatches != spec.microbatches)
    return llvm::createStringError(
        "the schedule is not of this pipeline's shape");
  std::vector<std::vector<uint32_t>> order(spec.pp);
  for (int32_t r = 0; r < spec.pp; ++r)
    for (const Action &a : schedule.ranks[r].actions) {
      if (!isCompute(a.kind))
        continue;
      const bool known =
          a.kind == ActionKind::Forward ||
          llvm::is_contained(getBackwardKinds(), a.kind);
      if (!known || a.stage < 0 || a.stage >= spec.numStages() ||
          a.microbatch < 0 || a.microbatch >= spec.microbatches ||
          stageRank[a.stage] != r)
        return llvm::createStringError(
            llvm::formatv("rank {0}: {1} is not an operation of this rank", r,
                          actionLabel(a, /*withStage=*/true))
                .str());
      order[r].push_back(getOperation(a.kind, a.stage, a.microbatch));
    }
  return order;
}

std::vector<int64_t>
PipelineProblem::peakMemory(const ProblemSolution &solution) const {
  std::vector<int64_t> peaks(spec.pp, 0);
  for (int32_t r = 0; r < spec.pp; ++r) {
    int64_t live = staticMemory[r];
    peaks[r] = live;
    for (uint32_t op : solution.order[r]) {
      live += operations[op].memoryDelta;
      peaks[r] = std::max(peaks[r], live);
    }
  }
  return peaks;
}

Schedule PipelineProblem::toSchedule(const ProblemSolution &solution) const {
  Schedule schedule;
  schedule.numStages = spec.numStages();
  schedule.numMicrobatches = spec.microbatches;
  schedule.stageCosts = spec.stages;
  schedule.ranks.resize(spec.pp);
  for (int32_t r = 0; r < spec.pp; ++r) {
    schedule.ranks[r].id = r;
    schedule.ranks[r].actions.reserve(solution.order[r].size());
    for (uint32_t op : solution.order[r]) {
      const ProblemOperation &o = operations[op];
      schedule.ranks[r].actions.push_back(
          Action::compute(o.kind, o.stage, o.microbatch));
    }
  }
  return schedule;
}
