//===- SchedOps.td - operations of the sched dialect -------*- tablegen -*-===//
//
// Specification ops (pipeline, stage, aux_head, group, collective) and
// schedule ops (schedule, rank and the actions a rank runs).
//
//===----------------------------------------------------------------------===//

#ifndef SCHED_OPS_TD
#define SCHED_OPS_TD

include "dialects/Sched/SchedDialect.td"
include "dialects/Sched/SchedEnums.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"

class Sched_Op<string mnemonic, list<Trait> traits = []>
    : Op<Sched_Dialect, mnemonic, traits>;

def NonNegativeI64Attr : ConfinedAttr<I64Attr, [IntNonNegative]>;
def PositiveI64Attr : ConfinedAttr<I64Attr, [IntPositive]>;

/// A rank id: 0 to 2^31 - 1 (`sched::kMaxRankId`), the range the plain
/// schedule and the runtimes index ranks with.
def RankIdAttr : ConfinedAttr<I64Attr, [IntNonNegative,
    AttrConstraint<CPred<"::llvm::cast<::mlir::IntegerAttr>($_self).getInt()"
                         " <= ::sched::kMaxRankId">,
                   "at most 2147483647">]> {
  let summary = "rank id from 0 to 2147483647 (2^31 - 1)";
}

//===----------------------------------------------------------------------===//
// Specification ops
//===----------------------------------------------------------------------===//

def Sched_PipelineOp : Sched_Op<"pipeline", [
    Symbol, SymbolTable, IsolatedFromAbove, NoTerminator, SingleBlock,
    NoRegionArguments]> {
  let summary = "a pipeline-parallel training step to be scheduled";
  let description = [{
    Declares `pp` pipeline ranks, `vpp` stages per rank (virtual pipeline;
    `pp * vpp` stages in all), the number of microbatches in one step and
    the placement of stages on ranks: `loop` puts stage `s` on rank
    `s mod pp`, `v` (with `vpp = 2`) puts stages `r` and `2 pp - 1 - r` on
    rank `r`. An optional `memory_limit` is the device memory in bytes.

    The body holds `sched.stage` declarations (none: every stage costs one
    unit and has no sizes; otherwise exactly one per stage), aux-loss heads,
    process groups and collectives. A lowering pass such as
    `sched-lower-1f1b` replaces the pipeline by a `sched.schedule`.

    ```mlir
    sched.pipeline @llama pp 2 microbatches 4 {
      sched.stage 0 layers 16 forward 1.0 backward_input 1.0
          backward_weight 1.0 activation 1024 weight_grad 512 parameters 4096
      sched.stage 1 layers 16 forward 1.0 backward_input 1.0
          backward_weight 1.0 activation 1024 weight_grad 512 parameters 4096
      sched.aux_head stage 1 scope global_batch
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       PositiveI64Attr:$pp,
                       DefaultValuedAttr<PositiveI64Attr, "1">:$vpp,
                       PositiveI64Attr:$microbatches,
                       DefaultValuedAttr<Sched_Placement,
                                         "::sched::Placement::Loop">:$placement,
                       OptionalAttr<NonNegativeI64Attr>:$memory_limit);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `pp` $pp (`vpp` $vpp^)? `microbatches` $microbatches
    (`placement` $placement^)? (`memory_limit` $memory_limit^)?
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of pipeline stages, pp * vpp.
    int64_t getNumStages() {
      return static_cast<int64_t>(getPp() * getVpp());
    }
  }];
}

def Sched_StageOp : Sched_Op<"stage",
    [ParentOneOf<["PipelineOp", "ScheduleOp"]>]> {
  let summary = "the cost and memory of one pipeline stage";
  let description = [{
    One stage `index` of the enclosing pipeline or schedule: how many
    layers it holds, the time of its forward pass and of the two halves of
    its backward pass (input gradient `I`, weight gradient `W`; a full
    backward `B` costs `I + W`), the bytes of activations one microbatch
    keeps alive from F until its backward, the part of those
    (`weight_grad`) that the weight gradient still needs after `I`, and the
    bytes of its parameters. The optional `output` is the bytes of the
    activation one microbatch sends to the next stage (the gradient that
    comes back has the same size): `sched-insert-p2p` puts it on the
    transfers, and the verifier's memory walk counts receive buffers with
    it.

    ```mlir
    sched.stage 0 layers 8 forward 1.0 backward_input 1.0
        backward_weight 1.0 activation 1024 weight_grad 512 parameters 4096
        output 64
    ```
  }];
  let arguments = (ins NonNegativeI64Attr:$index,
                       NonNegativeI64Attr:$layers,
                       F64Attr:$forward,
                       F64Attr:$backward_input,
                       F64Attr:$backward_weight,
                       NonNegativeI64Attr:$activation,
                       NonNegativeI64Attr:$weight_grad,
                       NonNegativeI64Attr:$parameters,
                       OptionalAttr<NonNegativeI64Attr>:$output);
  let assemblyFormat = [{
    $index `layers` $layers `forward` $forward `backward_input` $backward_input
    `backward_weight` $backward_weight `activation` $activation
    `weight_grad` $weight_grad `parameters` $parameters
    (`output` $output^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Sched_AuxHeadOp : Sched_Op<"aux_head",
    [ParentOneOf<["PipelineOp", "ScheduleOp"]>]> {
  let summary = "an auxiliary loss attached at a stage";
  let description = [{
    An extra loss computed at `stage`. Its `scope` decides the dependencies
    it adds: `microbatch` and `sequence` are local to a microbatch (no new
    dependency); `global_batch` makes every backward of that stage wait for
    the forward of every microbatch there (GPipe order); `aux_free`
    (DeepSeek's bias balancing) adds no gradient dependency, only a bias
    update after the step.

    An `aux_free` head may name its bias update: `bias @group bytes N` is an
    all-reduce of the per-expert load (`N` bytes) on `group` that the rank
    holding the stage issues once, after the stage's last backward and
    before its optimizer step (`sched-insert-collectives` inserts it;
    `sched-verify` checks it). docs/aux-loss.md explains the scopes.

    ```mlir
    sched.aux_head stage 3 scope global_batch
    sched.aux_head stage 5 scope aux_free bias @dp bytes 1024
    ```
  }];
  let arguments = (ins NonNegativeI64Attr:$stage, Sched_AuxScope:$scope,
                       OptionalAttr<FlatSymbolRefAttr>:$bias_group,
                       OptionalAttr<NonNegativeI64Attr>:$bias_bytes);
  let assemblyFormat = [{
    `stage` $stage `scope` $scope
    (`bias` $bias_group^ `bytes` $bias_bytes)? attr-dict
  }];
  let hasVerifier = 1;
}

def Sched_GroupOp : Sched_Op<"group",
    [Symbol, ParentOneOf<["PipelineOp", "ScheduleOp"]>]> {
  let summary = "a named process group: disjoint sets of ranks";
  let description = [{
    Declares a named process group as a list of disjoint member sets of
    rank ids (0 to 2^31 - 1; in a schedule, each must have a `sched.rank`).
    A collective on the group issued by rank `r` runs among the set that
    holds `r`. A data-parallel group seen from one pipeline replica holds each
    rank alone (its peers are the same rank of the other replicas). The
    groups named `dp`, `dp_shard` and `dp_replicate` span the data-parallel
    replicas along those mesh axes (every replica, one shard group, one
    position of every shard group); `dp_shard` and `dp_replicate` need a
    `sched.mesh` beside them with that axis. Every other group stays within
    one replica.

    Each member set is one communicator (NCCL's, gloo's). By default they
    exist before the step (created eagerly at start-up, in one order on
    every process, as PyTorch's `new_group` requires); `lazy` creates each
    at its first use on each member, and creation is itself a collective
    of the set's members (`ncclCommInitRank` blocks until every member
    called it), so members that reach two lazy communicators in different
    orders hang. Transfers run on a group's communicator with `on @group`.

    ```mlir
    sched.group @tp members [[0, 1], [2, 3]]
    sched.group @dp members [[0], [1], [2], [3]]
    sched.group @pp01 members [[0, 1]] lazy
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, ArrayAttr:$members,
                       UnitAttr:$lazy);
  let assemblyFormat =
      "$sym_name `members` custom<RankSets>($members) (`lazy` $lazy^)? attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The member set that holds `rank`, or an empty array if none does.
    ::llvm::ArrayRef<int64_t> getMemberSet(int64_t rank);
  }];
}

def Sched_MeshOp : Sched_Op<"mesh",
    [ParentOneOf<["PipelineOp", "ScheduleOp"]>]> {
  let summary = "the device mesh: named parallel axes and their sizes";
  let description = [{
    The axes the job is laid out on, outermost first, each with its size:
    data (`dp`), tensor (`tp`), pipeline (`pp`), expert (`ep`), context
    (`cp`) parallelism, or any other name. The product is the number of
    devices. An axis named `pp` must match the enclosing pipeline's `pp`.
    Process groups (`sched.group`) name the member sets along an axis.
    Hybrid sharding (HSDP) names the data-parallel replicas as
    `dp_replicate` x `dp_shard` instead of `dp`: both, in that order
    (replica d is in shard group d div S at position d mod S, S the
    `dp_shard` size), never beside `dp`.

    ```mlir
    sched.mesh dp = 2, pp = 4, tp = 8
    sched.mesh dp_replicate = 2, dp_shard = 4, pp = 4
    ```
  }];
  let arguments = (ins StrArrayAttr:$axes, DenseI64ArrayAttr:$sizes);
  let assemblyFormat = "custom<MeshAxes>($axes, $sizes) attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The size of axis `name`, if the mesh has it.
    std::optional<int64_t> getAxisSize(::llvm::StringRef name);
  }];
}

def Sched_CollectiveOp : Sched_Op<"collective",
    [ParentOneOf<["PipelineOp", "ScheduleOp"]>]> {
  let summary = "a collective the training step needs";
  let description = [{
    Declares a collective of `kind` on `group`, moving `bytes` bytes per
    rank, run `when` relative to the work of `stage` (every stage if
    omitted). `sched-insert-collectives` turns declarations into actions.

    ```mlir
    sched.collective reduce_scatter @dp bytes 4096 when after_backward stage 0
    ```
  }];
  let arguments = (ins Sched_CollectiveKind:$kind,
                       FlatSymbolRefAttr:$group,
                       NonNegativeI64Attr:$bytes,
                       Sched_CollectiveWhen:$when,
                       OptionalAttr<NonNegativeI64Attr>:$stage);
  let assemblyFormat = [{
    $kind $group `bytes` $bytes `when` $when (`stage` $stage^)? attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Schedule ops
//===----------------------------------------------------------------------===//

def Sched_ScheduleOp : Sched_Op<"schedule", [
    Symbol, SymbolTable, IsolatedFromAbove, NoTerminator, SingleBlock,
    NoRegionArguments]> {
  let summary = "per-rank programs of one training step";
  let description = [{
    Holds one `sched.rank` per pipeline rank, each an ordered list of
    actions, plus the declarations the actions refer to (`sched.stage` for
    costs and sizes, `sched.group`, `sched.aux_head`). `stages` and
    `microbatches` bound the indices the actions may name. An optional
    `memory_limit` is the device memory (bytes, or stage-microbatch
    activation units when no stage declares sizes).

    `replicas` (default 1) runs that many copies of the pipeline side by
    side, as DualPipe does with two: the stages split into `replicas`
    chains of `stages / replicas` consecutive stages, the microbatches into
    as many contiguous blocks, and block k runs through chain k only (from
    its first stage, which has no producer, to its last, which computes the
    loss). Both counts must be multiples of `replicas`.

    `whole_step` marks the schedule as one whole training step (a runtime
    plan, which an engine runs as one step): every rank that holds a stage
    must end with its optimizer step and issue everything the step needs.
    Without it, a schedule with no `sched.optimizer_step` is a pipeline
    fragment (the output of a lowering pass).

    A 2-rank 1F1B schedule with 2 microbatches:

    ```mlir
    sched.schedule @one_f_one_b stages 2 microbatches 2 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.forward stage 0 mb 1
        sched.backward stage 0 mb 0
        sched.backward stage 0 mb 1
      }
      sched.rank 1 {
        sched.forward stage 1 mb 0
        sched.backward stage 1 mb 0
        sched.forward stage 1 mb 1
        sched.backward stage 1 mb 1
      }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       PositiveI64Attr:$stages,
                       PositiveI64Attr:$microbatches,
                       DefaultValuedAttr<PositiveI64Attr, "1">:$replicas,
                       OptionalAttr<NonNegativeI64Attr>:$memory_limit,
                       UnitAttr:$whole_step);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `stages` $stages `microbatches` $microbatches
    (`replicas` $replicas^)? (`memory_limit` $memory_limit^)?
    (`whole_step` $whole_step^)?
    attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
}

def Sched_RankOp : Sched_Op<"rank", [
    HasParent<"ScheduleOp">, NoTerminator, SingleBlock, NoRegionArguments]> {
  let summary = "the ordered actions of one pipeline rank";
  let description = [{
    The program of rank `id`: its actions run in the order written. Rank
    ids run from 0 to 2^31 - 1 and need not be contiguous; each appears
    once per schedule.

    ```mlir
    sched.rank 0 {
      sched.forward stage 0 mb 0
      sched.send forward stage 0 mb 0 to 1
      sched.recv backward stage 0 mb 0 from 1
      sched.backward stage 0 mb 0
    }
    ```
  }];
  let arguments = (ins RankIdAttr:$id);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$id attr-dict-with-keyword $body";
}

class Sched_ComputeOp<string mnemonic, string what>
    : Sched_Op<mnemonic, [ParentOneOf<["RankOp", "OverlapOp"]>]> {
  let summary = what # " of one stage on one microbatch";
  let description = [{
    Runs the }] # what # [{ of stage `stage` for microbatch `mb`.

    ```mlir
    sched.}] # mnemonic # [{ stage 1 mb 3
    ```
  }];
  let arguments = (ins NonNegativeI64Attr:$stage,
                       NonNegativeI64Attr:$microbatch);
  let assemblyFormat = "`stage` $stage `mb` $microbatch attr-dict";
  let hasVerifier = 1;
}

def Sched_ForwardOp : Sched_ComputeOp<"forward", "the forward pass">;
def Sched_BackwardOp : Sched_ComputeOp<"backward",
    "the full backward pass (input and weight gradients)">;
def Sched_BackwardInputOp : Sched_ComputeOp<"backward_input",
    "the input-gradient half of the backward pass">;
def Sched_BackwardWeightOp : Sched_ComputeOp<"backward_weight",
    "the weight-gradient half of the backward pass">;

def Sched_OverlapOp : Sched_Op<"overlap", [
    HasParent<"RankOp">, NoTerminator, SingleBlock, NoRegionArguments]> {
  let summary = "a forward and a backward run together";
  let description = [{
    Runs one `sched.forward` and one `sched.backward` (or
    `sched.backward_input`) of other microbatches at the same time, as
    DualPipe and Megatron-Core's combined 1F1B do to hide the communication
    of one (the MoE all-to-all) under the compute of the other.

    ```mlir
    sched.overlap {
      sched.forward stage 0 mb 4
      sched.backward stage 1 mb 0
    }
    ```

    With `layerwise` the two passes alternate layer by layer, as
    Megatron-Core's combined 1F1B runs them
    (`TransformerModelChunkSchedulePlan`: forward layer `i` beside backward
    layer `n-1-i`): the forward allocates its activations a layer at a
    time (its stage's `layers` pieces) while the backward frees the other
    microbatch's, so the pair holds one layer of the forward above what
    was live, not the whole forward. Without it the verifier counts the
    forward's activations whole before the backward frees any.
  }];
  let arguments = (ins UnitAttr:$layerwise);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "(`layerwise` $layerwise^)? attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

def Sched_SendOp : Sched_Op<"send",
    [ParentOneOf<["RankOp", "P2PGroupOp"]>]> {
  let summary = "send an activation or a gradient to another rank";
  let description = [{
    Sends the output of stage `stage` for microbatch `mb` to rank `to`:
    `forward` carries the activation to stage `stage + 1`, `backward` the
    input gradient to stage `stage - 1`. `bytes` is optional. `on @g`
    runs it on the communicator of group `g` (the member set holding both
    ranks); without it, on the rank pair's own, created before the step. The peer
    must have a `sched.rank` in the schedule; a send to the sending rank
    itself is well-formed, and the schedule verifier reports it.

    `shape` makes it a shape exchange: the small message (three int64
    dimensions, 24 bytes unless `bytes` says otherwise) that tells the
    receiver the shape of the tensor before the tensor itself travels, as
    Megatron-LM's `_communicate_shapes` does under `variable_seq_lengths`.
    It pairs with a shape receive, in issue order with the rank pair's
    other messages, and the data receive of the same tensor waits for it.

    ```mlir
    sched.send forward stage 0 mb 2 to 1
    sched.send shape forward stage 0 mb 3 to 1
    ```
  }];
  let arguments = (ins Sched_Direction:$direction,
                       NonNegativeI64Attr:$stage,
                       NonNegativeI64Attr:$microbatch,
                       RankIdAttr:$peer,
                       OptionalAttr<FlatSymbolRefAttr>:$comm,
                       OptionalAttr<NonNegativeI64Attr>:$bytes,
                       UnitAttr:$shape);
  let assemblyFormat = [{
    (`shape` $shape^)? $direction `stage` $stage `mb` $microbatch `to` $peer
    (`on` $comm^)? (`bytes` $bytes^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Sched_RecvOp : Sched_Op<"recv",
    [ParentOneOf<["RankOp", "P2PGroupOp"]>]> {
  let summary = "receive an activation or a gradient from another rank";
  let description = [{
    Receives the input of stage `stage` for microbatch `mb` from rank
    `from`: `forward` brings the activation of stage `stage - 1`,
    `backward` the gradient of stage `stage + 1`. The peer must have a
    `sched.rank` in the schedule. `shape` receives the shape of that
    tensor instead (see `sched.send`).

    ```mlir
    sched.recv forward stage 1 mb 2 from 0
    sched.recv shape forward stage 1 mb 3 from 0
    ```
  }];
  let arguments = (ins Sched_Direction:$direction,
                       NonNegativeI64Attr:$stage,
                       NonNegativeI64Attr:$microbatch,
                       RankIdAttr:$peer,
                       OptionalAttr<FlatSymbolRefAttr>:$comm,
                       OptionalAttr<NonNegativeI64Attr>:$bytes,
                       UnitAttr:$shape);
  let assemblyFormat = [{
    (`shape` $shape^)? $direction `stage` $stage `mb` $microbatch `from` $peer
    (`on` $comm^)? (`bytes` $bytes^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Sched_P2PGroupOp : Sched_Op<"p2p_group", [
    HasParent<"RankOp">, NoTerminator, SingleBlock, NoRegionArguments]> {
  let summary = "point-to-point transfers issued together";
  let description = [{
    Sends and receives issued as one group (NCCL group calls, PyTorch's
    `batch_isend_irecv`). Under rendezvous semantics the group completes
    once every member's peer has reached its matching transfer, which is how
    1F1B avoids the deadlock of a plain "send, then receive" order.

    ```mlir
    sched.p2p_group {
      sched.send forward stage 0 mb 3 to 1
      sched.recv backward stage 0 mb 1 from 1
    }
    ```
  }];
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

class Sched_CollectiveActionOp<string mnemonic, string what, string kind>
    : Sched_Op<mnemonic, [HasParent<"RankOp">]> {
  let summary = what # " on a process group";
  let description = [{
    Issues }] # what # [{ on the member set of `group` that holds this
    rank, optionally for the parameters of `stage` and moving `bytes` bytes.
    Every member of the set must issue the same collectives in the same
    order. An optional `declaration` names the `sched.collective` it
    fulfils (its index among the schedule's declarations, in order), which
    must explain it (kind and group, and stage and bytes where both name
    them): the verifier then reads it as that declaration only, instead of
    any that fits.

    ```mlir
    sched.}] # mnemonic # [{ @dp stage 0 bytes 4096
    sched.}] # mnemonic # [{ @dp stage 0 bytes 4096 declaration 1
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$group,
                       OptionalAttr<NonNegativeI64Attr>:$stage,
                       OptionalAttr<NonNegativeI64Attr>:$bytes,
                       OptionalAttr<NonNegativeI64Attr>:$declaration);
  let assemblyFormat = [{
    $group (`stage` $stage^)? (`bytes` $bytes^)?
    (`declaration` $declaration^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The collective this op issues.
    static ::sched::CollectiveKind getKind() {
      return ::sched::CollectiveKind::}] # kind # [{;
    }
  }];
}

def Sched_AllReduceOp
    : Sched_CollectiveActionOp<"all_reduce", "an all-reduce", "AllReduce">;
def Sched_ReduceScatterOp
    : Sched_CollectiveActionOp<"reduce_scatter", "a reduce-scatter",
                               "ReduceScatter">;
def Sched_AllGatherOp
    : Sched_CollectiveActionOp<"all_gather", "an all-gather", "AllGather">;
def Sched_AllToAllOp
    : Sched_CollectiveActionOp<"all_to_all", "an all-to-all", "AllToAll">;
def Sched_BarrierOp
    : Sched_CollectiveActionOp<"barrier", "a barrier", "Barrier">;

class Sched_StageActionOp<string mnemonic, string what>
    : Sched_Op<mnemonic, [HasParent<"RankOp">]> {
  let summary = what;
  let description = [{
    }] # what # [{ for stage `stage`.

    ```mlir
    sched.}] # mnemonic # [{ stage 0
    ```
  }];
  let arguments = (ins NonNegativeI64Attr:$stage);
  let assemblyFormat = "`stage` $stage attr-dict";
  let hasVerifier = 1;
}

def Sched_UnshardOp : Sched_StageActionOp<"unshard",
    "All-gather the sharded parameters (FSDP)">;
def Sched_ReshardOp : Sched_StageActionOp<"reshard",
    "Free the gathered parameters again (FSDP)">;
def Sched_ReduceGradOp : Sched_StageActionOp<"reduce_grad",
    "Reduce the gradients over the data-parallel group">;

def Sched_OptimizerStepOp : Sched_Op<"optimizer_step", [HasParent<"RankOp">]> {
  let summary = "the optimizer step that ends a training step";
  let description = [{
    Applies the optimizer to every stage of this rank.

    ```mlir
    sched.optimizer_step
    ```
  }];
  let assemblyFormat = "attr-dict";
}

#endif // SCHED_OPS_TD
