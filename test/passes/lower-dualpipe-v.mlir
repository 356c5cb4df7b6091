// RUN: sched-opt %s -split-input-file --sched-lower-dualpipe-v | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-dualpipe-v | sched-opt -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP

// P = 2, M = 4. Rank 0: 2(P - 1) = 2 chunk-0 forwards, one pair (chunk 0,
// chunk 1), one I of chunk 1 with its W and a chunk-1 forward, then
// M - 2P + 1 = 1 round of overlaps: F of stage 0 with B of stage 3, F of
// stage 3 with I of stage 0 (the last overlap takes an I). Rank 1: two
// pairs, then two rounds of overlaps. The cool-down runs input gradients
// first, chunk 1 before chunk 0, and W where nothing else is ready: rank 0
// finishes its overlaps at step 13, runs I of stage 3 and two waiting W
// until the gradient of stage 1 arrives at 16. Makespan 25 = 6M + P - 1.
// CHECK-LABEL: sched.schedule @p2m4 stages 4 microbatches 4 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.backward_input stage 3 mb 0
// CHECK-NEXT: sched.backward_weight stage 3 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 1
// CHECK-NEXT: sched.overlap {
// CHECK-NEXT: sched.forward stage 0 mb 3
// CHECK-NEXT: sched.backward stage 3 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.overlap {
// CHECK-NEXT: sched.forward stage 3 mb 2
// CHECK-NEXT: sched.backward_input stage 0 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.backward_input stage 3 mb 2
// CHECK-NEXT: sched.backward_weight stage 0 mb 0
// CHECK-NEXT: sched.backward_weight stage 3 mb 2
// CHECK-NEXT: sched.backward_input stage 0 mb 1
// CHECK-NEXT: sched.forward stage 3 mb 3
// CHECK-NEXT: sched.backward_input stage 3 mb 3
// CHECK-NEXT: sched.backward_input stage 0 mb 2
// CHECK-NEXT: sched.backward_weight stage 0 mb 1
// CHECK-NEXT: sched.backward_input stage 0 mb 3
// CHECK-NEXT: sched.backward_weight stage 3 mb 3
// CHECK-NEXT: sched.backward_weight stage 0 mb 2
// CHECK-NEXT: sched.backward_weight stage 0 mb 3
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.forward stage 2 mb 1
// CHECK-NEXT: sched.overlap {
// CHECK-NEXT: sched.forward stage 1 mb 2
// CHECK-NEXT: sched.backward stage 2 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.overlap {
// CHECK-NEXT: sched.forward stage 2 mb 2
// CHECK-NEXT: sched.backward stage 1 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.overlap {
// CHECK-NEXT: sched.forward stage 1 mb 3
// CHECK-NEXT: sched.backward stage 2 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.overlap {
// CHECK-NEXT: sched.forward stage 2 mb 3
// CHECK-NEXT: sched.backward_input stage 1 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.backward_input stage 2 mb 2
// CHECK-NEXT: sched.backward_input stage 1 mb 2
// CHECK-NEXT: sched.backward_weight stage 1 mb 1
// CHECK-NEXT: sched.backward_input stage 2 mb 3
// CHECK-NEXT: sched.backward_input stage 1 mb 3
// CHECK-NEXT: sched.backward_weight stage 2 mb 2
// CHECK-NEXT: sched.backward_weight stage 1 mb 2
// CHECK-NEXT: sched.backward_weight stage 2 mb 3
// CHECK-NEXT: sched.backward_weight stage 1 mb 3
// CHECK-NEXT: }
// CHECK-NEXT: }
// ROUNDTRIP-LABEL: sched.schedule @p2m4
// ROUNDTRIP: sched.overlap {
sched.pipeline @p2m4 pp 2 vpp 2 microbatches 4 {}

// -----

// M <= P: no steady phase, so no overlap; the warm-up steps of microbatches
// that do not exist are skipped.
// CHECK-LABEL: sched.schedule @p2m2 stages 4 microbatches 2 {
// CHECK-NOT: sched.overlap
// CHECK: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.forward stage 2 mb 1
// CHECK-NEXT: sched.backward_input stage 2 mb 0
// CHECK-NEXT: sched.backward_input stage 1 mb 0
// CHECK-NEXT: sched.backward_weight stage 2 mb 0
// CHECK-NEXT: sched.backward_input stage 2 mb 1
// CHECK-NEXT: sched.backward_input stage 1 mb 1
// CHECK-NEXT: sched.backward_weight stage 1 mb 0
// CHECK-NEXT: sched.backward_weight stage 2 mb 1
// CHECK-NEXT: sched.backward_weight stage 1 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: }
sched.pipeline @p2m2 pp 2 vpp 2 microbatches 2 {}
