// RUN: sched-opt %s --sched-assign-buffers -verify-diagnostics

sched.schedule @backward_first stages 1 microbatches 1 {
  sched.rank 0 {
    // expected-error @below {{reads the activation of stage 0 mb 0, which no earlier forward on this rank allocated; run --sched-verify for the full diagnosis}}
    sched.backward stage 0 mb 0
    sched.forward stage 0 mb 0
  }
}
