// RUN: sched-opt %s --sched-lower-no-pp | FileCheck %s
// RUN: sched-opt %s --sched-lower-no-pp | sched-opt | FileCheck %s

// One stage, gradient accumulation: each microbatch's forward, then its
// backward; one activation alive at a time.
// CHECK-LABEL: sched.schedule @p stages 1 microbatches 3 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.backward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.backward stage 0 mb 2
// CHECK-NEXT: }
// CHECK-NEXT: }
sched.pipeline @p pp 1 microbatches 3 {}
