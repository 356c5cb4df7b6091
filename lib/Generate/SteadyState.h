//===- SteadyState.h - fewer microbatches, the same states ------*- C++ -*-===//
//
// The planner measures a candidate's peak memory on the activation states
// its order passes through (lib/Planner/Evaluation.h, MemoryWalk); in the
// steady phase of most strategies those states repeat, so a shorter order
// of the same strategy passes through the same ones.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_GENERATE_STEADYSTATE_H
#define LIB_GENERATE_STEADYSTATE_H

#include "lib/Generate/Strategy.h"

#include <map>
#include <optional>
#include <utility>

namespace sched {

/// A microbatch count M' <= M (shape.microbatches) such that each rank of
/// `strategy`'s schedule at M runs the compute actions (stage and kind) of
/// its schedule at M' with a block of them that leaves the rank's
/// activations as it found them run again, right after itself, a whole
/// number of times. Each rank then passes through the same activation
/// states (per stage: microbatches forwarded and not yet backward, and
/// those waiting for their W), first reached in the same order, and holds
/// the same stages and layerwise pairs. M itself where no such argument
/// applies (GPipe and looped BFS, whose states grow with M, and below each
/// strategy's warm-up and cool-down). docs/limits.md ("The memory walk") gives
/// each strategy's argument; SteadyStateTest checks them against the whole
/// schedule. Keeps the periods it finds by playing a list schedule (ZB-V,
/// V-Half, DualPipeV), one per strategy and pp.
class SteadyStateMicrobatches {
public:
  /// M' for `shape`, which passes checkPipelineShape; at least `atLeast`
  /// where M' < M.
  int32_t operator()(Strategy strategy, const PipelineShape &shape,
                     int32_t atLeast = 0);

  /// Whether each rank of `strategy` runs a fixed number of compute
  /// actions per microbatch (all but DualPipe and DualPipeV, which mix
  /// full and split backwards): M / M' times those at M'.
  static bool actionsPerMicrobatchFixed(Strategy strategy) {
    return strategy != Strategy::DualPipe && strategy != Strategy::DualPipeV;
  }

  /// A list schedule's repeat: from `floor` microbatches on, `length`
  /// more repeat a block.
  struct Period {
    int32_t floor;
    int32_t length;
  };

private:
  /// (strategy, pp) -> the list schedule's repeat, if any.
  std::map<std::pair<Strategy, int32_t>, std::optional<Period>> periods;
};

/// Compute actions of one kind on one stage, one after another.
struct ComputeRun {
  ActionKind kind;
  int32_t stage;
  int32_t count;
};

/// GPipe's and looped BFS's compute actions per rank as runs (every
/// forward of a stage, then of the next; then every backward, the last
/// stage first): 2 vpp runs per rank however many microbatches. Every
/// action of theirs leaves its rank in a state it was not in before (the
/// live stage-microbatches go up by one, then down), so the planner walks
/// them action by action. None for the other strategies.
std::optional<std::vector<std::vector<ComputeRun>>>
computeRuns(Strategy strategy, const PipelineShape &shape);

} // namespace sched

#endif // LIB_GENERATE_STEADYSTATE_H
