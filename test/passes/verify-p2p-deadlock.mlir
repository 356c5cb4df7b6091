// Real rendezvous deadlocks stay deadlocks with group semantics: rank 0
// sends microbatch 1 before it receives microbatch 0's gradient, while
// rank 1 sends that gradient before it receives microbatch 1; lone
// operations block until matched. Grouping the two operations on either
// side (verify-p2p-groups.mlir) removes the cycle.
// RUN: not sched-opt %s --sched-verify="p2p=rendezvous" -o /dev/null 2>&1 | FileCheck %s
// RUN: sched-opt %s --sched-verify="p2p=eager" -o /dev/null
// CHECK: error: [deadlock] deadlock under rendezvous semantics: a cycle of 2 waits across 2 rank(s)
// CHECK-NEXT: sched.recv backward stage 0 mb 0 from 1
// CHECK: note: rank 0: RECV_B(stage 0, mb 0) from rank 1 waits for SEND_F(stage 0, mb 1) to rank 1 on rank 0: it comes next in the rank's program
// CHECK: note: rank 1: RECV_F(stage 1, mb 1) from rank 0 waits for SEND_B(stage 1, mb 0) to rank 0 on rank 1: it comes next in the rank's program

sched.schedule @lone stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.send forward stage 0 mb 0 to 1
    sched.forward stage 0 mb 1
    sched.send forward stage 0 mb 1 to 1
    sched.recv backward stage 0 mb 0 from 1
    sched.backward stage 0 mb 0
    sched.recv backward stage 0 mb 1 from 1
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    sched.recv forward stage 1 mb 0 from 0
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.send backward stage 1 mb 0 to 0
    sched.recv forward stage 1 mb 1 from 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
    sched.send backward stage 1 mb 1 to 0
  }
}
