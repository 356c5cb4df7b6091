//===- TransferBuffers.cpp - a solution whose transfers fit as well -------===//

#include "lib/Synthesis/TransferBuffers.h"

#include "lib/Lower/InsertTransfers.h"
#include "lib/Verify/Verifier.h"

#include <cmath>

using namespace sched;

llvm::Expected<BufferedSolution> sched::solveWithTransferBuffers(
    const SynthesisSpec &spec, int repairs,
    llvm::function_ref<llvm::Expected<ProblemSolution>(const PipelineProblem &)>
        solve) {
  BufferedSolution result;
  SynthesisSpec current = spec;
  if (!spec.memoryLimit.empty())
    for (int32_t r = 0; r < spec.pp; ++r)
      result.limits.push_back(spec.memoryLimit.size() == 1
                                  ? spec.memoryLimit.front()
                                  : spec.memoryLimit[r]);
  for (int attempt = 0;; ++attempt) {
    if (!result.limits.empty())
      current.memoryLimit = result.limits;
    llvm::Expected<PipelineProblem> problem = PipelineProblem::build(current);
    if (!problem)
      return problem.takeError();
    llvm::Expected<ProblemSolution> solved = solve(*problem);
    if (!solved)
      return solved.takeError();
    result.solution = std::move(*solved);
    result.fits = true;
    result.peaks.clear();
    if (result.limits.empty() || !problem->inBytes())
      return std::move(result);
    // Memory as the verifier counts it once the transfers are in.
    llvm::Expected<Schedule> lowered =
        insertTransfers(problem->toSchedule(result.solution));
    if (!lowered)
      return lowered.takeError();
    VerifyOptions measure;
    measure.useZ3 = false;
    result.peaks = verifySchedule(*lowered, measure).peakMemory;
    std::vector<int64_t> lower = result.limits;
    for (int32_t r = 0; r < spec.pp && r < int32_t(result.peaks.size()); ++r) {
      const int64_t wanted = spec.memoryLimit.size() == 1
                                 ? spec.memoryLimit.front()
                                 : spec.memoryLimit[r];
      const double overshoot = result.peaks[r] - static_cast<double>(wanted);
      if (overshoot <= 0)
        continue;
      result.fits = false;
      lower[r] -= static_cast<int64_t>(std::ceil(overshoot));
    }
    if (result.fits || attempt == repairs)
      return std::move(result);
    for (int32_t r = 0; r < spec.pp; ++r)
      if (lower[r] < problem->getSmallestFeasibleLimit(r))
        return std::move(result);
    result.limits = std::move(lower);
  }
}
