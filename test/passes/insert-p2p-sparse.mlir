// A few actions in a huge index space: sched-insert-p2p sizes its tables by
// the actions a schedule holds, not by stages x microbatches. Two stages of
// 67,108,864 microbatches would take 2 GiB of flat tables (8 bytes per slot,
// two tables); one microbatch runs, so the pass fits well within 1 GB of
// address space.
// RUN: %vmem-limit 1000000 sched-opt %s --sched-insert-p2p | FileCheck %s

// CHECK-LABEL: sched.schedule @sparse
// CHECK:       sched.rank 0 {
// CHECK-NEXT:    sched.forward stage 0 mb 67108863
// CHECK-NEXT:    sched.send forward stage 0 mb 67108863 to 1
// CHECK-NEXT:    sched.recv backward stage 0 mb 67108863 from 1
// CHECK-NEXT:    sched.backward stage 0 mb 67108863
// CHECK:       sched.rank 1 {
// CHECK-NEXT:    sched.recv forward stage 1 mb 67108863 from 0
// CHECK-NEXT:    sched.forward stage 1 mb 67108863
// CHECK-NEXT:    sched.backward stage 1 mb 67108863
// CHECK-NEXT:    sched.send backward stage 1 mb 67108863 to 0
sched.schedule @sparse stages 2 microbatches 67108864 {
  sched.rank 0 {
    sched.forward stage 0 mb 67108863
    sched.backward stage 0 mb 67108863
  }
  sched.rank 1 {
    sched.forward stage 1 mb 67108863
    sched.backward stage 1 mb 67108863
  }
}
