// RUN: sched-opt %s -split-input-file --sched-lower-combined-1f1b -verify-diagnostics

// Combined 1F1B without a pipeline takes one stage on one rank; with
// pp > 1 it is interleaved-combined-1f1b.
// expected-error @below {{cannot be lowered: strategy combined-1f1b needs pp = 1 (a single pipeline stage), got pp = 2}}
sched.pipeline @p pp 2 microbatches 4 {}

// -----

// expected-error @below {{cannot be lowered: strategy combined-1f1b needs vpp = 1 (one stage per rank), got vpp = 2}}
sched.pipeline @p pp 1 vpp 2 microbatches 4 {}

// -----

// The backward of microbatch 0 runs beside the forward of microbatch 1,
// before the last forward: a global-batch aux head cannot be kept.
sched.pipeline @p pp 1 microbatches 3 {
  // expected-error @below {{the combined-1f1b order breaks the global_batch aux head at stage 0: backward of stage 0 microbatch 0 runs before the forward of microbatch 2 reaches aux head at stage 0 (scope global_batch)}}
  sched.aux_head stage 0 scope global_batch
}
