// RUN: sched-opt %s -split-input-file --sched-lower-combined-1f1b | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-combined-1f1b | sched-opt -split-input-file | FileCheck %s
// The full lowering verifies; with T_F = 1, T_B = 2 there is no bubble (3M)
// and two activations are alive (one for M = 1): the pairs are layerwise,
// and a stage of one layer holds the whole forward beside the backward's
// microbatch; with 4 layers (@decls) one layer of it, 1 + 1/4.
// RUN: sched-opt %s -split-input-file --sched-lower-combined-1f1b --sched-insert-p2p --sched-insert-collectives --sched-assign-buffers --sched-verify --sched-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=SIM
// SIM: remark: makespan 9; bubble ratio per rank 0; peak activations per rank 2
// SIM: remark: makespan 3; bubble ratio per rank 0; peak activations per rank 1
// SIM: remark: makespan 6; bubble ratio per rank 0; peak activations per rank 1.25

// Megatron-Core's combined 1F1B without a pipeline, M = 3: the forward of
// microbatch 0 alone, then F(i + 1) beside B(i) for i = 0, 1, then B(2)
// alone. Each overlap holds the forward first.
// CHECK-LABEL: sched.schedule @m3 stages 1 microbatches 3 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.overlap layerwise {
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.overlap layerwise {
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.backward stage 0 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.backward stage 0 mb 2
// CHECK-NEXT: }
// CHECK-NEXT: }
sched.pipeline @m3 pp 1 microbatches 3 {}

// -----

// One microbatch: nothing to overlap with, so no-pp's order.
// CHECK-LABEL: sched.schedule @m1 stages 1 microbatches 1 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: }
sched.pipeline @m1 pp 1 microbatches 1 {}

// -----

// The stage declaration and a per-stage collective move into the schedule.
// CHECK-LABEL: sched.schedule @decls stages 1 microbatches 2 {
// CHECK: sched.stage 0 layers 4
// CHECK: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.overlap layerwise {
// CHECK-NOT: sched.pipeline
sched.pipeline @decls pp 1 microbatches 2 {
  sched.stage 0 layers 4 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 8 weight_grad 4 parameters 16
}
