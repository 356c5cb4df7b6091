// RUN: sched-opt %s -split-input-file --sched-lower-1f1b --sched-insert-p2p | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-1f1b --sched-insert-p2p="group=false" | FileCheck %s --check-prefix=NOGROUP
// RUN: sched-opt %s -split-input-file --sched-lower-1f1b --sched-insert-p2p --sched-verify
// RUN: sched-opt %s -split-input-file --sched-lower-1f1b --sched-insert-p2p | sched-opt -split-input-file --sched-verify="p2p=eager"

// 1F1B, P = 2, M = 2, unit costs (B = 2). Rank 1 ends F(1,0) at 2 and runs
// B(1,0) over [2, 4], F(1,1) over [4, 5], B(1,1) over [5, 7]; rank 0 ends
// F(0,0) at 1, F(0,1) at 2, then waits for the gradients at 4 and 7. Each
// transfer sits at its producer's end: rank 1 receives F(0,1)'s activation
// at 2, before its B(1,0) starts at 2. No two transfers are adjacent on
// both ranks, so nothing is grouped.
// CHECK-LABEL: sched.schedule @p2m2 stages 2 microbatches 2 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.send forward stage 0 mb 0 to 1
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.send forward stage 0 mb 1 to 1
// CHECK-NEXT: sched.recv backward stage 0 mb 0 from 1
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: sched.recv backward stage 0 mb 1 from 1
// CHECK-NEXT: sched.backward stage 0 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.recv forward stage 1 mb 0 from 0
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.recv forward stage 1 mb 1 from 0
// CHECK-NEXT: sched.backward stage 1 mb 0
// CHECK-NEXT: sched.send backward stage 1 mb 0 to 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.backward stage 1 mb 1
// CHECK-NEXT: sched.send backward stage 1 mb 1 to 0
// CHECK-NEXT: }
// CHECK-NEXT: }
sched.pipeline @p2m2 pp 2 microbatches 2 {}

// -----

// 1F1B, P = 2, M = 3. Rank 0 ends F(0,2) at 7 when rank 1 ends B(1,1):
// both transfers are due at 7 and adjacent on both ranks, so each rank
// issues them as one group (Megatron's send-forward-receive-backward on
// rank 0, send-backward-receive-forward on rank 1).
// CHECK-LABEL: sched.schedule @p2m3 stages 2 microbatches 3 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.send forward stage 0 mb 0 to 1
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.send forward stage 0 mb 1 to 1
// CHECK-NEXT: sched.recv backward stage 0 mb 0 from 1
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.p2p_group {
// CHECK-NEXT: sched.send forward stage 0 mb 2 to 1
// CHECK-NEXT: sched.recv backward stage 0 mb 1 from 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.backward stage 0 mb 1
// CHECK-NEXT: sched.recv backward stage 0 mb 2 from 1
// CHECK-NEXT: sched.backward stage 0 mb 2
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.recv forward stage 1 mb 0 from 0
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.recv forward stage 1 mb 1 from 0
// CHECK-NEXT: sched.backward stage 1 mb 0
// CHECK-NEXT: sched.send backward stage 1 mb 0 to 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.backward stage 1 mb 1
// CHECK-NEXT: sched.p2p_group {
// CHECK-NEXT: sched.recv forward stage 1 mb 2 from 0
// CHECK-NEXT: sched.send backward stage 1 mb 1 to 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.forward stage 1 mb 2
// CHECK-NEXT: sched.backward stage 1 mb 2
// CHECK-NEXT: sched.send backward stage 1 mb 2 to 0
// CHECK-NEXT: }
// CHECK-NEXT: }
// With group=false the same transfers stay apart.
// NOGROUP-LABEL: sched.schedule @p2m3
// NOGROUP-NOT: sched.p2p_group
// NOGROUP: sched.forward stage 0 mb 2
// NOGROUP-NEXT: sched.send forward stage 0 mb 2 to 1
// NOGROUP-NEXT: sched.recv backward stage 0 mb 1 from 1
// NOGROUP-NEXT: sched.backward stage 0 mb 1
// NOGROUP-NOT: sched.p2p_group
sched.pipeline @p2m3 pp 2 microbatches 3 {}

// -----

// One rank: every input is local, nothing to transfer.
// CHECK-LABEL: sched.schedule @single stages 1 microbatches 2 {
// CHECK-NOT: sched.send
// CHECK-NOT: sched.recv
// CHECK: }
sched.pipeline @single pp 1 microbatches 2 {}

// -----

// Hand-written compute-only schedules pass through too: the overlap stays
// whole, the receive of B(1,0)'s gradient comes before it, the send of
// F(0,1)'s activation after it. Stages sit on ranks by their actions (here
// rank ids 4 and 7). The order is the list simulation's: rank 7 ends
// B(1,0) at 4, rank 4 runs the overlap over [4, 7].
// CHECK-LABEL: sched.schedule @hand stages 2 microbatches 2 {
// CHECK-NEXT: sched.rank 4 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.send forward stage 0 mb 0 to 7
// CHECK-NEXT: sched.recv backward stage 0 mb 0 from 7
// CHECK-NEXT: sched.overlap {
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.send forward stage 0 mb 1 to 7
// CHECK-NEXT: sched.recv backward stage 0 mb 1 from 7
// CHECK-NEXT: sched.backward stage 0 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 7 {
// CHECK-NEXT: sched.recv forward stage 1 mb 0 from 4
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.backward stage 1 mb 0
// CHECK-NEXT: sched.send backward stage 1 mb 0 to 4
// CHECK-NEXT: sched.recv forward stage 1 mb 1 from 4
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.backward stage 1 mb 1
// CHECK-NEXT: sched.send backward stage 1 mb 1 to 4
// CHECK-NEXT: }
// CHECK-NEXT: }
sched.schedule @hand stages 2 microbatches 2 {
  sched.rank 4 {
    sched.forward stage 0 mb 0
    sched.overlap {
      sched.forward stage 0 mb 1
      sched.backward stage 0 mb 0
    }
    sched.backward stage 0 mb 1
  }
  sched.rank 7 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
  }
}
