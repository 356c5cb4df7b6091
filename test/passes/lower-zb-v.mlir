// RUN: sched-opt %s -split-input-file --sched-lower-zb-v | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-zb-v | sched-opt -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP

// P = 2, M = 2, unit steps. Rank r holds stage r (chunk 0) and stage
// 3 - r (chunk 1). Rank 0 admits both microbatches at steps 0 and 1 (two
// activations and the two chunk-1 forwards they need fit the cap of 2P = 4);
// rank 1 turns microbatch 0 round the V at step 2 before taking microbatch
// 1. The input gradients go back as soon as they can; rank 0 has nothing
// to start at step 8 and runs its oldest waiting W; every other W fills the
// end. Makespan 13 = 6M + P - 1.
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
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.forward stage 2 mb 1
// CHECK-NEXT: sched.backward_input stage 2 mb 0
// CHECK-NEXT: sched.backward_input stage 1 mb 0
// CHECK-NEXT: sched.backward_input stage 2 mb 1
// CHECK-NEXT: sched.backward_input stage 1 mb 1
// CHECK-NEXT: sched.backward_weight stage 2 mb 0
// CHECK-NEXT: sched.backward_weight stage 1 mb 0
// CHECK-NEXT: sched.backward_weight stage 2 mb 1
// CHECK-NEXT: sched.backward_weight stage 1 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: }
// ROUNDTRIP-LABEL: sched.schedule @p2m2
sched.pipeline @p2m2 pp 2 vpp 2 microbatches 2 {}

// -----

// An explicit V placement gives the same order as the default.
// CHECK-LABEL: sched.schedule @explicit stages 4 microbatches 2 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 3 mb 0
sched.pipeline @explicit pp 2 vpp 2 microbatches 2 placement v {}

// -----

// M < P: one microbatch down and up the V and back. Rank 0 waits for the
// gradient from step 7 to 11 and runs its waiting W there; rank 2 turns
// round the V on its own.
// CHECK-LABEL: sched.schedule @p3m1 stages 6 microbatches 1 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 5 mb 0
// CHECK-NEXT: sched.backward_input stage 5 mb 0
// CHECK-NEXT: sched.backward_weight stage 5 mb 0
// CHECK-NEXT: sched.backward_input stage 0 mb 0
// CHECK-NEXT: sched.backward_weight stage 0 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 4 mb 0
// CHECK-NEXT: sched.backward_input stage 4 mb 0
// CHECK-NEXT: sched.backward_weight stage 4 mb 0
// CHECK-NEXT: sched.backward_input stage 1 mb 0
// CHECK-NEXT: sched.backward_weight stage 1 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 2 {
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.backward_input stage 3 mb 0
// CHECK-NEXT: sched.backward_input stage 2 mb 0
// CHECK-NEXT: sched.backward_weight stage 3 mb 0
// CHECK-NEXT: sched.backward_weight stage 2 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: }
sched.pipeline @p3m1 pp 3 vpp 2 microbatches 1 {}

// -----

// P = 1: both stages on rank 0 and a cap of 2 activations. The second
// microbatch enters only once the first one's weight gradients have run.
// CHECK-LABEL: sched.schedule @p1m2 stages 2 microbatches 2 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.backward_input stage 1 mb 0
// CHECK-NEXT: sched.backward_input stage 0 mb 0
// CHECK-NEXT: sched.backward_weight stage 1 mb 0
// CHECK-NEXT: sched.backward_weight stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.backward_input stage 1 mb 1
// CHECK-NEXT: sched.backward_input stage 0 mb 1
// CHECK-NEXT: sched.backward_weight stage 1 mb 1
// CHECK-NEXT: sched.backward_weight stage 0 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: }
sched.pipeline @p1m2 pp 1 vpp 2 microbatches 2 {}
