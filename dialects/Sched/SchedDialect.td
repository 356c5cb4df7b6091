//===- SchedDialect.td - the sched dialect definition ------*- tablegen -*-===//
//
// The dialect that carries pipeline specifications and per-rank schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SCHED_DIALECT_TD
#define SCHED_DIALECT_TD

include "mlir/IR/OpBase.td"

def Sched_Dialect : Dialect {
  let name = "sched";
  let cppNamespace = "::sched";
  let summary = "Distributed-training pipeline specifications and schedules";
  let description = [{
    The `sched` dialect describes a pipeline-parallel training step at two
    levels.

    *Specification* ops (`sched.pipeline`, `sched.stage`, `sched.aux_head`,
    `sched.group`, `sched.collective`) say what is to be scheduled: how many
    pipeline ranks and stages, how many microbatches, the cost and memory of
    each stage, the auxiliary-loss heads and the collectives.

    *Schedule* ops (`sched.schedule`, `sched.rank` and the actions inside it)
    say in which order each rank runs its work: forward, backward (full or
    split into input and weight gradients), point-to-point transfers,
    collectives, FSDP unshard/reshard and the optimizer step.

    Actions name their stage and microbatch as attributes, not as SSA
    values, so an order written by hand that is wrong still parses: the
    schedule verifier then reports it in the words of the domain.

    Streams and events are discardable attributes of an action: `{sched.stream
    = "comm"}` runs it on a named stream of its rank (without one, on the
    rank's one stream, "default"), `sched.wait_event = "e"` makes its stream
    wait for the latest record of event `e` issued before it, and
    `sched.record_event = "e"` records `e` on its stream after it (CUDA's
    cudaStreamWaitEvent and cudaEventRecord). The members of a p2p group or
    an overlap run on one stream.
  }];
  let hasOperationAttrVerify = 1;
}

#endif // SCHED_DIALECT_TD
