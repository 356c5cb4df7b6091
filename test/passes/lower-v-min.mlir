// RUN: sched-opt %s -split-input-file --sched-lower-v-min | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-v-min | sched-opt -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP

// P = 2, M = 2. The V-Min block (steps modulo 6 free on each rank):
//   forwards  stage 0 on rank 0 at 0, stage 1 on rank 1 at 1,
//             stage 2 on rank 1 at 2, stage 3 on rank 0 at 3;
//   I         stage 3 at 4, stage 2 at 5, stage 1 at 6, stage 0 at 7;
//   W         rank 0: stage 3 at 5, stage 0 at 8;
//             rank 1: stage 2 at 9, stage 1 at 10 (slots 0, 1, 2 are
//             taken by its I, F, F).
// Microbatch 1 runs every action six steps later; each rank runs its
// actions in the order of those steps.
// CHECK-LABEL: sched.schedule @p2m2 stages 4 microbatches 2 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.backward_input stage 3 mb 0
// CHECK-NEXT: sched.backward_weight stage 3 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.backward_input stage 0 mb 0
// CHECK-NEXT: sched.backward_weight stage 0 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 1
// CHECK-NEXT: sched.backward_input stage 3 mb 1
// CHECK-NEXT: sched.backward_weight stage 3 mb 1
// CHECK-NEXT: sched.backward_input stage 0 mb 1
// CHECK-NEXT: sched.backward_weight stage 0 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.backward_input stage 2 mb 0
// CHECK-NEXT: sched.backward_input stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.forward stage 2 mb 1
// CHECK-NEXT: sched.backward_weight stage 2 mb 0
// CHECK-NEXT: sched.backward_weight stage 1 mb 0
// CHECK-NEXT: sched.backward_input stage 2 mb 1
// CHECK-NEXT: sched.backward_input stage 1 mb 1
// CHECK-NEXT: sched.backward_weight stage 2 mb 1
// CHECK-NEXT: sched.backward_weight stage 1 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: }
// ROUNDTRIP-LABEL: sched.schedule @p2m2
sched.pipeline @p2m2 pp 2 vpp 2 microbatches 2 {}

// -----

// M = 1: the block alone, down and up the V and back.
// CHECK-LABEL: sched.schedule @p2m1 stages 4 microbatches 1 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.backward_input stage 3 mb 0
// CHECK-NEXT: sched.backward_weight stage 3 mb 0
// CHECK-NEXT: sched.backward_input stage 0 mb 0
// CHECK-NEXT: sched.backward_weight stage 0 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.backward_input stage 2 mb 0
// CHECK-NEXT: sched.backward_input stage 1 mb 0
// CHECK-NEXT: sched.backward_weight stage 2 mb 0
// CHECK-NEXT: sched.backward_weight stage 1 mb 0
// CHECK-NEXT: }
sched.pipeline @p2m1 pp 2 vpp 2 microbatches 1 {}
