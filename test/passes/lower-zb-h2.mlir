// RUN: sched-opt %s -split-input-file --sched-lower-zb-h2 | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-zb-h2 | sched-opt -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP

// P = 3, M = 5 = 2P - 1: rank r runs 2(P-1-r) + 1 forwards (5, 3, 1)
// before its first I and lets up to 2r W wait (0, 2, 4).
// CHECK-LABEL: sched.schedule @p3m5 stages 3 microbatches 5 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.forward stage 0 mb 3
// CHECK-NEXT: sched.forward stage 0 mb 4
// CHECK-NEXT: sched.backward_input stage 0 mb 0
// CHECK-NEXT: sched.backward_weight stage 0 mb 0
// CHECK-NEXT: sched.backward_input stage 0 mb 1
// CHECK-NEXT: sched.backward_weight stage 0 mb 1
// CHECK-NEXT: sched.backward_input stage 0 mb 2
// CHECK-NEXT: sched.backward_weight stage 0 mb 2
// CHECK-NEXT: sched.backward_input stage 0 mb 3
// CHECK-NEXT: sched.backward_weight stage 0 mb 3
// CHECK-NEXT: sched.backward_input stage 0 mb 4
// CHECK-NEXT: sched.backward_weight stage 0 mb 4
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.forward stage 1 mb 2
// CHECK-NEXT: sched.backward_input stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 3
// CHECK-NEXT: sched.backward_input stage 1 mb 1
// CHECK-NEXT: sched.forward stage 1 mb 4
// CHECK-NEXT: sched.backward_input stage 1 mb 2
// CHECK-NEXT: sched.backward_weight stage 1 mb 0
// CHECK-NEXT: sched.backward_input stage 1 mb 3
// CHECK-NEXT: sched.backward_weight stage 1 mb 1
// CHECK-NEXT: sched.backward_input stage 1 mb 4
// CHECK-NEXT: sched.backward_weight stage 1 mb 2
// CHECK-NEXT: sched.backward_weight stage 1 mb 3
// CHECK-NEXT: sched.backward_weight stage 1 mb 4
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 2 {
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.backward_input stage 2 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 1
// CHECK-NEXT: sched.backward_input stage 2 mb 1
// CHECK-NEXT: sched.forward stage 2 mb 2
// CHECK-NEXT: sched.backward_input stage 2 mb 2
// CHECK-NEXT: sched.forward stage 2 mb 3
// CHECK-NEXT: sched.backward_input stage 2 mb 3
// CHECK-NEXT: sched.forward stage 2 mb 4
// CHECK-NEXT: sched.backward_input stage 2 mb 4
// CHECK-NEXT: sched.backward_weight stage 2 mb 0
// CHECK-NEXT: sched.backward_weight stage 2 mb 1
// CHECK-NEXT: sched.backward_weight stage 2 mb 2
// CHECK-NEXT: sched.backward_weight stage 2 mb 3
// CHECK-NEXT: sched.backward_weight stage 2 mb 4
// CHECK-NEXT: }
// CHECK-NEXT: }
// ROUNDTRIP-LABEL: sched.schedule @p3m5
sched.pipeline @p3m5 pp 3 microbatches 5 {}

// -----

// M = 2 <= P: the waiting W stay at ZB-H1's r (1 and 2), the forwards stop
// at M.
// CHECK-LABEL: sched.schedule @p3m2 stages 3 microbatches 2 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.backward_input stage 0 mb 0
// CHECK-NEXT: sched.backward_weight stage 0 mb 0
// CHECK-NEXT: sched.backward_input stage 0 mb 1
// CHECK-NEXT: sched.backward_weight stage 0 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.backward_input stage 1 mb 0
// CHECK-NEXT: sched.backward_input stage 1 mb 1
// CHECK-NEXT: sched.backward_weight stage 1 mb 0
// CHECK-NEXT: sched.backward_weight stage 1 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 2 {
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.backward_input stage 2 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 1
// CHECK-NEXT: sched.backward_input stage 2 mb 1
// CHECK-NEXT: sched.backward_weight stage 2 mb 0
// CHECK-NEXT: sched.backward_weight stage 2 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: }
sched.pipeline @p3m2 pp 3 microbatches 2 {}
