// Each kind of violation, at the offending action.
// RUN: sched-opt %s -split-input-file --sched-verify -verify-diagnostics
// RUN: sched-opt %s -split-input-file --sched-verify="proof=search" -verify-diagnostics

// A dropped action: rank 1 never runs the backward of microbatch 1.
sched.schedule @dropped stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
  // expected-error @below {{[missing] missing backward of stage 1 mb 1 (a B, or an I and a W)}}
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.forward stage 1 mb 1
  }
}

// -----

// A duplicated action.
sched.schedule @duplicated stages 2 microbatches 1 {
  sched.rank 0 {
    // expected-note @below {{the first copy is here}}
    sched.forward stage 0 mb 0
    // expected-error @below {{[duplicate] duplicate F(stage 0, mb 0): it already runs on rank 0}}
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
}

// -----

// A wrong microbatch: rank 1 runs microbatch 0 twice and never 1.
sched.schedule @wrong_microbatch stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
  // expected-error @below {{[missing] missing forward F(stage 1, mb 1)}}
  sched.rank 1 {
    // expected-note @below {{the first copy is here}}
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    // expected-error @below {{[duplicate] duplicate F(stage 1, mb 0)}}
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 1
  }
}

// -----

// An action moved to another rank.
sched.schedule @moved stages 2 microbatches 2 {
  sched.rank 0 {
    // expected-note @below {{the stage first runs here}}
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    // expected-error @below {{[placement] stage 0 runs on two ranks: F(stage 0, mb 1) is on rank 1, but the stage already runs on rank 0}}
    sched.forward stage 0 mb 1
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
  }
}

// -----

// A B before its F (swapped on one rank).
sched.schedule @backward_first stages 1 microbatches 1 {
  sched.rank 0 {
    // expected-error @below {{[dependency] B(stage 0, mb 0) runs before F(stage 0, mb 0) on rank 0, but needs its output}}
    sched.backward stage 0 mb 0
    // expected-note @below {{F(stage 0, mb 0) runs here, later}}
    sched.forward stage 0 mb 0
  }
}

// -----

// A W before its I.
sched.schedule @weight_first stages 1 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    // expected-error @below {{[dependency] W(stage 0, mb 0) runs before I(stage 0, mb 0) on rank 0, but needs its output}}
    sched.backward_weight stage 0 mb 0
    // expected-note @below {{I(stage 0, mb 0) runs here, later}}
    sched.backward_input stage 0 mb 0
  }
}

// -----

// A send of an activation before the forward that computes it.
sched.schedule @early_send stages 2 microbatches 1 {
  sched.rank 0 {
    // expected-error @below {{[dependency] SEND_F(stage 0, mb 0) to rank 1 runs before F(stage 0, mb 0) on rank 0, but needs its output}}
    sched.send forward stage 0 mb 0 to 1
    // expected-note @below {{runs here, later}}
    sched.forward stage 0 mb 0
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

// A missing receive in a lowered schedule: the activation would travel by
// magic.
sched.schedule @missing_recv stages 2 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    // expected-error @below {{[transfer] SEND_F(stage 0, mb 0) to rank 1 has no matching receive: it is the 1st send from rank 0 to rank 1, which posts only 0 receive(s) from rank 0}}
    sched.send forward stage 0 mb 0 to 1
    sched.recv backward stage 0 mb 0 from 1
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    // expected-error @below {{[transfer] F(stage 1, mb 0) needs the activation of stage 0 from rank 0, but no recv brings it}}
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.send backward stage 1 mb 0 to 0
  }
}

// -----

// Collectives in a different order on two members of a group.
sched.schedule @collective_order stages 2 microbatches 1 {
  sched.group @world members [[0, 1]]
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    // expected-note @below {{rank 0 issues this one}}
    sched.all_reduce @world stage 0
    sched.barrier @world
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    // expected-error @below {{[collective] collective #0 on group @world: rank 1 issues barrier @world, but rank 0 issues all_reduce @world (stage 0)}}
    sched.barrier @world
    sched.all_reduce @world stage 0
  }
}

// -----

// A global-batch aux loss at stage 1 forbids 1F1B's early backward there.
sched.schedule @aux_global_batch stages 2 microbatches 2 {
  // expected-note @below {{aux head at stage 1 declared here}}
  sched.aux_head stage 1 scope global_batch
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    // expected-error @below {{[dependency] backward of stage 1 microbatch 0 runs before the forward of microbatch 1 reaches aux head at stage 1 (scope global_batch) on rank 1: a global-batch loss needs every forward of its stage before any backward there}}
    sched.backward stage 1 mb 0
    // expected-note @below {{F(stage 1, mb 1) runs here, later}}
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
  }
}

// -----

// A memory peak one unit over the limit: 1F1B on 2 ranks keeps 2
// activations alive on rank 0.
sched.schedule @memory stages 2 microbatches 2 memory_limit 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    // expected-error @below {{[memory] memory on rank 0 reaches 2 activation units here, over the limit of 1 activation units (its peak is 2 activation units)}}
    // expected-note @below {{live here: 2 activation units = 2 whole activations 2 activation units [(0,0) (0,1)]}}
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
  }
}

// -----

// Rank 1 starts with microbatch 1: a cycle of waits across both ranks.
sched.schedule @cross_rank_deadlock stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    // expected-note @below {{rank 0: B(stage 0, mb 0) waits for B(stage 1, mb 0) on rank 1: it needs that action's output}}
    sched.backward stage 0 mb 0
    // expected-error @below {{[deadlock] deadlock under rendezvous semantics: a cycle of 5 waits across 2 rank(s)}}
    // expected-note @below {{rank 0: F(stage 0, mb 1) waits for B(stage 0, mb 0) on rank 0: it comes next in the rank's program}}
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    // expected-note @below {{rank 1: F(stage 1, mb 1) waits for F(stage 0, mb 1) on rank 0: it needs that action's output}}
    sched.forward stage 1 mb 1
    // expected-note @below {{rank 1: F(stage 1, mb 0) waits for F(stage 1, mb 1) on rank 1: it comes next in the rank's program}}
    sched.forward stage 1 mb 0
    // expected-note @below {{rank 1: B(stage 1, mb 0) waits for F(stage 1, mb 0) on rank 1: it comes next in the rank's program}}
    sched.backward stage 1 mb 0
    sched.backward stage 1 mb 1
  }
}

// -----

// Send, then receive, on both ranks: under rendezvous each send waits for
// a receive the peer has not reached.
sched.schedule @rendezvous_deadlock stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.send forward stage 0 mb 0 to 1
    sched.forward stage 0 mb 1
    // expected-note @below {{rank 0: SEND_F(stage 0, mb 1) to rank 1 completes together with RECV_F(stage 1, mb 1) from rank 0 on rank 1}}
    sched.send forward stage 0 mb 1 to 1
    // expected-error @below {{[deadlock] deadlock under rendezvous semantics: a cycle of 2 waits across 2 rank(s)}}
    // expected-note @below {{rank 0: RECV_B(stage 0, mb 0) from rank 1 waits for SEND_F(stage 0, mb 1) to rank 1 on rank 0}}
    sched.recv backward stage 0 mb 0 from 1
    sched.backward stage 0 mb 0
    sched.recv backward stage 0 mb 1 from 1
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    sched.recv forward stage 1 mb 0 from 0
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    // expected-note @below {{rank 1: SEND_B(stage 1, mb 0) to rank 0 completes together with RECV_B(stage 0, mb 0) from rank 1 on rank 0}}
    sched.send backward stage 1 mb 0 to 0
    // expected-note @below {{rank 1: RECV_F(stage 1, mb 1) from rank 0 waits for SEND_B(stage 1, mb 0) to rank 0 on rank 1}}
    sched.recv forward stage 1 mb 1 from 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
    sched.send backward stage 1 mb 1 to 0
  }
}
