// RUN: sched-opt %s -split-input-file --sched-lower-1f1b | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-1f1b | sched-opt -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP

// P = 3, M = 4: rank r warms up with P-1-r forwards, then alternates.
// CHECK-LABEL: sched.schedule @p3m4 stages 3 microbatches 4 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 3
// CHECK-NEXT: sched.backward stage 0 mb 1
// CHECK-NEXT: sched.backward stage 0 mb 2
// CHECK-NEXT: sched.backward stage 0 mb 3
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.backward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 2
// CHECK-NEXT: sched.backward stage 1 mb 1
// CHECK-NEXT: sched.forward stage 1 mb 3
// CHECK-NEXT: sched.backward stage 1 mb 2
// CHECK-NEXT: sched.backward stage 1 mb 3
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 2 {
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.backward stage 2 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 1
// CHECK-NEXT: sched.backward stage 2 mb 1
// CHECK-NEXT: sched.forward stage 2 mb 2
// CHECK-NEXT: sched.backward stage 2 mb 2
// CHECK-NEXT: sched.forward stage 2 mb 3
// CHECK-NEXT: sched.backward stage 2 mb 3
// CHECK-NEXT: }
// CHECK-NEXT: }
// ROUNDTRIP-LABEL: sched.schedule @p3m4
sched.pipeline @p3m4 pp 3 microbatches 4 {}

// -----

// M < P is legal: the warm-up shrinks to the microbatches there are.
// CHECK-LABEL: sched.schedule @p4m2 stages 4 microbatches 2 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: sched.backward stage 0 mb 1
// CHECK-NEXT: }
// CHECK: sched.rank 2 {
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 1
// CHECK-NEXT: sched.backward stage 2 mb 0
// CHECK-NEXT: sched.backward stage 2 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 3 {
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.backward stage 3 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 1
// CHECK-NEXT: sched.backward stage 3 mb 1
// CHECK-NEXT: }
sched.pipeline @p4m2 pp 4 microbatches 2 {}

// -----

// Declarations move into the schedule, ahead of the rank programs, and the
// memory limit carries over.
// CHECK-LABEL: sched.schedule @decls stages 2 microbatches 1 memory_limit 4096 {
// CHECK-NEXT: sched.stage 0 layers 4
// CHECK-NEXT: sched.stage 1 layers 4
// CHECK-NEXT: sched.aux_head stage 1 scope sequence
// CHECK-NEXT: sched.group @dp members {{\[}}[0], [1]]
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: }
// CHECK-NOT: sched.pipeline
sched.pipeline @decls pp 2 microbatches 1 memory_limit 4096 {
  sched.stage 0 layers 4 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 8 weight_grad 4 parameters 16
  sched.stage 1 layers 4 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 8 weight_grad 4 parameters 16
  sched.aux_head stage 1 scope sequence
  sched.group @dp members [[0], [1]]
}
