// The verifier on schedules of two pipeline replicas (DualPipe's shape,
// P = 2, M = 2): replica A is stages 0-1 on ranks 0, 1 and runs mb 0;
// replica B is stages 2-3 on ranks 1, 0 and runs mb 1. Completeness, first
// and last stages and transfers are per replica; a global-batch aux head
// couples the copies of its stage in both replicas.
// RUN: sched-opt %s -split-input-file --sched-verify -verify-diagnostics
// RUN: sched-opt %s -split-input-file --sched-verify="proof=search" -verify-diagnostics

// Microbatch 1 belongs to replica B; stage 0 is replica A's.
sched.schedule @wrong_replica stages 4 microbatches 2 replicas 2 {
  sched.rank 0 {
    // expected-error @below {{[placement] F(stage 0, mb 1): mb 1 belongs to another pipeline replica; stage 0 runs mbs 0..0}}
    sched.forward stage 0 mb 1
    sched.forward stage 3 mb 1
    sched.backward stage 3 mb 1
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 2 mb 1
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.backward stage 2 mb 1
  }
}

// -----

// Replica B's last stage never runs the backward of its microbatch.
sched.schedule @missing stages 4 microbatches 2 replicas 2 {
  // expected-error @below {{[missing] missing backward of stage 3 mb 1 (a B, or an I and a W)}}
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 3 mb 1
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 2 mb 1
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.backward stage 2 mb 1
  }
}

// -----

// Stage 1 ends replica A: its activation goes nowhere, though stage 2
// exists (it starts replica B).
sched.schedule @past_the_end stages 4 microbatches 2 replicas 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.send forward stage 0 mb 0 to 1
    sched.recv forward stage 3 mb 1 from 1
    sched.forward stage 3 mb 1
    sched.backward stage 3 mb 1
    sched.send backward stage 3 mb 1 to 1
    sched.recv backward stage 0 mb 0 from 1
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 2 mb 1
    sched.send forward stage 2 mb 1 to 0
    sched.recv forward stage 1 mb 0 from 0
    sched.forward stage 1 mb 0
    // expected-error @below {{[transfer] SEND_F(stage 1, mb 0) to rank 0 has no peer: stage 1 is the last stage of its pipeline}}
    sched.send forward stage 1 mb 0 to 0
    sched.backward stage 1 mb 0
    sched.send backward stage 1 mb 0 to 0
    sched.recv backward stage 2 mb 1 from 0
    sched.backward stage 2 mb 1
  }
}

// -----

// A global-batch aux loss at model stage 1 (stage 1 in replica A, stage 3
// in replica B): B(3, mb 1) must wait for every forward of both copies,
// F(1, mb 0) on rank 1 included, which needs F(0, mb 0), which rank 0 only
// runs after B(3, mb 1). Each replica alone would be fine.
sched.schedule @aux_across_replicas stages 4 microbatches 2 replicas 2 {
  sched.aux_head stage 1 scope global_batch
  sched.aux_head stage 3 scope global_batch
  sched.rank 0 {
    sched.forward stage 3 mb 1
    // expected-note @below {{rank 0: B(stage 3, mb 1) waits for F(stage 1, mb 0) on rank 1: a global-batch aux head needs every forward of its stage before any backward there}}
    sched.backward stage 3 mb 1
    // expected-error @below {{[deadlock] deadlock under rendezvous semantics: a cycle of 3 waits across 2 rank(s)}}
    // expected-note @below {{rank 0: F(stage 0, mb 0) waits for B(stage 3, mb 1) on rank 0: it comes next in the rank's program}}
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 2 mb 1
    // expected-note @below {{rank 1: F(stage 1, mb 0) waits for F(stage 0, mb 0) on rank 0: it needs that action's output}}
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.backward stage 2 mb 1
  }
}

// -----

// The same with rank 0's forwards first: every forward of model stage 1
// (F(1, mb 0), F(3, mb 1)) runs before its backwards. Verified.
sched.schedule @aux_ok stages 4 microbatches 2 replicas 2 {
  sched.aux_head stage 1 scope global_batch
  sched.aux_head stage 3 scope global_batch
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 3 mb 1
    sched.backward stage 3 mb 1
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 2 mb 1
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.backward stage 2 mb 1
  }
}

// -----

// The replicas' gradient sum: ranks 0 and 1 both hold model stages 0 (stage
// 0 in A, stage 2 in B) and 1 (stage 1 in A, stage 3 in B). Copies match by
// model stage, so rank 1 must all-reduce stage 2 first.
sched.schedule @replica_sum_order stages 4 microbatches 2 replicas 2 {
  sched.group @replicas members [[0, 1]]
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 3 mb 1
    sched.backward stage 3 mb 1
    sched.backward stage 0 mb 0
    // expected-note @below {{rank 0 issues this one}}
    sched.all_reduce @replicas stage 0
    sched.all_reduce @replicas stage 3
  }
  sched.rank 1 {
    sched.forward stage 2 mb 1
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.backward stage 2 mb 1
    // expected-error @below {{[collective] collective #0 on group @replicas: rank 1 issues all_reduce @replicas (stage 1), but rank 0 issues all_reduce @replicas (stage 0); members of a group must issue the same collectives (kind, stage and bytes) in the same order}}
    sched.all_reduce @replicas stage 1
    sched.all_reduce @replicas stage 2
  }
}

// -----

// In model-stage order it verifies.
sched.schedule @replica_sum stages 4 microbatches 2 replicas 2 {
  sched.group @replicas members [[0, 1]]
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 3 mb 1
    sched.backward stage 3 mb 1
    sched.backward stage 0 mb 0
    sched.all_reduce @replicas stage 0
    sched.all_reduce @replicas stage 3
  }
  sched.rank 1 {
    sched.forward stage 2 mb 1
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.backward stage 2 mb 1
    sched.all_reduce @replicas stage 2
    sched.all_reduce @replicas stage 1
  }
}
