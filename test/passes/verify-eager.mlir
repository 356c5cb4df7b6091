// A send-then-receive order that deadlocks under rendezvous (see
// verify-errors.mlir) is fine when sends never block.
// RUN: sched-opt %s --sched-verify="p2p=eager" | FileCheck %s
// RUN: sched-opt %s --sched-verify="p2p=eager proof=search" | FileCheck %s
// CHECK-LABEL: sched.schedule @eager_only
sched.schedule @eager_only stages 2 microbatches 2 {
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
