//===- Synthesizer.cpp - a pipeline schedule with its certified gap -------===//

#include "lib/Synthesis/Synthesizer.h"
#include "lib/Synthesis/ExactSolver.h"
#include "lib/Synthesis/ListScheduler.h"
#include "lib/Synthesis/WindowBound.h"

#include <chrono>

using namespace sched;

/// The share of the time limit the windows' bound may take.
static constexpr double kWindowBoundShare = 0.1;

std::optional<SynthesisSolver>
sched::parseSynthesisSolver(llvm::StringRef name) {
  if (name == "list")
    return SynthesisSolver::List;
  if (name == "exact")
    return SynthesisSolver::Exact;
  return std::nullopt;
}

llvm::Expected<SynthesisResult>
sched::synthesizeSchedule(const PipelineProblem &problem,
                          const SynthesisOptions &options) {
  if (llvm::Error error = problem.checkMemory())
    return std::move(error);
  SynthesisResult result;
  result.bound = computeLowerBound(problem);
  result.lowerBound = result.bound.value;
  const auto begin = std::chrono::steady_clock::now();
  ListSchedulerOptions listOptions;
  listOptions.searchSeconds = options.timeLimitSeconds;
  listOptions.target = result.bound.value;
  listOptions.restarts = options.listRestarts;
  llvm::Expected<ListSchedulerResult> list =
      solveWithListScheduling(problem, listOptions);
  if (!list)
    return list.takeError();
  result.listSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  result.solution = std::move(list->solution);
  result.makespan = list->makespan;
  result.solvers = "list";
  if (llvm::Error error = problem.verify(result.solution))
    return llvm::createStringError("the list schedule does not verify: " +
                                   llvm::toString(std::move(error)));
  result.lowerBound = std::min(result.lowerBound, result.makespan);
  result.gap = relativeGap(result.makespan, result.lowerBound);
  // Narrowed windows (WindowBound.h) raise the bound, within a tenth of
  // the budget; Z3 gets what is left.
  if (result.gap > 0) {
    const double spent =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
            .count();
    const double seconds =
        std::min(kWindowBoundShare * options.timeLimitSeconds,
                 options.timeLimitSeconds - spent);
    if (seconds > 0) {
      result.bound.windows =
          windowBound(problem, result.lowerBound, result.makespan, seconds);
      result.lowerBound = std::max(result.lowerBound, result.bound.windows);
      result.gap = relativeGap(result.makespan, result.lowerBound);
    }
  }
  // Z3 gets what the list scheduler and the windows left of the budget.
  const double left =
      options.timeLimitSeconds -
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  const bool exactWanted =
      result.gap > 0 && options.solver == SynthesisSolver::Exact;
  if (exactWanted && left <= 0)
    result.exactStop = "time limit";
  if (exactWanted && left > 0) {
    ExactSolverOptions exactOptions;
    exactOptions.timeLimitSeconds = left;
    exactOptions.targetGap = options.targetGap;
    ExactSolverResult exact =
        solveExactly(problem, result.solution, result.lowerBound, exactOptions);
    result.solvers = "list+z3";
    result.exactStop = exact.stopReason;
    result.exactQueries = exact.queries;
    result.exactSeconds = exact.seconds;
    if (llvm::Error error = problem.verify(exact.solution))
      return llvm::createStringError("the exact solver's schedule does not "
                                     "verify: " +
                                     llvm::toString(std::move(error)));
    result.solution = std::move(exact.solution);
    result.makespan = exact.makespan;
    result.lowerBound = std::max(result.lowerBound, exact.lowerBound);
  }
  result.gap = relativeGap(result.makespan, result.lowerBound);
  result.optimal = result.gap <= 0;
  return result;
}
