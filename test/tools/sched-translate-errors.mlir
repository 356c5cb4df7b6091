// RUN: not sched-translate --export-text-grid %s 2>&1 | FileCheck %s

// A forward that waits for itself: the grid cannot be drawn.
// CHECK: error: the schedule cannot run to the end: rank 0 is stuck at action 0 (0B0); rank 1 is stuck at action 0 (1F0);
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
