// RUN: sched-opt %s -split-input-file --sched-lower-interleaved-zb | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-interleaved-zb | sched-opt -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP

// P = 2, v = 2, M = 4: two groups of P = 2 microbatches. Rank r holds
// stages r and r + 2. Forwards walk a group chunk by chunk (0 0 2 2 on rank
// 0), input gradients in reverse chunk order (2 2 0 0). Rank r warms up
// with (v-1)G + P-1-r forwards (3, 2), then runs per step the next forward,
// an I and, from its (r+1)-th step on, the oldest waiting W.
// CHECK-LABEL: sched.schedule @p2v2m4 stages 4 microbatches 4 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 1
// CHECK-NEXT: sched.backward_input stage 2 mb 0
// CHECK-NEXT: sched.backward_weight stage 2 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.backward_input stage 2 mb 1
// CHECK-NEXT: sched.backward_weight stage 2 mb 1
// CHECK-NEXT: sched.forward stage 0 mb 3
// CHECK-NEXT: sched.backward_input stage 0 mb 0
// CHECK-NEXT: sched.backward_weight stage 0 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 2
// CHECK-NEXT: sched.backward_input stage 0 mb 1
// CHECK-NEXT: sched.backward_weight stage 0 mb 1
// CHECK-NEXT: sched.forward stage 2 mb 3
// CHECK-NEXT: sched.backward_input stage 2 mb 2
// CHECK-NEXT: sched.backward_weight stage 2 mb 2
// CHECK-NEXT: sched.backward_input stage 2 mb 3
// CHECK-NEXT: sched.backward_weight stage 2 mb 3
// CHECK-NEXT: sched.backward_input stage 0 mb 2
// CHECK-NEXT: sched.backward_weight stage 0 mb 2
// CHECK-NEXT: sched.backward_input stage 0 mb 3
// CHECK-NEXT: sched.backward_weight stage 0 mb 3
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.backward_input stage 3 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 1
// CHECK-NEXT: sched.backward_input stage 3 mb 1
// CHECK-NEXT: sched.backward_weight stage 3 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 2
// CHECK-NEXT: sched.backward_input stage 1 mb 0
// CHECK-NEXT: sched.backward_weight stage 3 mb 1
// CHECK-NEXT: sched.forward stage 1 mb 3
// CHECK-NEXT: sched.backward_input stage 1 mb 1
// CHECK-NEXT: sched.backward_weight stage 1 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 2
// CHECK-NEXT: sched.backward_input stage 3 mb 2
// CHECK-NEXT: sched.backward_weight stage 1 mb 1
// CHECK-NEXT: sched.forward stage 3 mb 3
// CHECK-NEXT: sched.backward_input stage 3 mb 3
// CHECK-NEXT: sched.backward_weight stage 3 mb 2
// CHECK-NEXT: sched.backward_input stage 1 mb 2
// CHECK-NEXT: sched.backward_weight stage 3 mb 3
// CHECK-NEXT: sched.backward_input stage 1 mb 3
// CHECK-NEXT: sched.backward_weight stage 1 mb 2
// CHECK-NEXT: sched.backward_weight stage 1 mb 3
// CHECK-NEXT: }
// CHECK-NEXT: }
// ROUNDTRIP-LABEL: sched.schedule @p2v2m4
sched.pipeline @p2v2m4 pp 2 vpp 2 microbatches 4 {}

// -----

// P = 3, v = 2, M = 4 (not a multiple of P): one group of all 4
// microbatches (G = 4). Rank 0 warms up with (v-1)G + P-1 = 6 forwards,
// rank 2 with 4, and lets 2 W wait before its first.
// CHECK-LABEL: sched.schedule @p3v2m4 stages 6 microbatches 4 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.forward stage 0 mb 3
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 1
// CHECK-NEXT: sched.forward stage 3 mb 2
// CHECK-NEXT: sched.backward_input stage 3 mb 0
// CHECK-NEXT: sched.backward_weight stage 3 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 3
// CHECK:      sched.rank 2 {
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 1
// CHECK-NEXT: sched.forward stage 2 mb 2
// CHECK-NEXT: sched.forward stage 2 mb 3
// CHECK-NEXT: sched.forward stage 5 mb 0
// CHECK-NEXT: sched.backward_input stage 5 mb 0
// CHECK-NEXT: sched.forward stage 5 mb 1
// CHECK-NEXT: sched.backward_input stage 5 mb 1
// CHECK-NEXT: sched.forward stage 5 mb 2
// CHECK-NEXT: sched.backward_input stage 5 mb 2
// CHECK-NEXT: sched.backward_weight stage 5 mb 0
// CHECK-NEXT: sched.forward stage 5 mb 3
// CHECK-NEXT: sched.backward_input stage 5 mb 3
// CHECK-NEXT: sched.backward_weight stage 5 mb 1
// CHECK-NEXT: sched.backward_input stage 2 mb 0
// CHECK-NEXT: sched.backward_weight stage 5 mb 2
// CHECK-NEXT: sched.backward_input stage 2 mb 1
// CHECK-NEXT: sched.backward_weight stage 5 mb 3
// CHECK-NEXT: sched.backward_input stage 2 mb 2
// CHECK-NEXT: sched.backward_weight stage 2 mb 0
// CHECK-NEXT: sched.backward_input stage 2 mb 3
// CHECK-NEXT: sched.backward_weight stage 2 mb 1
// CHECK-NEXT: sched.backward_weight stage 2 mb 2
// CHECK-NEXT: sched.backward_weight stage 2 mb 3
// CHECK-NEXT: }
sched.pipeline @p3v2m4 pp 3 vpp 2 microbatches 4 {}

// -----

// vpp = 1: ZB-H1's program (P - r forwards, then I, a W once more than r
// wait, F).
// CHECK-LABEL: sched.schedule @p2v1m2 stages 2 microbatches 2 {
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
// CHECK-NEXT: sched.backward_input stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.backward_input stage 1 mb 1
// CHECK-NEXT: sched.backward_weight stage 1 mb 0
// CHECK-NEXT: sched.backward_weight stage 1 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: }
sched.pipeline @p2v1m2 pp 2 microbatches 2 {}
