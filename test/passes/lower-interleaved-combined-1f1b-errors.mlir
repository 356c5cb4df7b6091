// RUN: sched-opt %s -split-input-file --sched-lower-interleaved-combined-1f1b -verify-diagnostics

// Megatron-Core runs combined 1F1B with a pipeline only inside its
// interleaved schedule: at least two chunks per rank.
// expected-error @below {{cannot be lowered: strategy interleaved-combined-1f1b needs vpp >= 2, got vpp = 1}}
sched.pipeline @p pp 4 microbatches 8 {}

// -----

// expected-error @below {{cannot be lowered: strategy interleaved-combined-1f1b needs loop placement (stage s on rank s mod pp), got placement v}}
sched.pipeline @p pp 2 vpp 2 microbatches 4 placement v {}

// -----

// Rank 1 runs the backward of stage 3 microbatch 0 beside the forward of
// microbatch 1 there, before the forward of microbatch 3 reaches the head.
sched.pipeline @p pp 2 vpp 2 microbatches 4 {
  // expected-error @below {{the interleaved-combined-1f1b order breaks the global_batch aux head at stage 3: backward of stage 3 microbatch 0 runs before the forward of microbatch 3 reaches aux head at stage 3 (scope global_batch)}}
  sched.aux_head stage 3 scope global_batch
}
