//===- PipelineProblem.h - the pipeline schedule synthesis problem -*- C++ -*-===//
//
// A pipeline step as a scheduling problem, in the shape of CIRCT's
// scheduling infrastructure (circt/Scheduling/Problems.h): operations (F, I
// and W, or F and B, per stage and microbatch) with durations, dependences
// with latencies (a transfer between ranks), one compute stream per rank as
// the resource, a memory limit per rank, `check()` of the instance and
// `verify()` of a solution. The solvers (lib/Synthesis/ListScheduler.h,
// ExactSolver.h) and the bounds (LowerBound.h) sit beside it.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SYNTHESIS_PIPELINEPROBLEM_H
#define LIB_SYNTHESIS_PIPELINEPROBLEM_H

#include "lib/Generate/Strategy.h"
#include "lib/Schedule/Schedule.h"
#include "lib/Verify/MemoryLimit.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace sched {

/// Internal memory units per stage activation when stages declare no sizes
/// (as the verifier counts them: millionths of an activation).
constexpr int64_t kActivationUnit = 1000000;

/// What a synthesis request states: the pipeline, its costs and limits.
struct SynthesisSpec {
  int32_t pp = 1;
  int32_t vpp = 1;
  int32_t microbatches = 1;
  StagePlacement placement = StagePlacement::Loop;
  /// Per-stage times and sizes, pp * vpp of them (empty: unit stages).
  std::vector<StageCost> stages;
  /// Split each backward into I and W (zero-bubble style); otherwise one B.
  bool splitBackward = true;
  /// Time of one transfer between two ranks (an activation forward, a
  /// gradient back); a transfer within a rank is free.
  double comm = 0;
  /// Memory limit per rank in bytes (or, when no stage declares sizes, in
  /// stage activations scaled by kActivationUnit); one value applies to
  /// every rank; empty: unlimited.
  std::vector<int64_t> memoryLimit;
  /// Part of an activation I keeps for W when stages declare no sizes.
  double weightGradFraction = 0.5;
  /// The highest stage with a `global_batch` aux head, -1 when none: every
  /// backward (I or B) of that stage waits for every forward there (the
  /// loss needs the whole batch), and so every backward of the stages
  /// below it (docs/aux-loss.md). Needs one stage per rank on a loop.
  int32_t globalBatchHead = -1;

  int32_t numStages() const { return pp * vpp; }
  /// The pipeline's shape, as the generators take it.
  PipelineShape shape() const;
};

/// How a pipeline is to be synthesized, besides its shape.
struct SynthesisRequest {
  bool splitBackward = true;
  double comm = 0;
  double weightGradFraction = 0.5;
  /// The highest stage with a `global_batch` aux head, -1 when none
  /// (SynthesisSpec::globalBatchHead).
  int32_t globalBatchHead = -1;
  /// The limit as the user wrote it: bytes, or stage activations when no
  /// stage declares sizes; none or `inf`: unlimited.
  std::optional<MemoryLimit> memoryLimit;
};

/// The spec of `shape` (a sched.pipeline's, readPipelineShape) under
/// `request`: the limit in the problem's units, none when unbounded.
SynthesisSpec makeSynthesisSpec(const PipelineShape &shape,
                                const SynthesisRequest &request);

/// Whether stages declare sizes, so that memory counts bytes (else stage
/// activations), as the verifier decides it.
bool declaresSizes(llvm::ArrayRef<StageCost> stages);

/// One operation of the problem: a compute of one stage on one microbatch.
struct ProblemOperation {
  ActionKind kind = ActionKind::Forward;
  int32_t stage = 0;
  int32_t microbatch = 0;
  /// The rank (resource) that runs it.
  int32_t rank = 0;
  double duration = 0;
  /// Memory it allocates (> 0) or frees (< 0) on its rank.
  int64_t memoryDelta = 0;
};

/// `to` starts no earlier than `latency` after `from` ends.
struct ProblemDependence {
  uint32_t from = 0;
  uint32_t to = 0;
  double latency = 0;
};

/// A dependence as the operation it leaves sees it: its target, the rank
/// that runs the target, and the latency.
struct ProblemOutEdge {
  uint32_t to = 0;
  int32_t rank = 0;
  double latency = 0;
};

/// A solution: the order of the operations on each rank and their start
/// times.
struct ProblemSolution {
  /// Per rank, operation indices in the order the rank runs them.
  std::vector<std::vector<uint32_t>> order;
  /// Per operation, its start time.
  std::vector<double> start;

  double makespan(llvm::ArrayRef<ProblemOperation> operations) const;
};

/// The synthesis problem of one pipeline step.
class PipelineProblem {
public:
  /// Builds the problem `spec` states, or explains why it cannot be built
  /// (a shape out of range, a cost that is not a finite number >= 0).
  static llvm::Expected<PipelineProblem> build(const SynthesisSpec &spec);

  const SynthesisSpec &getSpec() const { return spec; }
  llvm::ArrayRef<ProblemOperation> getOperations() const { return operations; }
  llvm::ArrayRef<ProblemDependence> getDependences() const {
    return dependences;
  }
  /// Indices into getDependences() of the dependences into / out of `op`.
  llvm::ArrayRef<uint32_t> getPredecessors(uint32_t op) const {
    return predecessors.of(op);
  }
  llvm::ArrayRef<uint32_t> getSuccessors(uint32_t op) const {
    return successors.of(op);
  }
  /// The dependences out of `op`, in getSuccessors' order, with their
  /// targets' ranks (one array: the list scheduler reads them for every
  /// operation it places).
  llvm::ArrayRef<ProblemOutEdge> getOutgoing(uint32_t op) const {
    return llvm::ArrayRef<ProblemOutEdge>(outgoing).slice(
        successors.offsets[op],
        successors.offsets[op + 1] - successors.offsets[op]);
  }
  int32_t getNumRanks() const { return spec.pp; }
  int32_t getNumStages() const { return spec.numStages(); }
  int32_t getNumMicrobatches() const { return spec.microbatches; }
  /// The stages rank `rank` holds, in stage order.
  llvm::ArrayRef<int32_t> getStagesOf(int32_t rank) const {
    return stagesOfRank[rank];
  }
  int32_t getRankOf(int32_t stage) const { return stageRank[stage]; }
  /// The backward kinds: {BackwardInput, BackwardWeight} or {Backward}.
  llvm::ArrayRef<ActionKind> getBackwardKinds() const;
  /// The operation `kind` of (stage, microbatch): build() adds them stage
  /// by stage, microbatch by microbatch, F then the backward kinds, so the
  /// index is arithmetic (the solvers look operations up for every choice
  /// they make; a table of them missed the cache).
  uint32_t getOperation(ActionKind kind, int32_t stage, int32_t mb) const {
    return static_cast<uint32_t>(
        (size_t(stage) * spec.microbatches + mb) *
            (spec.splitBackward ? 3 : 2) +
        kindSlot(kind));
  }
  /// Whether memory is counted in bytes (else in activation units).
  bool inBytes() const { return bytes; }
  /// Memory a rank holds before its first operation (its parameters).
  int64_t getStaticMemory(int32_t rank) const { return staticMemory[rank]; }
  /// The limit of `rank`, if any.
  std::optional<int64_t> getMemoryLimit(int32_t rank) const;
  /// One microbatch's activations of all the stages rank `rank` holds.
  int64_t getMicrobatchActivations(int32_t rank) const;
  /// Whether rank `rank` holds a stage at or below a global-batch aux
  /// head, so that every schedule holds every microbatch's activations of
  /// it at once (between the head's last forward and its first backward).
  bool holdsEveryMicrobatch(int32_t rank) const;
  /// The least limit under which rank `rank` can run any schedule: its
  /// parameters plus one microbatch's activations of all its stages (every
  /// forward of a microbatch precedes its first backward, so some point of
  /// every schedule holds them all; running microbatches one at a time
  /// holds no more), and the transfers' buffers beside them
  /// (getTransferHeadroom). On a rank at or below a global-batch aux head,
  /// every microbatch's activations: before the head's first backward the
  /// rank has run all its forwards and none of its backwards, and running
  /// all forwards, then each microbatch's backwards in turn (GPipe's
  /// order) holds no more, its buffers at each point as one microbatch's
  /// are beside the activations of the others.
  int64_t getSmallestFeasibleLimit(int32_t rank) const;
  /// What rank `rank`'s transfers add to that least limit when stages
  /// declare sizes (the verifier counts them then): over the rank's stages
  /// in order, the most of a received activation beside the microbatch's
  /// activations of the stages before, a received gradient beside those up
  /// to this stage, and an input gradient waiting for its send beside those
  /// before and the weight gradient's residue, less those activations;
  /// 0 in activation units.
  int64_t getTransferHeadroom(int32_t rank) const;
  /// An amount of memory in the units the user wrote limits in: bytes, or
  /// stage activations ("3.5").
  std::string formatMemory(int64_t amount) const;

  /// Succeeds when every rank's limit is at least its smallest feasible
  /// limit; otherwise names the first rank short of it and the least limit
  /// that would do.
  llvm::Error checkMemory() const;

  /// Succeeds when `solution` is a schedule of this problem: every
  /// operation once on its own rank, each starting at a finite time >= 0
  /// after the one before it on its rank has ended and after every
  /// dependence's latency, and every rank's memory along its order within
  /// its limit.
  llvm::Error verify(const ProblemSolution &solution) const;

  /// The earliest start times of the operations when each rank runs them
  /// in `order` (an active schedule, as lib/Simulate times it); fails when
  /// the order waits in a cycle or leaves an operation out.
  llvm::Expected<ProblemSolution>
  timeOrder(std::vector<std::vector<uint32_t>> order) const;

  /// The orders of `schedule`'s compute actions as operations of this
  /// problem (a schedule of the same pipeline with the same backward
  /// kinds, one rank per pipeline rank); fails naming an action that is
  /// not one of its operations or on another rank.
  llvm::Expected<std::vector<std::vector<uint32_t>>>
  orderOf(const Schedule &schedule) const;

  /// The peak memory of each rank along `solution`'s order.
  std::vector<int64_t> peakMemory(const ProblemSolution &solution) const;

  /// The solution as a plain schedule: one program per rank, its
  /// operations in order, the stage costs attached.
  Schedule toSchedule(const ProblemSolution &solution) const;

private:
  PipelineProblem() = default;
  /// The place of a compute kind among a (stage, microbatch)'s operations:
  /// F, then I or B, then W.
  static size_t kindSlot(ActionKind kind) {
    if (kind == ActionKind::Forward)
      return 0;
    return kind == ActionKind::Backward || kind == ActionKind::BackwardInput
               ? 1
               : 2;
  }
  uint32_t addOperation(ActionKind kind, int32_t stage, int32_t mb);
  void addDependence(uint32_t from, uint32_t to);

  /// Per operation, dependence indices in one array (the solvers walk them
  /// for every operation placed or timed: one array, not one per
  /// operation, keeps them in cache).
  struct Adjacency {
    /// Those of `op` are items[offsets[op]] to items[offsets[op + 1] - 1].
    std::vector<uint32_t> offsets, items;
    llvm::ArrayRef<uint32_t> of(uint32_t op) const {
      return llvm::ArrayRef<uint32_t>(items).slice(
          offsets[op], offsets[op + 1] - offsets[op]);
    }
  };
  /// The dependences into (`incoming`) or out of each operation, in the
  /// order they were added.
  Adjacency adjacency(bool incoming) const;

  SynthesisSpec spec;
  bool bytes = false;
  std::vector<ProblemOperation> operations;
  std::vector<ProblemDependence> dependences;
  Adjacency predecessors, successors;
  /// The dependences in `successors`' order (getOutgoing).
  std::vector<ProblemOutEdge> outgoing;
  std::vector<int32_t> stageRank;
  std::vector<std::vector<int32_t>> stagesOfRank;
  std::vector<int64_t> staticMemory;
};

} // namespace sched

#endif // LIB_SYNTHESIS_PIPELINEPROBLEM_H
