// RUN: sched-translate --export-text-grid %s | FileCheck %s --match-full-lines --strict-whitespace

// A hand-written 2-rank 1F1B with split backward on rank 0: the grid shows
// each action one step after its input is ready.
//      CHECK:schedule @hand
// CHECK-NEXT:       0  1  2  3  4  5
// CHECK-NEXT:rank 0 F0 F1 .  I0 W0 B1
// CHECK-NEXT:rank 1 .  F0 B0 F1 B1 .
sched.schedule @hand stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward_input stage 0 mb 0
    sched.backward_weight stage 0 mb 0
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
  }
}
