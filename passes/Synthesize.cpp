//===- Synthesize.cpp - the sched-synthesize pass -------------------------===//
//
// Replaces each sched.pipeline by the schedule lib/Synthesis solves for its
// stage costs, transfer time and memory limit, and records the schedule's
// makespan, lower bound and gap on it.
//
//===----------------------------------------------------------------------===//

#include "lib/ScheduleIR/ScheduleIR.h"
#include "lib/Synthesis/ListScheduler.h"
#include "lib/Synthesis/Synthesizer.h"
#include "lib/Synthesis/TransferBuffers.h"
#include "lib/Verify/MemoryLimit.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>

namespace sched {
#define GEN_PASS_DEF_SYNTHESIZE
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;
using namespace mlir;

/// Solves after the first while the transfers' buffers overflow.
static constexpr int kBufferRepairs = 3;
/// The local search's budget of a solve after the time limit is spent.
static constexpr double kSpentSeconds = 1e-3;

namespace {
struct SynthesizePass : sched::impl::SynthesizeBase<SynthesizePass> {
  using SynthesizeBase::SynthesizeBase;

  void runOnOperation() override;

private:
  /// Checks the options; emits an error at `loc` and fails on a bad one.
  LogicalResult checkOptions(Location loc);
  LogicalResult synthesize(PipelineOp pipeline);
  /// Synthesizes `problem` so that its transfers' buffers fit as well
  /// (TransferBuffers.h): solved again under a lower limit while they
  /// overflow, and as a last resort the fastest list schedule with the
  /// microbatches in flight capped whose buffers fit (one at a time fits
  /// any limit checkMemory accepts). After a repair the gap is against the
  /// request's own bound (what Z3 proved was for a lower limit).
  llvm::Expected<SynthesisResult>
  synthesizeWithBuffers(const PipelineProblem &problem);

  SynthesisOptions options;
  std::optional<MemoryLimit> limit;
  int64_t budgetBytes = kDefaultMemoryBudget;
};
} // namespace

LogicalResult SynthesizePass::checkOptions(Location loc) {
  auto fail = [&](const llvm::Twine &message) {
    return emitError(loc) << "sched-synthesize: " << message;
  };
  std::optional<SynthesisSolver> parsed = parseSynthesisSolver(solver);
  if (!parsed)
    return fail("unknown solver '" + solver + "'; expected list or exact");
  options.solver = *parsed;
  if (backward != "split" && backward != "full")
    return fail("unknown backward '" + backward + "'; expected split or full");
  if (!timeLimit.parsed() || !(timeLimit > 0 && std::isfinite(timeLimit)))
    return fail("time-limit must be a finite number of seconds > 0, got " +
                timeLimit.describe());
  options.timeLimitSeconds = timeLimit;
  if (!gap.parsed() || !(gap >= 0 && gap < 1))
    return fail("gap must be a number in [0, 1), got " + gap.describe());
  options.targetGap = gap;
  if (!comm.parsed() || !(comm >= 0 && std::isfinite(comm)))
    return fail("comm must be a finite number >= 0, got " + comm.describe());
  if (!weightGradFraction.parsed() ||
      !(weightGradFraction >= 0 && weightGradFraction <= 1))
    return fail("weight-grad-fraction must be a number in [0, 1], got " +
                weightGradFraction.describe());
  llvm::Expected<int64_t> budget = memoryBudgetBytes(memoryBudget);
  if (!budget)
    return fail(llvm::toString(budget.takeError()));
  budgetBytes = *budget;
  if (!memoryLimit.empty()) {
    llvm::Expected<MemoryLimit> parsedLimit = MemoryLimit::parse(memoryLimit);
    if (!parsedLimit)
      return fail("memory-limit " + llvm::toString(parsedLimit.takeError()));
    limit = *parsedLimit;
  }
  return success();
}

LogicalResult SynthesizePass::synthesize(PipelineOp pipeline) {
  SynthesisRequest request;
  request.splitBackward = backward == "split";
  request.comm = comm;
  request.weightGradFraction = weightGradFraction;
  request.globalBatchHead = highestGlobalBatchHead(pipeline);
  request.memoryLimit = limit;
  if (!request.memoryLimit && pipeline.getMemoryLimit())
    request.memoryLimit = MemoryLimit::fromInteger(*pipeline.getMemoryLimit());
  const SynthesisSpec spec =
      makeSynthesisSpec(readPipelineShape(pipeline), request);
  RequestSize size;
  size.actions = int64_t(spec.pp) * spec.vpp * spec.microbatches *
                 (spec.splitBackward ? 3 : 2);
  size.microbatches = spec.microbatches;
  if (llvm::Error error =
          checkMemoryBudget(MemoryPath::Lower, size, budgetBytes,
                            "synthesizing @" + pipeline.getSymName().str(),
                            "the pass option memory-budget=SIZE"))
    return pipeline.emitOpError()
           << "cannot be synthesized: " << llvm::toString(std::move(error));
  llvm::Expected<PipelineProblem> problem = PipelineProblem::build(spec);
  if (!problem)
    return pipeline.emitOpError()
           << "cannot be synthesized: " << llvm::toString(problem.takeError());
  llvm::Expected<SynthesisResult> result = synthesizeWithBuffers(*problem);
  if (!result)
    return pipeline.emitOpError()
           << "cannot be synthesized: " << llvm::toString(result.takeError());

  Builder builder(pipeline.getContext());
  llvm::SmallVector<NamedAttribute> record = {
      builder.getNamedAttr("makespan",
                           builder.getF64FloatAttr(result->makespan)),
      builder.getNamedAttr("lower_bound",
                           builder.getF64FloatAttr(result->lowerBound)),
      builder.getNamedAttr("gap", builder.getF64FloatAttr(result->gap)),
      builder.getNamedAttr("optimal", builder.getBoolAttr(result->optimal)),
      builder.getNamedAttr("solvers", builder.getStringAttr(result->solvers))};
  if (!result->exactStop.empty())
    record.push_back(
        builder.getNamedAttr("z3", builder.getStringAttr(result->exactStop)));
  IntegerAttr scheduleLimit = pipeline.getMemoryLimitAttr();
  // The schedule keeps the limit it was solved for, when it is a whole
  // number (the verifier then checks the same one).
  if (limit && !limit->isUnbounded()) {
    const __int128 whole = limit->floorScaled(1);
    if (whole < (__int128(1) << 62) &&
        MemoryLimit::fromInteger(static_cast<uint64_t>(whole)).str() ==
            limit->str())
      scheduleLimit = builder.getI64IntegerAttr(static_cast<int64_t>(whole));
  }
  ScheduleOp op = replacePipeline(pipeline, result->schedule);
  op.setMemoryLimitAttr(scheduleLimit);
  op->setAttr("sched.synthesis", builder.getDictionaryAttr(record));
  return success();
}

/// The fastest list schedule whose transfers' buffers fit `problem`'s
/// limits as the verifier counts them, among the policies with a cap on
/// the microbatches in flight (which bounds the buffers as well as the
/// activations), from one microbatch at a time (which fits every limit
/// checkMemory accepts) to 2P; `result` takes its schedule.
static llvm::Expected<BufferedSolution>
fastestCappedSchedule(const PipelineProblem &problem, SynthesisResult &result) {
  std::optional<BufferedSolution> best;
  const int32_t most =
      std::min(problem.getNumMicrobatches(), 2 * problem.getNumRanks());
  for (int32_t cap = 1; cap <= most; ++cap)
    for (WeightGradPolicy w : {WeightGradPolicy::Eager, WeightGradPolicy::Fill,
                               WeightGradPolicy::MemoryFirst})
      for (bool wait : {false, true}) {
        ListPolicy policy;
        policy.weightGrad = w;
        policy.inFlightCap = cap;
        policy.waitForUrgent = wait;
        llvm::Expected<BufferedSolution> trial = solveWithTransferBuffers(
            problem.getSpec(), 0, [&](const PipelineProblem &solvedIn) {
              return runListPolicy(solvedIn, policy);
            });
        if (!trial) {
          llvm::consumeError(trial.takeError());
          continue;
        }
        if (!trial->fits)
          continue;
        const double makespan =
            trial->solution.makespan(problem.getOperations());
        if (best &&
            makespan >= best->solution.makespan(problem.getOperations()))
          continue;
        best = std::move(*trial);
      }
  if (!best)
    return llvm::createStringError(
        "no capped list schedule fits the transfers' buffers");
  result.solution = best->solution;
  result.schedule = problem.toSchedule(best->solution);
  result.makespan = best->solution.makespan(problem.getOperations());
  result.solvers = "list (microbatches in flight capped)";
  result.exactStop.clear();
  return std::move(*best);
}

llvm::Expected<SynthesisResult>
SynthesizePass::synthesizeWithBuffers(const PipelineProblem &problem) {
  if (llvm::Error error = problem.checkMemory())
    return std::move(error);
  std::optional<SynthesisResult> last;
  // The time limit is the whole synthesis's: each solve (the first and
  // the repairs) gets what the ones before it left; once it is spent, a
  // solve is the list scheduler's policies alone (no restarts, no local
  // search, no Z3), which every problem gets in a bounded number of steps.
  const auto begin = std::chrono::steady_clock::now();
  auto solve =
      [&](const PipelineProblem &solvedIn) -> llvm::Expected<ProblemSolution> {
    SynthesisOptions within = options;
    within.timeLimitSeconds =
        options.timeLimitSeconds -
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
            .count();
    const bool spent = within.timeLimitSeconds <= 0;
    if (spent) {
      within.solver = SynthesisSolver::List;
      within.listRestarts = 0;
      within.timeLimitSeconds = kSpentSeconds;
    }
    llvm::Expected<SynthesisResult> result =
        synthesizeSchedule(solvedIn, within);
    if (!result)
      return result.takeError();
    // Z3 was wanted and the limit kept it from running: say so, as when
    // the limit runs out inside one solve.
    if (spent && options.solver == SynthesisSolver::Exact && result->gap > 0)
      result->exactStop = "time limit";
    result->schedule = solvedIn.toSchedule(result->solution);
    last = std::move(*result);
    return last->solution;
  };
  llvm::Expected<BufferedSolution> buffered =
      solveWithTransferBuffers(problem.getSpec(), kBufferRepairs, solve);
  if (!buffered)
    return buffered.takeError();
  bool repaired = llvm::any_of(buffered->limits, [&](int64_t limit) {
    return limit != *problem.getMemoryLimit(0) &&
           problem.getSpec().memoryLimit.size() == 1;
  });
  if (!buffered->fits) {
    repaired = true;
    llvm::Expected<BufferedSolution> capped =
        fastestCappedSchedule(problem, *last);
    if (!capped)
      return capped.takeError();
    buffered = std::move(capped);
  }
  SynthesisResult result = std::move(*last);
  if (repaired) {
    result.bound = computeLowerBound(problem);
    result.lowerBound = std::min(result.bound.value, result.makespan);
    result.gap = relativeGap(result.makespan, result.lowerBound);
    result.optimal = result.gap <= 0;
    result.solvers += "+buffers";
  }
  return result;
}

void SynthesizePass::runOnOperation() {
  if (failed(checkOptions(getOperation().getLoc())))
    return signalPassFailure();
  for (auto pipeline :
       llvm::make_early_inc_range(getOperation().getOps<PipelineOp>()))
    if (failed(synthesize(pipeline)))
      return signalPassFailure();
}
