// RUN: sched-opt %s -split-input-file --sched-lower-v-half | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-v-half | sched-opt -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP

// P = 4, M = 4, cap P + 2 = 6 stage activations. Rank 0 admits three
// microbatches, not four, before its first I: three activations and the
// three chunk-1 forwards they still need fill the cap (ZB-V, with a cap of
// 8, admits all four). Microbatch 3 enters at step 11 once two I have freed
// half an activation each; W fill the steps where nothing else is ready.
// Rank 3 turns each microbatch round the V at once.
// CHECK-LABEL: sched.schedule @p4m4 stages 8 microbatches 4 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.forward stage 7 mb 0
// CHECK-NEXT: sched.backward_input stage 7 mb 0
// CHECK-NEXT: sched.forward stage 7 mb 1
// CHECK-NEXT: sched.backward_input stage 7 mb 1
// CHECK-NEXT: sched.forward stage 7 mb 2
// CHECK-NEXT: sched.backward_input stage 7 mb 2
// CHECK-NEXT: sched.backward_weight stage 7 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 3
// CHECK-NEXT: sched.backward_input stage 0 mb 0
// CHECK-NEXT: sched.backward_weight stage 7 mb 1
// CHECK-NEXT: sched.backward_input stage 0 mb 1
// CHECK-NEXT: sched.backward_weight stage 7 mb 2
// CHECK-NEXT: sched.backward_input stage 0 mb 2
// CHECK-NEXT: sched.backward_weight stage 0 mb 0
// CHECK-NEXT: sched.forward stage 7 mb 3
// CHECK-NEXT: sched.backward_input stage 7 mb 3
// CHECK-NEXT: sched.backward_weight stage 0 mb 1
// CHECK-NEXT: sched.backward_weight stage 0 mb 2
// CHECK-NEXT: sched.backward_weight stage 7 mb 3
// CHECK-NEXT: sched.backward_input stage 0 mb 3
// CHECK-NEXT: sched.backward_weight stage 0 mb 3
// CHECK-NEXT: }
// CHECK:      sched.rank 3 {
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.forward stage 4 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 1
// CHECK-NEXT: sched.forward stage 4 mb 1
// CHECK-NEXT: sched.forward stage 3 mb 2
// CHECK-NEXT: sched.forward stage 4 mb 2
// CHECK-NEXT: sched.backward_input stage 4 mb 0
// CHECK-NEXT: sched.backward_input stage 3 mb 0
// CHECK-NEXT: sched.backward_input stage 4 mb 1
// CHECK-NEXT: sched.backward_input stage 3 mb 1
// CHECK-NEXT: sched.backward_input stage 4 mb 2
// CHECK-NEXT: sched.backward_input stage 3 mb 2
// CHECK-NEXT: sched.forward stage 3 mb 3
// CHECK-NEXT: sched.forward stage 4 mb 3
// CHECK-NEXT: sched.backward_weight stage 4 mb 0
// CHECK-NEXT: sched.backward_weight stage 3 mb 0
// CHECK-NEXT: sched.backward_weight stage 4 mb 1
// CHECK-NEXT: sched.backward_weight stage 3 mb 1
// CHECK-NEXT: sched.backward_weight stage 4 mb 2
// CHECK-NEXT: sched.backward_weight stage 3 mb 2
// CHECK-NEXT: sched.backward_input stage 4 mb 3
// CHECK-NEXT: sched.backward_input stage 3 mb 3
// CHECK-NEXT: sched.backward_weight stage 4 mb 3
// CHECK-NEXT: sched.backward_weight stage 3 mb 3
// CHECK-NEXT: }
// CHECK-NEXT: }
// ROUNDTRIP-LABEL: sched.schedule @p4m4
sched.pipeline @p4m4 pp 4 vpp 2 microbatches 4 {}

// -----

// P = 2: the cap P + 2 = 4 equals ZB-V's 2P, and so does the order.
// CHECK-LABEL: sched.schedule @p2m2 stages 4 microbatches 2 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.backward_input stage 3 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 1
// CHECK-NEXT: sched.backward_input stage 3 mb 1
// CHECK-NEXT: sched.backward_input stage 0 mb 0
// CHECK-NEXT: sched.backward_weight stage 3 mb 0
// CHECK-NEXT: sched.backward_input stage 0 mb 1
// CHECK-NEXT: sched.backward_weight stage 3 mb 1
// CHECK-NEXT: sched.backward_weight stage 0 mb 0
// CHECK-NEXT: sched.backward_weight stage 0 mb 1
// CHECK-NEXT: }
sched.pipeline @p2m2 pp 2 vpp 2 microbatches 2 {}
