//===- Evaluation.h - a candidate's step time, memory and proof -*- C++ -*-===//
//
// Candidate evaluation (docs/planner.md, "The search", steps 2-4): the cost
// model's stages as the candidate's strategy runs them, the exact peak
// memory on the strategy's order of actions, the simulated step, and the
// verifier's proof of the lowered schedule against the device memory.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_PLANNER_EVALUATION_H
#define LIB_PLANNER_EVALUATION_H

#include "lib/CostModel/CostModel.h"
#include "lib/Generate/SteadyState.h"
#include "lib/Planner/Candidate.h"
#include "lib/Planner/Synthesized.h"
#include "lib/Schedule/Schedule.h"

#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace sched {

/// Strategies whose steady phase runs a forward and a backward of two
/// chunks together (sched.overlap): one chunk's expert all-to-all hides
/// under the other's compute (DeepSeek-V3 report, section 3.2.1).
bool overlapsCommunication(Strategy strategy);

/// One overlap pair of an MoE layer: a forward and a backward (of another
/// microbatch) on two streams, per microbatch: the attention side (all but
/// the MoE block) and the MoE block's kernels in each pass, and the four
/// exchanges.
struct OverlapPairTimes {
  double attentionForward = 0, attentionInput = 0, attentionWeight = 0;
  double blockForward = 0, blockBackwardInput = 0, blockBackwardWeight = 0;
  double dispatchForward = 0, combineForward = 0;
  double dispatchBackward = 0, combineBackward = 0;
};

/// What a pair adds to its compute: the exchanges that do not hide, with
/// each exchange beside the compute Megatron-Core's schedule sets next to
/// it and waiting for what it needs (TransformerLayerSchedulePlan.run,
/// megatron/core/models/common/model_chunk_schedule_plan.py,
/// core_v0.14.0; the DeepSeek-V3 report's Figure 4 pairs the same):
///   comm:  combine_bwd     | dispatch_fwd -> dispatch_bwd  | combine_fwd
///   comp:  attn_fwd (+dw)  | mlp_bwd -> mlp_dw -> mlp_fwd  | attn_bwd
double overlapPairExposed(const OverlapPairTimes &times);

/// Stage times as `strategy` runs them, by one rule for every schedule
/// with overlap pairs: each pair is timed by overlapPairExposed, the
/// partner taken as long as the action's own stage; `paired` is the share
/// of actions in pairs (1 for a bound, the schedule's own share once
/// generated).
std::vector<StageEstimate> stagesAsRun(const CostModel &model,
                                       std::vector<StageEstimate> stages,
                                       Strategy strategy, double paired = 1);

/// Per-rank figures the bound and the evaluation share.
struct RankFigures {
  double busy = 0;
  /// The forward of the stages before this rank's first one: no schedule
  /// can start the rank before a microbatch has passed them (the fill every
  /// pipeline pays).
  double fill = 0;
  double forwardPerMicrobatch = 0;
  double backwardPerMicrobatch = 0;
  double staticBytes = 0;
  double largestActivation = 0;
  DataParallelCost dataParallel;
  StepBreakdown time;
  MemoryBreakdown memory;

  /// What runs after the pipeline drains: exposed data-parallel traffic
  /// and the optimizer step.
  double afterPipeline() const {
    return dataParallel.exposed + dataParallel.optimizer;
  }
};

/// The figures of each pipeline rank of `layout` run by `strategy` with
/// `stages` (as run: stagesAsRun).
std::vector<RankFigures> rankFigures(const CostModel &model,
                                     const Layout &layout, Strategy strategy,
                                     const std::vector<StageEstimate> &stages);
/// The same into `ranks`, which keeps its capacity: the search bounds
/// every candidate it makes with one vector.
void rankFigures(const CostModel &model, const Layout &layout,
                 Strategy strategy, const std::vector<StageEstimate> &stages,
                 std::vector<RankFigures> &ranks);

/// A cost model stage as a schedule's stage: its times, and its sizes in
/// whole bytes (an activation and an output of at least one byte).
StageCost toStageCost(const StageEstimate &stage);

/// The cost model's stages for `candidate` (DualPipe: one per rank, which
/// its generator runs twice).
std::vector<StageEstimate> candidateStages(const CostModel &model,
                                           const Candidate &candidate);

/// The lowered schedule (compute and transfers) of `candidate` with its
/// stage costs in seconds and bytes, as the planner simulated it.
llvm::Expected<Schedule> buildSchedule(const CostModel &model,
                                       const Candidate &candidate);

/// `bytes` as "12.3 GB".
std::string formatGigabytes(double bytes);

/// The bytes of generated orders the planner keeps for simulation, least
/// recently used first out (CandidateEvaluator): 2^23 actions' worth, four
/// of the largest orders it generates (2^21 actions; docs/limits.md, "The
/// order cache").
constexpr size_t kOrderCacheBytes = (size_t(1) << 23) * sizeof(Action);

/// Measures and simulates candidates. The generators order actions without
/// looking at stage costs, so one order per (strategy, pp, vpp,
/// microbatches) serves every layout that shares it: memory is measured on
/// it exactly, before any simulation.
class CandidateEvaluator {
public:
  /// Keeps generated orders up to `orderCacheBytes` (0: only the one in
  /// use); no answer depends on it, only how often an order is generated.
  explicit CandidateEvaluator(const CostModel &model,
                              size_t orderCacheBytes = kOrderCacheBytes)
      : model(model), orderCacheBytes(orderCacheBytes) {}

  /// Sets the candidate's memory figures, `fits` and `overflow`, from the
  /// peak of static bytes plus live activations on each rank.
  llvm::Error measureMemory(Candidate &candidate,
                            const std::vector<StageEstimate> &stages);
  /// Simulates the candidate's step (after measureMemory). With
  /// `detailed`, also splits the idle time into bubble and transfers.
  llvm::Error simulateStep(Candidate &candidate,
                           const std::vector<StageEstimate> &stages,
                           bool detailed);
  /// Simulates the candidate in detail unless it already was; a failure
  /// becomes its verdict ("unknown: ...").
  void detail(Candidate &candidate);
  /// Each rank's most stage-microbatches alive at once in the candidate's
  /// schedule, if measureMemory has walked that schedule (it depends on
  /// the strategy, pp, vpp and microbatches only); nullptr otherwise.
  const std::vector<double> *mostInFlight(const Candidate &candidate) const;
  /// Frees the memory walks, which only measureMemory reads: the search
  /// calls it before it proves its answer, so the verifier's wait graph
  /// does not sit on top of them (Llama 3 405B on 256 H100s: 214 MB of
  /// walks under a 153 MB graph at the peak).
  void releaseMemoryWalks() {
    walks.clear();
    cachedWalkActions = 0;
    lastWalked.reset();
  }
  /// Frees the order cache: the planner calls it before each proof, whose
  /// lowered schedule and wait graph are the plan's peak of memory (the
  /// cache would add up to kOrderCacheBytes on top of it).
  void releaseOrders() {
    orders.clear();
    cachedOrderBytes = 0;
  }
  /// Orders of whole candidates generated so far (for measuring memory or
  /// simulating), each time one was not at hand.
  size_t ordersGenerated() const { return generatedOrders; }

private:
  using OrderKey = std::tuple<Strategy, int64_t, int64_t, int64_t>;
  static OrderKey orderKey(const Candidate &candidate);
  /// The candidate's order: its strategy's (shared by every layout of the
  /// same shape), or the one synthesized for its stages.
  llvm::Expected<const Schedule *>
  order(const Candidate &candidate, const std::vector<StageEstimate> &stages);
  /// The synthesized order of a synthesized candidate, solved once per
  /// problem (shape, stage costs, transfer time).
  llvm::Expected<const SynthesizedOrder *>
  synthesis(const Candidate &candidate,
            const std::vector<StageEstimate> &stages);

  /// What measureMemory reads of an order. A rank's live activation bytes
  /// after each action are sum_j full_j * activation_j + residue_j *
  /// weightGrad_j over its stages j (full: forwarded, not yet backward;
  /// residue: I done, W not yet), so its peak is the largest of that sum
  /// over the distinct (full, residue) states the order passes through,
  /// kept in order of first occurrence: a few hundred per rank however
  /// many microbatches (the steady state repeats), which makes measuring
  /// a candidate independent of the microbatch count. Where a rank has
  /// more state entries than compute actions, its actions are kept as
  /// `stage << 2 | kind` instead and walked as the simulator does.
  struct MemoryWalk {
    struct Rank {
      /// The schedule stages of the rank's computes (states) or empty.
      std::vector<int32_t> stages;
      /// Each state's full counts, then its residue counts, per stage.
      std::vector<int32_t> states;
      /// The compute actions, where they are fewer than state entries.
      std::vector<uint32_t> codes;
      /// How many times each of `codes` runs in a row (empty: once each).
      std::vector<uint32_t> repeats;
      /// The (forward, backward) stages of the rank's layerwise overlaps,
      /// each once: the walk frees a pair's backward before its forward
      /// allocates, and the evaluation adds the most any pair holds above
      /// that (layerwiseOverlapPeak) to the rank's peak.
      llvm::SmallVector<std::pair<int32_t, int32_t>, 2> layerwisePairs;
    };
    std::vector<Rank> ranks;
    double pairedShare = 0;
    /// The state, stage and action entries kept, in all.
    size_t entries = 0;
  };
  /// The walk of `schedule`, which stands for an order of the same
  /// strategy with `whole` microbatches instead of its `part` (each rank
  /// running whole / part times its compute actions, through the same
  /// states: SteadyStateMicrobatches); a rank whose states would outnumber
  /// its actions there is kept action by action.
  static MemoryWalk walkSchedule(const Schedule &schedule, int64_t whole = 1,
                                 int64_t part = 1);
  /// The walk of the candidate's order, or of `given` (a synthesized
  /// order, which depends on the stage costs: walked afresh each time).
  llvm::Expected<const MemoryWalk *>
  memoryWalk(const Candidate &candidate, const Schedule *given = nullptr);

  const CostModel &model;
  SteadyStateMicrobatches steadyStates;
  /// A generated order in the cache, its size and when it was last used.
  struct CachedOrder {
    Schedule schedule;
    size_t bytes = 0;
    uint64_t lastUse = 0;
  };
  std::map<OrderKey, CachedOrder> orders;
  size_t orderCacheBytes;
  size_t cachedOrderBytes = 0;
  uint64_t orderUses = 0;
  size_t generatedOrders = 0;
  std::map<std::vector<double>, SynthesizedOrder> synthesized;
  size_t cachedSynthesizedActions = 0;
  std::map<OrderKey, std::vector<double>> inFlight;
  std::map<OrderKey, MemoryWalk> walks;
  size_t cachedWalkActions = 0;
  /// The order memoryWalk generated last (outside the order cache), until
  /// order() takes it or the next walk generates another.
  std::optional<std::pair<OrderKey, Schedule>> lastWalked;
  MemoryWalk givenWalk;
};

/// The Z3 resource units a proof may spend by default
/// (PlanOptions::proofResourceLimit): 45 times the most a plan's proof
/// spent when it was set (4.4 million, Llama 3 405B on 256 H100s; the
/// 2^40-token plans 4.2 million), so that a proof stops by its work, the
/// same on every machine, and never by the load (docs/limits.md).
constexpr uint64_t kProofResourceLimit = 200'000'000;
/// The wall-clock safety limit of a proof, in seconds: above the 20
/// minutes that 200 million units took at the slowest rate measured on the
/// loaded 2-core machine (165,000 a second), so a stalled machine reaches
/// it only where the resource limit does not bind; the verdict is then
/// "unknown", never "verified".
constexpr double kProofSafetySeconds = 1'800;

/// Lowers `candidate` with transfers and verifies it under rendezvous
/// semantics against the device's usable memory in bytes: sets `verdict`
/// (and, when violated, `fits` false and `overflow`) and raises the peak
/// memory to the verifier's. Z3 may spend `resourceLimit` of its resource
/// units (0: none) and kProofSafetySeconds on the clock; past either the
/// verdict is "unknown". Returns whether the verifier ran.
bool proveCandidate(const CostModel &model, Candidate &candidate,
                    uint64_t resourceLimit);

} // namespace sched

#endif // LIB_PLANNER_EVALUATION_H
