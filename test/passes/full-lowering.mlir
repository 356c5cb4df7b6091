// The whole lowering, as README shows it: generate, transfers, collectives
// with FSDP, buffer slots, then the proof.
// RUN: sched-opt %s --sched-lower-1f1b --sched-insert-p2p --sched-insert-collectives="fsdp=true" --sched-assign-buffers --sched-verify | FileCheck %s
// RUN: sched-opt %s --sched-lower-zb-h1 --sched-insert-p2p --sched-insert-collectives --sched-assign-buffers --sched-verify="p2p=eager" | FileCheck %s --check-prefix=ZB

// CHECK: sched.rank 0 attributes {sched.activation_slots = 2 : i64, sched.recv_slots = 1 : i64} {
// CHECK-NEXT: sched.unshard stage 0
// CHECK-NEXT: sched.forward stage 0 mb 0 {sched.slot = 0 : i64}
// CHECK-NEXT: sched.send forward stage 0 mb 0 to 1
// CHECK: sched.reduce_scatter @dp stage 0 bytes 4096
// CHECK-NEXT: sched.reshard stage 0
// CHECK-NEXT: sched.reduce_grad stage 0
// CHECK-NEXT: sched.optimizer_step
// CHECK: sched.rank 1 attributes {sched.activation_slots = 1 : i64, sched.recv_slots = 1 : i64} {
// ZB: sched.backward_weight stage 0 mb 1
// ZB: sched.reduce_scatter @dp stage 0 bytes 4096
// ZB-NEXT: sched.optimizer_step
sched.pipeline @p pp 2 microbatches 2 {
  sched.group @dp members [[0], [1]]
  sched.collective reduce_scatter @dp bytes 4096 when after_backward
}
