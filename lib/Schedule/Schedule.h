//===- Schedule.h - plain in-memory pipeline schedules ----------*- C++ -*-===//
//
// The schedule as plain data: ranks holding ordered actions. Generators,
// the simulator, the verifier core and the importers work on this form,
// without a pass manager; lib/ScheduleIR converts it to and from the sched
// dialect.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SCHEDULE_SCHEDULE_H
#define LIB_SCHEDULE_SCHEDULE_H

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace sched {

/// What an action does.
enum class ActionKind : uint8_t {
  Forward,
  Backward,
  BackwardInput,
  BackwardWeight,
  Send,
  Recv,
  AllReduce,
  ReduceScatter,
  AllGather,
  AllToAll,
  Barrier,
  Unshard,
  Reshard,
  ReduceGrad,
  OptimizerStep,
};

/// True for F, B, I and W.
bool isCompute(ActionKind kind);

/// What a layerwise overlap (Action::layerwise) holds above what was live
/// before it, at its fullest: its forward allocates `forward` bytes in
/// `forwardLayers` equal pieces while its backward frees `backward` bytes
/// in `backwardLayers`, a piece of each in turn, forward first (Megatron-
/// Core's combined 1F1B pairs forward layer i with backward layer n-1-i).
/// The peak follows the first forward piece or the last one:
/// max(forward / nF, forward - min(nF - 1, nB) * backward / nB), rounded
/// up; with one layer each it is the whole forward, as in an overlap that
/// is not layerwise. Layer counts under 1 count as 1.
int64_t layerwiseOverlapPeak(int64_t forward, int64_t forwardLayers,
                             int64_t backward, int64_t backwardLayers);

struct Action;
/// The backward (B or I) the forward at `i` of a layerwise overlap runs
/// beside, or `i` when it is not such a forward or has no backward there.
size_t layerwisePartner(const std::vector<Action> &actions, size_t i);

/// One step of a rank's program.
struct Action {
  ActionKind kind = ActionKind::Forward;
  /// Send/recv: true when the transfer carries a gradient (backward
  /// direction), false for an activation.
  bool gradient = false;
  /// Send/recv: true for a shape exchange, the small message that carries
  /// the shape of the (stage, microbatch, direction) tensor ahead of the
  /// tensor itself (Megatron-LM's `_communicate_shapes` under
  /// `variable_seq_lengths`); false for the tensor's data.
  bool shape = false;
  /// Members of an overlap that runs its forward and its backward
  /// interleaved layer by layer (Megatron-Core's combined 1F1B), not as
  /// two whole passes: the forward allocates its activations a layer at a
  /// time while the backward frees the other microbatch's (StageCost::layers
  /// pieces each).
  bool layerwise = false;
  /// The stream of its rank the action runs on: an index into
  /// Schedule::streams, 0 (the rank's one stream) when the schedule names
  /// none.
  uint16_t stream = 0;
  int32_t stage = -1;
  int32_t microbatch = -1;
  /// Send/recv: index of the peer in Schedule::ranks.
  int32_t peer = -1;
  /// Collectives: index into Schedule::groups.
  int32_t group = -1;
  /// Send/recv: the group whose member set (holding both ranks) is the
  /// communicator the transfer runs on, or -1 for the rank pair's own
  /// (eager) one.
  int32_t communicator = -1;
  /// Nonzero for members of a bundle (a p2p group or an overlap):
  /// consecutive actions of a rank with the same bundle run together.
  uint32_t bundle = 0;
  /// Bytes moved by a transfer or collective, -1 when unknown.
  int64_t bytes = -1;
  /// Collectives: the index into Schedule::collectives of the declaration
  /// the action fulfils, when the plan names it (a runtime plan's
  /// instruction `declaration`); -1 when it names none, and the verifier
  /// reads the action as any declaration its kind and group fit.
  int32_t declaration = -1;
  /// Events (indices into Schedule::events), -1 for none: the action's
  /// stream waits for the event's latest record issued before it (CUDA's
  /// cudaStreamWaitEvent) before the action runs, and the event is
  /// recorded on the stream after the action.
  int16_t waitEvent = -1;
  int16_t recordEvent = -1;

  static Action compute(ActionKind kind, int32_t stage, int32_t microbatch) {
    Action action;
    action.kind = kind;
    action.stage = stage;
    action.microbatch = microbatch;
    return action;
  }
};

/// Members of a bundle run together: within each bundle of `actions`,
/// orders the entries of `perAction` (one per action) whose net change
/// `net` allocates (is positive) before the others, in the listed order
/// otherwise. The verifier's memory walk and the simulator's count a
/// bundle so.
template <typename T, typename Net>
void allocationsFirst(const std::vector<Action> &actions,
                      std::vector<T> &perAction, Net net) {
  for (size_t i = 0; i < actions.size();) {
    size_t end = i + 1;
    while (actions[i].bundle != 0 && end < actions.size() &&
           actions[end].bundle == actions[i].bundle)
      ++end;
    if (end - i > 1)
      std::stable_partition(perAction.begin() + i, perAction.begin() + end,
                            [&](const T &x) { return net(x) > 0; });
    i = end;
  }
}

/// The program of one pipeline rank.
struct RankProgram {
  int64_t id = 0;
  std::vector<Action> actions;
};

/// Time and memory of one stage. Defaults describe a unit stage.
struct StageCost {
  double forward = 1;
  double backwardInput = 1;
  double backwardWeight = 1;
  int64_t activation = 0;
  int64_t weightGrad = 0;
  int64_t parameters = 0;
  /// The layers the stage holds: the pieces a layerwise overlap
  /// (Action::layerwise) allocates and frees its activations in.
  int64_t layers = 1;
  /// Bytes of the activation one microbatch sends to the next stage (and
  /// of the gradient that comes back), -1 when unknown.
  int64_t output = -1;

  /// Field by field, so a field added above is compared too.
  friend bool operator==(const StageCost &a, const StageCost &b) {
    return std::tie(a.forward, a.backwardInput, a.backwardWeight, a.activation,
                    a.weightGrad, a.parameters, a.layers, a.output) ==
           std::tie(b.forward, b.backwardInput, b.backwardWeight, b.activation,
                    b.weightGrad, b.parameters, b.layers, b.output);
  }
};

/// A process group: disjoint member sets of rank indices.
struct ProcessGroup {
  std::string name;
  std::vector<std::vector<int32_t>> members;
  /// Each member set is one communicator. Eager ones exist before the step
  /// (created at start-up, in one order on every process: PyTorch's
  /// new_group); a lazy one is created at its first use on each member,
  /// and creation is a collective of the set's members (NCCL's
  /// ncclCommInitRank blocks until every member called it).
  bool lazy = false;
};

/// When a declared collective runs, relative to the work of its stage.
enum class CollectiveTiming : uint8_t {
  BeforeForward,
  AfterForward,
  BeforeBackward,
  AfterBackward,
  Step,
};

/// A `sched.collective` declaration: a collective the training step needs,
/// which `sched-insert-collectives` turns into actions.
struct CollectiveDeclaration {
  /// AllReduce, ReduceScatter, AllGather, AllToAll or Barrier.
  ActionKind kind = ActionKind::AllReduce;
  /// Index into Schedule::groups.
  int32_t group = -1;
  int64_t bytes = 0;
  CollectiveTiming when = CollectiveTiming::Step;
  /// The stage it serves, or -1 for every stage.
  int32_t stage = -1;
};

/// What an auxiliary loss is computed over (the `sched.aux_head` scopes).
enum class AuxLossScope : uint8_t { Microbatch, Sequence, GlobalBatch, AuxFree };

/// The spelling of a scope in the IR and on the command line:
/// microbatch, sequence, global_batch, aux_free.
llvm::StringRef auxLossScopeName(AuxLossScope scope);

/// An auxiliary loss attached at a stage (`sched.aux_head`).
struct AuxLossHead {
  int32_t stage = 0;
  AuxLossScope scope = AuxLossScope::Microbatch;
  /// An aux_free head's bias update: an all-reduce of `biasBytes` on
  /// Schedule::groups[biasGroup] after the stage's last backward and before
  /// the optimizer step; -1 when it declares none.
  int32_t biasGroup = -1;
  int64_t biasBytes = -1;
};

/// A whole schedule of one training step.
struct Schedule {
  int32_t numStages = 0;
  int32_t numMicrobatches = 0;
  /// Pipeline replicas (DualPipe runs two). The stages split into
  /// `replicas` chains of consecutive stages and the microbatches into as
  /// many contiguous blocks; block k runs through chain k only, from its
  /// first stage (no producer) to its last (the loss). Both counts are
  /// multiples of `replicas` (see replicaError).
  int32_t replicas = 1;
  std::vector<RankProgram> ranks;
  /// Per-stage costs and sizes; empty means unit costs, no sizes.
  std::vector<StageCost> stageCosts;
  std::vector<ProcessGroup> groups;
  /// The data-parallel replicas the schedule runs as (its sched.mesh's `dp`
  /// axis, or `dp_replicate` x `dp_shard`); FSDP shards the parameters of
  /// a stage the schedule UNSHARDs over them. 1 when undeclared.
  int64_t dataParallel = 1;
  /// Hybrid sharding: the replicas of one shard group (the `dp_shard`
  /// axis; lib/Schedule/DataParallelAxes.h); 0 without it.
  int64_t shardGroupSize = 0;
  /// The collectives the step declares (the verifier checks that the
  /// actions issue them when and as often as declared).
  std::vector<CollectiveDeclaration> collectives;
  /// The auxiliary losses of the step (a global-batch one orders the
  /// forwards and backwards of its stage; an aux-free one may have a bias
  /// update).
  std::vector<AuxLossHead> auxHeads;
  /// True when the schedule is one whole training step whatever it holds
  /// (a runtime plan; `sched.schedule ... whole_step`). A schedule that
  /// holds an optimizer step is one too; any other is a pipeline fragment.
  bool wholeStep = false;
  /// Seconds per unit of the stage times: 1 when they are seconds (a plan
  /// the planner wrote: `sched.time_unit = "s"`), 0 when they are abstract
  /// units (a hand-written or generated schedule).
  double secondsPerUnit = 0;
  /// The time one transfer between ranks takes (`sched.transfer_time`), in
  /// the stage times' unit; negative when the schedule declares none.
  double transferTime = -1;
  /// The names of the streams actions run on, each a stream of every rank
  /// that uses it; empty when the schedule names none (every action on its
  /// rank's one stream, index 0).
  std::vector<std::string> streams;
  /// The names of the CUDA events actions wait for and record, each an
  /// event of every rank that uses it.
  std::vector<std::string> events;

  /// The name of stream `index` ("default" when the schedule names none).
  llvm::StringRef streamName(uint16_t index) const {
    return index < streams.size() ? llvm::StringRef(streams[index])
                                  : llvm::StringRef("default");
  }
  /// Whether any action runs on a named stream or uses an event.
  bool hasStreams() const { return !streams.empty() || !events.empty(); }

  /// Total number of actions over all ranks.
  size_t numActions() const;

  /// Why `replicas` is not at least 1 dividing the stage and microbatch
  /// counts, or "" when it is. The queries below assume it is.
  std::string replicaError() const;
  int32_t stagesPerReplica() const { return numStages / replicas; }
  int32_t microbatchesPerReplica() const { return numMicrobatches / replicas; }
  int32_t replicaOfStage(int32_t stage) const {
    return stage / stagesPerReplica();
  }
  int32_t replicaOfMicrobatch(int32_t mb) const {
    return mb / microbatchesPerReplica();
  }
  /// Whether microbatch `mb` runs through `stage`.
  bool visits(int32_t stage, int32_t mb) const {
    return replicas == 1 || replicaOfStage(stage) == replicaOfMicrobatch(mb);
  }
  /// The first microbatch that runs through `stage`; the next
  /// microbatchesPerReplica() ones do too.
  int32_t firstMicrobatchOf(int32_t stage) const {
    return replicaOfStage(stage) * microbatchesPerReplica();
  }
  /// Whether `stage` starts its chain (its forward has no producer).
  bool isFirstStage(int32_t stage) const {
    return stage % stagesPerReplica() == 0;
  }
  /// Whether `stage` ends its chain (it computes the loss).
  bool isLastStage(int32_t stage) const {
    return stage % stagesPerReplica() == stagesPerReplica() - 1;
  }
};

/// Where stages sit on ranks.
enum class StagePlacement : uint8_t { Loop, V };

/// The rank that holds `stage` among `pp` ranks under `placement`.
int32_t rankOfStage(int32_t stage, int32_t pp, StagePlacement placement);

/// The bytes of a shape exchange that states none: three int64
/// dimensions, as Megatron-LM's `_communicate_shapes` sends them.
constexpr int64_t kShapeExchangeBytes = 24;

/// A short label of a compute action for grids and messages: "F3", or
/// "2F3" with the stage when `withStage` is set (PyTorch's CSV spelling).
std::string actionLabel(const Action &action, bool withStage);

/// A short description of an action for diagnostics: "F(stage 1, mb 3)",
/// "SEND_F(stage 0, mb 2) to rank 1", "all_reduce @dp (stage 0)".
std::string describeAction(const Schedule &schedule, const Action &action);

/// The single-letter name of a compute kind: F, B, I or W.
llvm::StringRef computeLetter(ActionKind kind);

} // namespace sched

#endif // LIB_SCHEDULE_SCHEDULE_H
