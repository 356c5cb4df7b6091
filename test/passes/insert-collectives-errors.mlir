// RUN: sched-opt %s -split-input-file --sched-insert-collectives -verify-diagnostics

sched.schedule @s stages 2 microbatches 1 {
  sched.group @tp members [[0]]
  // expected-error @below {{asks rank 1 (it holds stage 1) to issue a collective on group @tp, which has no member set holding that rank}}
  sched.collective all_reduce @tp bytes 8 when after_forward
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
}

// -----

// Two replicas: the pass sums their gradients on a new group @replicas,
// which must not clash with a declared symbol.
// expected-error @below {{has several pipeline replicas, whose gradients sched-insert-collectives sums on a new group @replicas, but a symbol of that name exists}}
sched.schedule @clash stages 4 microbatches 2 replicas 2 {
  sched.group @replicas members [[0], [1]]
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

// Replica copies on irregular ranks: rank 0 holds model stages 0 and 1,
// rank 1 only model stage 1 (stage 1), rank 2 only model stage 0 (stage 2).
// Ranks sharing a model stage would all-reduce different sequences.
// expected-error @below {{cannot sum the gradients of its pipeline replicas: ranks 0 and 1 share a model stage but do not hold the same model stages, so no one all-reduce order suits both}}
sched.schedule @irregular stages 4 microbatches 2 replicas 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 3 mb 1
    sched.backward stage 3 mb 1
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
  sched.rank 2 {
    sched.forward stage 2 mb 1
    sched.backward stage 2 mb 1
  }
}

// -----

// No ranks: nothing to sum, no group.
sched.schedule @empty stages 2 microbatches 2 replicas 2 {
}
