//===- TransferBuffers.h - a solution whose transfers fit as well -*- C++ -*-===//
//
// A PipelineProblem's memory counts activations and weight-gradient
// residues, not the buffers the transfers add once they are inserted:
// receive buffers from their receive to the compute that consumes them, and
// input gradients held until their send (the verifier's memory rules,
// docs/verifier.md). solveWithTransferBuffers solves, lowers the order with
// its transfers, measures each rank's memory as the verifier counts it,
// and solves again under a limit lowered by the overshoot, a few times at
// most.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SYNTHESIS_TRANSFERBUFFERS_H
#define LIB_SYNTHESIS_TRANSFERBUFFERS_H

#include "lib/Synthesis/PipelineProblem.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace sched {

/// The last order solved for and how its memory came out.
struct BufferedSolution {
  /// The order, timed by the problem it was solved in.
  ProblemSolution solution;
  /// The per-rank limits of that problem (the request's, less what the
  /// buffers took).
  std::vector<int64_t> limits;
  /// Each rank's peak with the transfers' buffers, in the problem's units.
  std::vector<double> peaks;
  /// Every rank's peak is within the request's limit.
  bool fits = false;
};

/// Solves `spec` with `solve` (which fails only when no schedule fits its
/// problem), then up to `repairs` times again under lower limits while the
/// transfers' buffers push a rank over `spec`'s limit. Without a limit,
/// or without sizes (the verifier counts no buffer then), one solve.
/// Stops, not fitting, when a lower limit would leave no schedule.
llvm::Expected<BufferedSolution> solveWithTransferBuffers(
    const SynthesisSpec &spec, int repairs,
    llvm::function_ref<llvm::Expected<ProblemSolution>(const PipelineProblem &)>
        solve);

} // namespace sched

#endif // LIB_SYNTHESIS_TRANSFERBUFFERS_H
