//===- Candidate.h - one layout and schedule the planner weighs -*- C++ -*-===//
//
// A candidate is a parallel layout (dp/tp/pp/vpp/ep/cp, ZeRO stage,
// recomputation, microbatches) with a pipeline strategy; the search bounds
// it (Search.cpp), evaluation fills its step time and memory
// (Evaluation.h), the recommendation proves and picks among them
// (Recommendation.h).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_PLANNER_CANDIDATE_H
#define LIB_PLANNER_CANDIDATE_H

#include "lib/CostModel/Layout.h"
#include "lib/Generate/Strategy.h"
#include "lib/Schedule/Schedule.h"

#include <string>

namespace sched {

/// Exposed time of a step by kind, in seconds, on the device that bounds
/// the step.
struct StepBreakdown {
  /// Matmuls, attention, memory-bound work and recomputation.
  double compute = 0;
  /// Idle time of that device inside the pipeline (bubble), transfers
  /// excluded.
  double bubble = 0;
  double tensorParallel = 0;
  double contextParallel = 0;
  double expertParallel = 0;
  /// The device waiting on the host (eager MoE blocks).
  double host = 0;
  /// What point-to-point transfers add to the pipeline's makespan.
  double pipelineParallel = 0;
  double dataParallel = 0;
  double optimizer = 0;
};

/// Bytes of the device with the highest peak.
struct MemoryBreakdown {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  /// Transient buffers of the backward (a recomputed layer's tensors,
  /// ZeRO-3's unsharded layer gradient).
  double workingSet = 0;
  /// Activations (and receive buffers) at the peak, from the schedule.
  double activations = 0;
  double peak = 0;
  double limit = 0;
};

/// A candidate that stands for a family of layouts trading time for
/// memory step by step (docs/planner.md, "Least recomputation, least
/// offload"): the search evaluates the smallest member that fits.
enum class Family : uint8_t {
  None,
  /// Block recomputation of k layers per stage, k in [1, familySize].
  Block,
};

struct Candidate {
  Layout layout;
  Strategy strategy = Strategy::NoPipeline;
  /// The schedule is solved for (lib/Planner/Synthesized.h) rather than
  /// generated; `strategy` is then the zoo strategy whose stage placement
  /// it takes (zb-h1 or interleaved-zb on a loop, zb-v on the V).
  bool synthesized = false;
  /// Set on a family's candidate until evaluation picks its member: the
  /// layout is then the family's first member (the fastest; its time bound
  /// bounds them all) and memoryBound is the last member's (the least).
  Family family = Family::None;
  int64_t familySize = 0;
  /// Lower bounds from the cost model alone (no schedule).
  double timeBound = 0;
  double memoryBound = 0;
  /// The memory bound less every byte of weights and gradients: no ZeRO
  /// stage of the same layout can need less.
  double shardedMemoryBound = 0;

  /// Filled by evaluation.
  bool evaluated = false;
  /// Whether the pipeline's idle time is split into bubble and transfers
  /// (done for the candidates a report shows).
  bool detailed = false;
  bool fits = false;
  /// When it does not fit: which term overflows.
  std::string overflow;
  /// "verified", "violated: ..." or "unknown: ..." once verified.
  std::string verdict;
  /// Z3's resource units the proof spent (PlanOptions::proofResourceLimit).
  uint64_t proofResources = 0;
  double stepTime = 0;
  double makespan = 0;
  /// What its step was simulated with (the stage costs as run and the
  /// transfer time) and the rank that ended last: a detailed pass under
  /// the same ones reruns only the compute-only simulation.
  std::vector<StageCost> simulatedCosts;
  double simulatedTransfer = -1;
  size_t simulatedCritical = 0;
  double bubbleRatio = 0;
  /// A synthesized schedule's gap to the lower bound of its problem
  /// (docs/synthesis.md); -1 for the others.
  double synthesisGap = -1;
  double mfu = 0;
  double tflopsPerDevice = 0;
  double tokensPerSecondPerDevice = 0;
  StepBreakdown time;
  MemoryBreakdown memory;

  bool hasPipeline() const { return layout.pp > 1; }
  /// Parallel dimensions in use besides data parallelism (tp, pp, ep, cp
  /// over 1).
  int dimensions() const {
    return (layout.tp > 1) + (layout.pp > 1) + (layout.ep > 1) +
           (layout.cp > 1);
  }
  /// "1f1b", "no-pp", or "synthesized" ("synthesized-v" on the V).
  llvm::StringRef scheduleName() const {
    if (synthesized)
      return strategy == Strategy::ZBV ? "synthesized-v" : "synthesized";
    return strategyName(strategy);
  }
};

} // namespace sched

#endif // LIB_PLANNER_CANDIDATE_H
