// RUN: sched-opt %s -split-input-file --sched-verify -verify-diagnostics | FileCheck %s

// The bias update of an aux-free head: one all-reduce on its group, after
// the stage's last backward and before the optimizer step. Verified.
// CHECK-LABEL: sched.schedule @bias_ok
sched.schedule @bias_ok stages 2 microbatches 2 {
  sched.group @dp members [[0], [1]]
  sched.aux_head stage 1 scope aux_free bias @dp bytes 1024
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
    sched.optimizer_step
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
    sched.all_reduce @dp stage 1 bytes 1024
    sched.optimizer_step
  }
}

// -----

// A whole step (it has optimizer steps) without the bias update.
sched.schedule @bias_missing stages 2 microbatches 2 {
  sched.group @dp members [[0], [1]]
  // expected-note @below {{aux head at stage 1 declared here}}
  sched.aux_head stage 1 scope aux_free bias @dp bytes 1024
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 1
    sched.optimizer_step
  }
  // expected-error @below {{[missing] rank 1 has no bias update for aux head at stage 1 (scope aux_free): all_reduce @dp (stage 1) after the stage's last backward and before the optimizer step}}
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
    sched.optimizer_step
  }
}

// -----

// The bias update before the stage's last backward.
sched.schedule @bias_early stages 2 microbatches 2 {
  sched.group @dp members [[0], [1]]
  sched.aux_head stage 1 scope aux_free bias @dp bytes 1024
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
    sched.optimizer_step
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    // expected-error @below {{[dependency] all_reduce @dp (stage 1) runs before B(stage 1, mb 1) on rank 1, but is the bias update of aux head at stage 1 (scope aux_free), which must come after every backward and weight gradient of the stage}}
    sched.all_reduce @dp stage 1 bytes 1024
    sched.forward stage 1 mb 1
    // expected-note @below {{B(stage 1, mb 1) runs here, later}}
    sched.backward stage 1 mb 1
    sched.optimizer_step
  }
}

// -----

// The bias update after the optimizer step.
sched.schedule @bias_late stages 2 microbatches 2 {
  sched.group @dp members [[0], [1]]
  sched.aux_head stage 1 scope aux_free bias @dp bytes 1024
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
    sched.optimizer_step
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
    // expected-error @below {{[dependency] OPTIMIZER_STEP runs before all_reduce @dp (stage 1) on rank 1, but the optimizer step ends the training step: every action of the rank must come before it}}
    sched.optimizer_step
    // expected-note @below {{all_reduce @dp (stage 1) runs here, later}}
    sched.all_reduce @dp stage 1 bytes 1024
  }
}

// -----

// Two bias updates for one head.
sched.schedule @bias_twice stages 2 microbatches 2 {
  sched.group @dp members [[0], [1]]
  // expected-note @below {{aux head at stage 1 declared here}}
  sched.aux_head stage 1 scope aux_free bias @dp bytes 1024
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
    sched.optimizer_step
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
    // expected-note @below {{the first one is here}}
    sched.all_reduce @dp stage 1 bytes 1024
    // expected-error @below {{[duplicate] all_reduce @dp (stage 1) is issued 2 times on rank 1, but the bias update of aux head at stage 1 (scope aux_free) runs once per step}}
    sched.all_reduce @dp stage 1 bytes 1024
    sched.optimizer_step
  }
}

// -----

// Two heads whose bias updates share a group spanning both ranks: each
// rank issues the update of its own stage, so the members disagree.
sched.schedule @bias_order stages 2 microbatches 1 {
  sched.group @ep members [[0, 1]]
  sched.aux_head stage 0 scope aux_free bias @ep bytes 64
  sched.aux_head stage 1 scope aux_free bias @ep bytes 64
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    // expected-note @below {{rank 0 issues this one}}
    sched.all_reduce @ep stage 0 bytes 64
    sched.optimizer_step
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    // expected-error @below {{[collective] collective #0 on group @ep: rank 1 issues all_reduce @ep (stage 1) of 64 bytes, but rank 0 issues all_reduce @ep (stage 0) of 64 bytes; members of a group must issue the same collectives (kind, stage and bytes) in the same order}}
    sched.all_reduce @ep stage 1 bytes 64
    sched.optimizer_step
  }
}
