// RUN: sched-opt %s --sched-simulate -verify-diagnostics
// RUN: not sched-opt %s --sched-simulate="cost=f=1,q=2" 2>&1 | FileCheck %s --check-prefix=BADCOST
// BADCOST: error: sched-simulate: unknown --cost key 'q'; expected f, b, i, w or comm

// A schedule that cannot run: rank 1 waits for a forward rank 0 runs only
// after its backward, which waits for rank 1.
// expected-error @below {{the schedule cannot run to the end: rank 0 is stuck at action 0 (0B0); rank 1 is stuck at action 0 (1F0);}}
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
