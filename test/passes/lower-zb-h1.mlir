// RUN: sched-opt %s -split-input-file --sched-lower-zb-h1 | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-zb-h1 | sched-opt -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP

// P = 2, M = 3: rank 0 runs P = 2 forwards, then I, W and F per
// microbatch. Rank 1 runs one forward and lets one W wait: its W run one
// microbatch behind its I, the last one closes the program.
// CHECK-LABEL: sched.schedule @p2m3 stages 2 microbatches 3 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.backward_input stage 0 mb 0
// CHECK-NEXT: sched.backward_weight stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.backward_input stage 0 mb 1
// CHECK-NEXT: sched.backward_weight stage 0 mb 1
// CHECK-NEXT: sched.backward_input stage 0 mb 2
// CHECK-NEXT: sched.backward_weight stage 0 mb 2
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.backward_input stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.backward_input stage 1 mb 1
// CHECK-NEXT: sched.backward_weight stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 2
// CHECK-NEXT: sched.backward_input stage 1 mb 2
// CHECK-NEXT: sched.backward_weight stage 1 mb 1
// CHECK-NEXT: sched.backward_weight stage 1 mb 2
// CHECK-NEXT: }
// CHECK-NEXT: }
// ROUNDTRIP-LABEL: sched.schedule @p2m3
sched.pipeline @p2m3 pp 2 microbatches 3 {}

// -----

// M < P: the forwards stop at M, rank 2 keeps both W waiting to the end.
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
