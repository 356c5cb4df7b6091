// Hand-written training steps that keep the rules of docs/verifier.md
// section 5 verify.
// RUN: sched-opt %s -split-input-file --sched-verify | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-verify="proof=search" | FileCheck %s

// A stage may be gathered and freed more than once, with its compute inside
// each window; it may also stay gathered at the end of the step.
// CHECK-LABEL: sched.schedule @two_windows
sched.schedule @two_windows stages 2 microbatches 1 {
  sched.rank 0 {
    sched.unshard stage 0
    sched.unshard stage 1
    sched.forward stage 0 mb 0
    sched.reshard stage 0
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.unshard stage 0
    sched.backward stage 0 mb 0
    sched.reshard stage 0
    sched.reduce_grad stage 0
    sched.reduce_grad stage 1
    sched.optimizer_step
  }
}

// -----

// Without an optimizer step the schedule is a pipeline fragment: declared
// collectives it does not issue yet are not missing.
// CHECK-LABEL: sched.schedule @fragment
sched.schedule @fragment stages 1 microbatches 2 {
  sched.group @dp members [[0]]
  sched.collective all_gather @dp bytes 32 when before_forward
  sched.collective reduce_scatter @dp bytes 64 when after_backward
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
}

// -----

// Two declarations told apart by stage and bytes; a collective no
// declaration names is not constrained.
// CHECK-LABEL: sched.schedule @declarations
sched.schedule @declarations stages 2 microbatches 1 {
  sched.group @dp members [[0]]
  sched.collective all_gather @dp bytes 32 when before_forward stage 0
  sched.collective all_gather @dp bytes 16 when after_forward stage 0
  sched.collective all_gather @dp bytes 48 when before_backward stage 1
  sched.rank 0 {
    sched.all_gather @dp stage 0 bytes 32
    sched.forward stage 0 mb 0
    sched.all_gather @dp stage 0 bytes 16
    sched.forward stage 1 mb 0
    sched.all_gather @dp stage 1 bytes 48
    sched.backward stage 1 mb 0
    sched.backward stage 0 mb 0
    sched.all_reduce @dp stage 1 bytes 8
    sched.optimizer_step
  }
}
