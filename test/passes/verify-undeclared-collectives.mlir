// RUN: sched-opt %s -split-input-file --sched-verify -verify-diagnostics
// RUN: sched-opt %s -split-input-file --sched-verify="p2p=eager" -verify-diagnostics

// Collectives that carry a stage but no declaration names are checked as
// what their kind and group say they are, where that is unambiguous: a
// reduce_scatter is FSDP's gradient reduction (after the stage's last
// gradient), an all_gather over @dp gathers the stage's parameters (before
// its first compute), an all_reduce joining every pipeline copy of a stage
// is DualPipe's replica sum; the member set must hold the stage's rank.
// Any other is reported as unchecked, a warning at the op
// (docs/verifier.md, section 5).

// On time, they verify.
sched.schedule @on_time stages 1 microbatches 2 {
  sched.group @dp members [[0]]
  sched.rank 0 {
    sched.all_gather @dp stage 0 bytes 64
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
    sched.reduce_scatter @dp stage 0 bytes 64
    sched.optimizer_step
  }
}

// -----

sched.schedule @reduce_scatter_early stages 1 microbatches 2 {
  sched.group @dp members [[0]]
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    // expected-error @below {{[dependency] reduce_scatter @dp (stage 0) runs before B(stage 0, mb 1) on rank 0, but reduces the gradients of stage 0, which must come after every backward and weight gradient of the stage}}
    sched.reduce_scatter @dp stage 0 bytes 64
    // expected-note @below {{B(stage 0, mb 1) runs here, later}}
    sched.backward stage 0 mb 1
    sched.optimizer_step
  }
}

// -----

sched.schedule @gather_late stages 1 microbatches 1 {
  sched.group @dp members [[0]]
  sched.rank 0 {
    // expected-error @below {{[dependency] F(stage 0, mb 0) runs before all_gather @dp (stage 0) on rank 0, but needs its parameters gathered}}
    sched.forward stage 0 mb 0
    // expected-note @below {{all_gather @dp (stage 0) runs here, later}}
    sched.all_gather @dp stage 0 bytes 64
    sched.backward stage 0 mb 0
    sched.optimizer_step
  }
}

// -----

// Rank 1's member set of @dp holds rank 1 alone: no member holds stage 0.
sched.schedule @not_its_stage stages 2 microbatches 1 {
  sched.group @dp members [[0], [1]]
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    sched.optimizer_step
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    // expected-error @below {{[placement] reduce_scatter @dp (stage 0) is issued by rank 1, but stage 0 runs on rank 0, which is not in the member set of @dp that rank 1 belongs to: no member holds the stage's data}}
    sched.reduce_scatter @dp stage 0 bytes 64
    sched.optimizer_step
  }
}

// -----

// An undeclared replica sum before the copy's last backward.
sched.schedule @replica_sum_early stages 2 microbatches 2 replicas 2 {
  sched.group @replicas members [[0, 1]]
  sched.rank 0 {
    sched.forward stage 0 mb 0
    // expected-error @below {{[dependency] all_reduce @replicas (stage 0) runs before B(stage 0, mb 0) on rank 0, but reduces the gradients of stage 0}}
    sched.all_reduce @replicas stage 0
    // expected-note @below {{B(stage 0, mb 0) runs here, later}}
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
    sched.all_reduce @replicas stage 1
  }
}

// -----

// Its kind and group say nothing: unchecked, and said so.
sched.schedule @unchecked stages 1 microbatches 1 {
  sched.group @ep members [[0]]
  sched.rank 0 {
    sched.forward stage 0 mb 0
    // expected-warning @below {{unchecked: all_to_all @ep (stage 0) on rank 0 carries stage 0, but no declaration (sched.collective) says when it runs, and its kind and group do not say what it does; declare it to have it checked}}
    sched.all_to_all @ep stage 0 bytes 64
    sched.backward stage 0 mb 0
    sched.optimizer_step
  }
}

// -----

// Declared, it is checked and no warning is given.
sched.schedule @declared stages 1 microbatches 1 {
  sched.group @ep members [[0]]
  sched.collective all_to_all @ep bytes 64 when before_backward
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.all_to_all @ep stage 0 bytes 64
    sched.backward stage 0 mb 0
    sched.optimizer_step
  }
}
