// RUN: sched-opt %s -split-input-file --sched-lower-looped-bfs | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-looped-bfs | sched-opt -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP

// P = 2, v = 3, M = 2: rank r holds stages r, r + 2, r + 4 and runs both
// microbatches of a chunk before the next chunk, forwards up the chunks,
// backwards down.
// CHECK-LABEL: sched.schedule @p2v3m2 stages 6 microbatches 2 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 1
// CHECK-NEXT: sched.forward stage 4 mb 0
// CHECK-NEXT: sched.forward stage 4 mb 1
// CHECK-NEXT: sched.backward stage 4 mb 0
// CHECK-NEXT: sched.backward stage 4 mb 1
// CHECK-NEXT: sched.backward stage 2 mb 0
// CHECK-NEXT: sched.backward stage 2 mb 1
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: sched.backward stage 0 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 1
// CHECK-NEXT: sched.forward stage 5 mb 0
// CHECK-NEXT: sched.forward stage 5 mb 1
// CHECK-NEXT: sched.backward stage 5 mb 0
// CHECK-NEXT: sched.backward stage 5 mb 1
// CHECK-NEXT: sched.backward stage 3 mb 0
// CHECK-NEXT: sched.backward stage 3 mb 1
// CHECK-NEXT: sched.backward stage 1 mb 0
// CHECK-NEXT: sched.backward stage 1 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: }
// ROUNDTRIP-LABEL: sched.schedule @p2v3m2
sched.pipeline @p2v3m2 pp 2 vpp 3 microbatches 2 {}

// -----

// M < P works: the last rank of P = 3 with one microbatch.
// CHECK-LABEL: sched.schedule @p3v2m1 stages 6 microbatches 1 {
// CHECK:      sched.rank 2 {
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.forward stage 5 mb 0
// CHECK-NEXT: sched.backward stage 5 mb 0
// CHECK-NEXT: sched.backward stage 2 mb 0
// CHECK-NEXT: }
sched.pipeline @p3v2m1 pp 3 vpp 2 microbatches 1 {}
