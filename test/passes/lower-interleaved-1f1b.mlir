// RUN: sched-opt %s -split-input-file --sched-lower-interleaved-1f1b | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-interleaved-1f1b | sched-opt -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP

// P = 2, v = 2, M = 4: two groups of P = 2 microbatches. Rank r holds
// stages r and r + 2; forwards walk a group chunk by chunk, backwards in
// reverse chunk order. Rank 0 warms up with 2(P-1) + (v-1)P = 4 forwards,
// rank 1 with (v-1)P = 2, then each alternates.
// CHECK-LABEL: sched.schedule @p2v2m4 stages 4 microbatches 4 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 1
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.backward stage 2 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 3
// CHECK-NEXT: sched.backward stage 2 mb 1
// CHECK-NEXT: sched.forward stage 2 mb 2
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 3
// CHECK-NEXT: sched.backward stage 0 mb 1
// CHECK-NEXT: sched.backward stage 2 mb 2
// CHECK-NEXT: sched.backward stage 2 mb 3
// CHECK-NEXT: sched.backward stage 0 mb 2
// CHECK-NEXT: sched.backward stage 0 mb 3
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.backward stage 3 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 1
// CHECK-NEXT: sched.backward stage 3 mb 1
// CHECK-NEXT: sched.forward stage 1 mb 2
// CHECK-NEXT: sched.backward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 3
// CHECK-NEXT: sched.backward stage 1 mb 1
// CHECK-NEXT: sched.forward stage 3 mb 2
// CHECK-NEXT: sched.backward stage 3 mb 2
// CHECK-NEXT: sched.forward stage 3 mb 3
// CHECK-NEXT: sched.backward stage 3 mb 3
// CHECK-NEXT: sched.backward stage 1 mb 2
// CHECK-NEXT: sched.backward stage 1 mb 3
// CHECK-NEXT: }
// CHECK-NEXT: }
// ROUNDTRIP-LABEL: sched.schedule @p2v2m4
sched.pipeline @p2v2m4 pp 2 vpp 2 microbatches 4 {}

// -----

// P = 3, v = 2, M = 4 (not a multiple of P): one group of all 4
// microbatches rather than a group of 3 and a group of 1. Warm-up on rank r
// is 2(P-1-r) + (v-1)G with G = 4: rank 0 runs all 8 forwards first, rank 1
// runs 6, rank 2 runs 4.
// CHECK-LABEL: sched.schedule @p3v2m4 stages 6 microbatches 4 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.forward stage 0 mb 3
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 1
// CHECK-NEXT: sched.forward stage 3 mb 2
// CHECK-NEXT: sched.forward stage 3 mb 3
// CHECK-NEXT: sched.backward stage 3 mb 0
// CHECK:      sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.forward stage 1 mb 2
// CHECK-NEXT: sched.forward stage 1 mb 3
// CHECK-NEXT: sched.forward stage 4 mb 0
// CHECK-NEXT: sched.forward stage 4 mb 1
// CHECK-NEXT: sched.forward stage 4 mb 2
// CHECK-NEXT: sched.backward stage 4 mb 0
// CHECK-NEXT: sched.forward stage 4 mb 3
// CHECK-NEXT: sched.backward stage 4 mb 1
// CHECK-NEXT: sched.backward stage 4 mb 2
// CHECK-NEXT: sched.backward stage 4 mb 3
// CHECK-NEXT: sched.backward stage 1 mb 0
// CHECK-NEXT: sched.backward stage 1 mb 1
// CHECK-NEXT: sched.backward stage 1 mb 2
// CHECK-NEXT: sched.backward stage 1 mb 3
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 2 {
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 1
// CHECK-NEXT: sched.forward stage 2 mb 2
// CHECK-NEXT: sched.forward stage 2 mb 3
// CHECK-NEXT: sched.forward stage 5 mb 0
// CHECK-NEXT: sched.backward stage 5 mb 0
// CHECK-NEXT: sched.forward stage 5 mb 1
// CHECK-NEXT: sched.backward stage 5 mb 1
// CHECK-NEXT: sched.forward stage 5 mb 2
// CHECK-NEXT: sched.backward stage 5 mb 2
// CHECK-NEXT: sched.forward stage 5 mb 3
// CHECK-NEXT: sched.backward stage 5 mb 3
// CHECK-NEXT: sched.backward stage 2 mb 0
// CHECK-NEXT: sched.backward stage 2 mb 1
// CHECK-NEXT: sched.backward stage 2 mb 2
// CHECK-NEXT: sched.backward stage 2 mb 3
// CHECK-NEXT: }
sched.pipeline @p3v2m4 pp 3 vpp 2 microbatches 4 {}

// -----

// M < P: one microbatch goes through both chunks of every rank; the last
// rank's warm-up is its single chunk-0 forward.
// CHECK-LABEL: sched.schedule @p4v2m1 stages 8 microbatches 1 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 4 mb 0
// CHECK-NEXT: sched.backward stage 4 mb 0
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: }
// CHECK:      sched.rank 3 {
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.forward stage 7 mb 0
// CHECK-NEXT: sched.backward stage 7 mb 0
// CHECK-NEXT: sched.backward stage 3 mb 0
// CHECK-NEXT: }
sched.pipeline @p4v2m1 pp 4 vpp 2 microbatches 1 {}

// -----

// Stage declarations (one per stage, P * v of them) move into the schedule.
// CHECK-LABEL: sched.schedule @decls stages 4 microbatches 1 {
// CHECK-NEXT: sched.stage 0 layers 2
// CHECK-NEXT: sched.stage 1 layers 2
// CHECK-NEXT: sched.stage 2 layers 2
// CHECK-NEXT: sched.stage 3 layers 2
// CHECK-NEXT: sched.rank 0 {
// CHECK-NOT: sched.pipeline
sched.pipeline @decls pp 2 vpp 2 microbatches 1 {
  sched.stage 0 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 8 weight_grad 4 parameters 16
  sched.stage 1 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 8 weight_grad 4 parameters 16
  sched.stage 2 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 8 weight_grad 4 parameters 16
  sched.stage 3 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 8 weight_grad 4 parameters 16
}
