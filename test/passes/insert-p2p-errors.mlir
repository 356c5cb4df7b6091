// RUN: sched-opt %s -split-input-file --sched-insert-p2p -verify-diagnostics

// Running the pass twice: the schedule already has its transfers.
sched.schedule @twice stages 2 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    // expected-error @below {{cannot insert transfers: the schedule already has transfers (a send on rank 0); insert them into a compute-only schedule}}
    sched.send forward stage 0 mb 0 to 1
    sched.recv backward stage 0 mb 0 from 1
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.recv forward stage 1 mb 0 from 0
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.send backward stage 1 mb 0 to 0
  }
}

// -----

// A stage on two ranks: a transfer could not tell which one to talk to.
sched.schedule @split stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
  sched.rank 2 {
    // expected-error @below {{cannot insert transfers: stage 1 runs on rank 1 and rank 2; a transfer needs one rank per stage}}
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
  }
}

// -----

// Collectives come after transfers in the lowering pipeline.
sched.schedule @collective stages 1 microbatches 1 {
  sched.group @dp members [[0]]
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    // expected-error @below {{cannot insert transfers: transfers go into a compute-only schedule (F, B, I, W and overlaps), but rank 0 holds a collective}}
    sched.all_reduce @dp stage 0
  }
}

// -----

// The same forward twice.
sched.schedule @duplicate stages 2 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    // expected-error @below {{cannot insert transfers: duplicate F(stage 0, mb 0): it already runs on rank 0}}
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
}

// -----

// A B and an I for the same input gradient.
sched.schedule @both stages 1 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    // expected-error @below {{cannot insert transfers: I(stage 0, mb 0) and B(stage 0, mb 0) (on rank 0) both compute the input gradient of stage 0 mb 0}}
    sched.backward_input stage 0 mb 0
  }
}

// -----

// A cross-rank input nobody computes.
sched.schedule @orphan stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    // expected-error @below {{cannot insert transfers: F(stage 1, mb 1) needs the activation of stage 0, which no rank computes for mb 1}}
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
  }
}

// -----

// A compute order that cannot run: rank 0 waits for the gradient of
// microbatch 0 before it sends that microbatch's activation.
// expected-error @below {{cannot insert transfers: no order of transfers can make this compute order run: the schedule cannot run to the end: rank 0 is stuck at action 0 (0B0); rank 1 is stuck at action 0 (1F0)}}
sched.schedule @stuck stages 2 microbatches 1 {
  sched.rank 0 {
    sched.backward stage 0 mb 0
    sched.forward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
}

// -----

// The fuzzer's 4,096 stages x 65,536 microbatches with two actions: the
// pass used to size two tables by that index space (4 GB); now it sizes
// them by the actions and gets to the real problem at once.
sched.schedule @sparse stages 4096 microbatches 65536 {
  sched.rank 0 {
    sched.forward stage 0 mb 65535
    // expected-error @below {{cannot insert transfers: B(stage 0, mb 65535) needs the input gradient of stage 1, which no rank computes for mb 65535}}
    sched.backward stage 0 mb 65535
  }
}
