//===- Planner.h - search layouts and schedules for a training run -*- C++ -*-===//
//
// The planner answers "which layout and which schedule, and do we need
// pipeline parallelism?" (docs/planner.md). It enumerates dp/tp/pp/vpp/ep/cp,
// ZeRO stage, recomputation, microbatch size and pipeline strategy; bounds
// each candidate's step time and memory from the cost model; and, in order
// of the bound, turns candidates into real schedules: stage costs from
// lib/CostModel go into the strategy's generator, transfers are inserted,
// the result is simulated for its step time and verified against the
// device's memory in bytes. Branch and bound: once the bound of the next
// candidate exceeds the step time of the last one the report keeps, no
// remaining candidate can enter the report.
//
// By concern: Search.cpp enumerates and bounds candidates and runs the
// branch and bound; Evaluation.h measures, simulates and proves one
// candidate; Recommendation.h ranks, picks and says why; lib/PlanWriter
// writes the recommendation through the IR.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_PLANNER_PLANNER_H
#define LIB_PLANNER_PLANNER_H

#include "lib/CostModel/CostModel.h"
#include "lib/Planner/Candidate.h"
#include "lib/Planner/Evaluation.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sched {

struct PlanOptions {
  /// Evaluate only this layout (dp/tp/pp/vpp/ep/cp), when set.
  std::optional<Layout> layout;
  std::optional<Strategy> strategy;
  /// Also search synthesized schedules (Synthesized.h) on the layouts with
  /// one stage per rank or a V of two; with `onlySynthesized` (and no
  /// `strategy`), only them.
  bool synthesize = false;
  bool onlySynthesized = false;
  std::optional<int64_t> microbatchSize;
  std::optional<int> zero;
  std::optional<Recompute> recompute;
  /// Candidates reported.
  int top = 10;
  /// Most candidates simulated before the search stops; 0, the default,
  /// for none (the search is then exact: every candidate is simulated or
  /// pruned by a true lower bound).
  int maxEvaluations = 0;
  /// Simulate every candidate that fits, pruning nothing by a bound (to
  /// check the bounds: the answer must be the same).
  bool exhaustive = false;
  /// Prove the recommendation and the best layout with and without PP
  /// with the verifier (Z3) before reporting them; with `verifyAll`, every
  /// listed candidate.
  bool verify = true;
  bool verifyAll = false;
  /// Z3's resource units each proof may spend (VerifyOptions::
  /// resourceLimit): past it the verdict is "unknown", on every machine
  /// alike. The default is far above what the largest plans' proofs spend
  /// (docs/limits.md); 0 means none. A wall-clock limit of
  /// kProofSafetySeconds also stops a proof, as "unknown".
  uint64_t proofResourceLimit = kProofResourceLimit;
  /// Bytes of generated orders kept for reuse (kOrderCacheBytes; 0: none).
  /// Only how often orders are generated depends on it, never an answer.
  size_t orderCacheBytes = kOrderCacheBytes;
  /// Called with (done, total) while candidates are evaluated.
  std::function<void(size_t, size_t)> progress;
};

struct PlanResult {
  /// Evaluated candidates that fit, best first, at most `top`.
  std::vector<Candidate> ranked;
  /// The best fitting candidate without and with pipeline parallelism.
  std::optional<Candidate> bestWithoutPipeline;
  std::optional<Candidate> bestWithPipeline;
  /// Index into `ranked` of the recommendation, and why.
  int recommended = -1;
  std::string reason;
  /// Evaluated candidates that do not fit, nearest first (for --layout
  /// and for explaining an empty table).
  std::vector<Candidate> overflowing;
  size_t considered = 0;
  /// Candidates left out because their schedule would be too large to
  /// generate (more than 2^22 compute actions).
  size_t prunedSize = 0;
  size_t prunedMemory = 0;
  size_t prunedBound = 0;
  /// Candidates whose exact memory was measured on their schedule's order,
  /// and those of them that fit and were simulated.
  size_t memoryChecked = 0;
  size_t lowered = 0;
  size_t verified = 0;
  bool truncated = false;
  /// Candidates left unsearched by --max-lowered.
  size_t leftByCap = 0;
  /// Whole orders generated to measure and simulate candidates (a cost, not
  /// an answer: not reported).
  size_t ordersGenerated = 0;
  double seconds = 0;
};

/// Runs the search. Fails with one line when nothing can be enumerated
/// (an impossible --layout, a batch that does not split).
llvm::Expected<PlanResult> plan(const CostModel &model,
                                const PlanOptions &options);

} // namespace sched

#endif // LIB_PLANNER_PLANNER_H
