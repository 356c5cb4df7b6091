// RUN: sched-opt %s --sched-lower-gpipe | FileCheck %s
// RUN: sched-opt %s --sched-lower-gpipe | sched-opt | FileCheck %s

// Every forward, then every backward, microbatches in order, on every rank.
// CHECK-LABEL: sched.schedule @gpipe stages 2 microbatches 3 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: sched.backward stage 0 mb 1
// CHECK-NEXT: sched.backward stage 0 mb 2
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.forward stage 1 mb 2
// CHECK-NEXT: sched.backward stage 1 mb 0
// CHECK-NEXT: sched.backward stage 1 mb 1
// CHECK-NEXT: sched.backward stage 1 mb 2
// CHECK-NEXT: }
sched.pipeline @gpipe pp 2 microbatches 3 {}

// Ops other than pipelines are left alone.
// CHECK: sched.schedule @untouched stages 1 microbatches 1 {
sched.schedule @untouched stages 1 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
}
