//===- Synthesizer.h - a pipeline schedule with its certified gap -*- C++ -*-===//
//
// The solvers together: the list scheduler's schedule, the lower bound, and,
// while the gap is open and time is left, the exact solver on Z3. Every
// answer is verified against the problem and carries its gap.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SYNTHESIS_SYNTHESIZER_H
#define LIB_SYNTHESIS_SYNTHESIZER_H

#include "lib/Synthesis/LowerBound.h"
#include "lib/Synthesis/PipelineProblem.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace sched {

/// Which solvers run.
enum class SynthesisSolver : uint8_t {
  /// The list scheduler and the bound only.
  List,
  /// Then Z3 while the gap is open.
  Exact,
};

/// The solver called `name` ("list", "exact"), if any.
std::optional<SynthesisSolver> parseSynthesisSolver(llvm::StringRef name);

struct SynthesisOptions {
  SynthesisSolver solver = SynthesisSolver::Exact;
  /// Wall-clock budget, in seconds, of the whole synthesis: the list
  /// scheduler's restarts and local search stop within it, and Z3 gets
  /// what they left.
  double timeLimitSeconds = 10;
  /// Z3 stops once the gap is at most this; 0 asks it to prove
  /// optimality.
  double targetGap = 0.01;
  /// Randomized restarts of the list scheduler
  /// (ListSchedulerOptions::restarts).
  int32_t listRestarts = 6000;
};

struct SynthesisResult {
  ProblemSolution solution;
  /// The solution as a schedule, when a caller fills it (the pass, after
  /// fitting the transfers' buffers).
  Schedule schedule;
  double makespan = 0;
  /// The bounds of computeLowerBound.
  LowerBound bound;
  /// The best proved lower bound: the bound, or more when Z3 refuted a
  /// shorter makespan.
  double lowerBound = 0;
  /// (makespan - lowerBound) / makespan.
  double gap = 0;
  /// Proved optimal (by the bound or by Z3).
  bool optimal = false;
  /// "list" or "list+z3" (Z3 ran), and why Z3 stopped.
  std::string solvers;
  std::string exactStop;
  int32_t exactQueries = 0;
  double listSeconds = 0;
  double exactSeconds = 0;
};

/// Synthesizes a schedule of `problem`. Fails when no schedule fits the
/// memory limits (the message names the smallest feasible limit) or when a
/// solver's answer does not verify (a bug, reported rather than emitted).
llvm::Expected<SynthesisResult>
synthesizeSchedule(const PipelineProblem &problem,
                   const SynthesisOptions &options);

} // namespace sched

#endif // LIB_SYNTHESIS_SYNTHESIZER_H
