// Generated schedules with two stages per rank (interleaved and V-shaped
// placements) and the rest of the training step, as
// sched-insert-collectives lowers it, verify: declared collectives, FSDP
// unshard/reshard/reduce_grad and the optimizer step all sit where
// docs/verifier.md section 5 wants them.
// RUN: sched-opt %s --sched-lower-zb-v --sched-insert-p2p --sched-insert-collectives --sched-verify | FileCheck %s
// RUN: sched-opt %s --sched-lower-interleaved-1f1b --sched-insert-p2p --sched-insert-collectives="fsdp=true" --sched-verify | FileCheck %s --check-prefixes=CHECK,FSDP
// RUN: sched-opt %s --sched-lower-zb-v --sched-insert-p2p --sched-insert-collectives="fsdp=true prefetch=3" --sched-verify | FileCheck %s --check-prefixes=CHECK,FSDP
// RUN: sched-opt %s --sched-lower-v-half --sched-insert-p2p --sched-insert-collectives="fsdp=true" --sched-verify | FileCheck %s --check-prefixes=CHECK,FSDP
// RUN: sched-opt %s --sched-lower-interleaved-zb --sched-insert-p2p --sched-insert-collectives --sched-verify="p2p=eager" | FileCheck %s
// RUN: sched-opt %s --sched-lower-v-min --sched-insert-p2p --sched-insert-collectives --sched-verify | FileCheck %s
// RUN: sched-opt %s --sched-lower-dualpipe-v --sched-insert-p2p --sched-insert-collectives="fsdp=true" --sched-verify | FileCheck %s --check-prefixes=CHECK,FSDP

// Every rank ends with the optimizer step, after the step collective.
// CHECK-LABEL: sched.rank 0 {
// CHECK-DAG: sched.all_gather @dp stage 0 bytes 64
// FSDP-DAG: sched.unshard stage 0
// CHECK: sched.forward stage 0 mb 0
// FSDP: sched.reshard stage 0
// FSDP-NEXT: sched.reduce_grad stage 0
// CHECK: sched.barrier @dp stage 0
// REPLICAS: sched.all_reduce @replicas stage 0
// CHECK: sched.optimizer_step
// CHECK-NEXT: }
sched.pipeline @step pp 2 vpp 2 microbatches 4 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 10 weight_grad 5 parameters 100
  sched.stage 1 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 10 weight_grad 5 parameters 200
  sched.stage 2 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 10 weight_grad 5 parameters 300
  sched.stage 3 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 10 weight_grad 5 parameters 400
  sched.group @dp members [[0], [1]]
  sched.group @ep members [[0], [1]]
  sched.collective all_gather @dp bytes 64 when before_forward
  sched.collective all_to_all @ep bytes 8 when after_forward stage 1
  sched.collective all_to_all @ep bytes 16 when before_backward stage 2
  sched.collective reduce_scatter @dp bytes 64 when after_backward
  sched.collective barrier @dp bytes 0 when step
}
