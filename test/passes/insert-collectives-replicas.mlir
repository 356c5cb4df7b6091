// DualPipe keeps two copies of every model stage; sched-insert-collectives
// sums their weight gradients before the optimizer step.
// RUN: sched-opt %s --sched-lower-dualpipe --sched-insert-collectives | FileCheck %s
// RUN: sched-opt %s --sched-lower-dualpipe --sched-insert-p2p --sched-insert-collectives --sched-verify | FileCheck %s --check-prefix=VERIFIED

// P = 4: rank r holds replica A's stage r (model stage r) and replica B's
// stage 7 - r (model stage 3 - r), so ranks r and 3 - r hold the same two
// model stages: member sets [0, 3] and [1, 2]. Each rank all-reduces its
// two stages in model-stage order (the copies match by model stage), with
// the stage's parameter bytes; the declared data-parallel reduce-scatter
// of model stage 3 runs on both of its copies (stage 3 on rank 3, stage 7
// on rank 0).
// CHECK: sched.group @replicas members {{\[}}[0, 3], [1, 2]]
// The sums are declared too, one per stage, after its last gradient, so
// that the verifier holds them there.
// CHECK-NEXT: sched.collective all_reduce @replicas bytes 100 when after_backward stage 0
// CHECK-NEXT: sched.collective all_reduce @replicas bytes 200 when after_backward stage 1
// CHECK: sched.collective all_reduce @replicas bytes 400 when after_backward stage 7
// CHECK: sched.rank 0 {
// CHECK: sched.reduce_scatter @dp stage 7 bytes 64
// CHECK: sched.all_reduce @replicas stage 0 bytes 100
// CHECK-NEXT: sched.all_reduce @replicas stage 7 bytes 400
// CHECK-NEXT: sched.optimizer_step
// CHECK: sched.rank 1 {
// CHECK: sched.all_reduce @replicas stage 1 bytes 200
// CHECK-NEXT: sched.all_reduce @replicas stage 6 bytes 300
// CHECK-NEXT: sched.optimizer_step
// CHECK: sched.rank 2 {
// CHECK: sched.all_reduce @replicas stage 5 bytes 200
// CHECK-NEXT: sched.all_reduce @replicas stage 2 bytes 300
// CHECK-NEXT: sched.optimizer_step
// CHECK: sched.rank 3 {
// CHECK: sched.reduce_scatter @dp stage 3 bytes 64
// CHECK: sched.all_reduce @replicas stage 4 bytes 100
// CHECK-NEXT: sched.all_reduce @replicas stage 3 bytes 400
// CHECK-NEXT: sched.optimizer_step
// VERIFIED: sched.schedule @dual stages 8 microbatches 8 replicas 2
sched.pipeline @dual pp 4 microbatches 8 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 10 weight_grad 5 parameters 100
  sched.stage 1 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 10 weight_grad 5 parameters 200
  sched.stage 2 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 10 weight_grad 5 parameters 300
  sched.stage 3 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 10 weight_grad 5 parameters 400
  sched.group @dp members [[0], [1], [2], [3]]
  sched.collective reduce_scatter @dp bytes 64 when after_backward stage 3
}
