// RUN: sched-opt %s -split-input-file --sched-lower-1f1b --sched-insert-collectives | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-1f1b --sched-insert-collectives="fsdp=true prefetch=1" | FileCheck %s --check-prefix=FSDP
// RUN: sched-opt %s -split-input-file --sched-lower-1f1b --sched-insert-collectives="fsdp=true" --sched-verify | sched-opt -split-input-file | FileCheck %s --check-prefix=FSDP

// Expert all-to-all before every forward of stage 1, data-parallel
// reduce-scatter once after each stage's last backward, an all-reduce at
// the step, then one optimizer step per rank.
// CHECK-LABEL: sched.schedule @p
// CHECK: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: sched.backward stage 0 mb 1
// CHECK-NEXT: sched.reduce_scatter @dp stage 0 bytes 4096
// CHECK-NEXT: sched.all_reduce @dp stage 0 bytes 8
// CHECK-NEXT: sched.optimizer_step
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.all_to_all @ep stage 1 bytes 64
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.backward stage 1 mb 0
// CHECK-NEXT: sched.all_to_all @ep stage 1 bytes 64
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.backward stage 1 mb 1
// CHECK-NEXT: sched.reduce_scatter @dp stage 1 bytes 4096
// CHECK-NEXT: sched.all_reduce @dp stage 1 bytes 8
// CHECK-NEXT: sched.optimizer_step
// CHECK-NEXT: }

// With fsdp: gather before the stage's first compute, free and reduce after
// its last.
// FSDP-LABEL: sched.schedule @p
// FSDP: sched.rank 0 {
// FSDP-NEXT: sched.unshard stage 0
// FSDP-NEXT: sched.forward stage 0 mb 0
// FSDP: sched.backward stage 0 mb 1
// FSDP-NEXT: sched.reduce_scatter @dp stage 0 bytes 4096
// FSDP-NEXT: sched.reshard stage 0
// FSDP-NEXT: sched.reduce_grad stage 0
// FSDP-NEXT: sched.all_reduce @dp stage 0 bytes 8
// FSDP-NEXT: sched.optimizer_step
sched.pipeline @p pp 2 microbatches 2 {
  sched.group @dp members [[0], [1]]
  sched.group @ep members [[0], [1]]
  sched.collective all_to_all @ep bytes 64 when before_forward stage 1
  sched.collective reduce_scatter @dp bytes 4096 when after_backward
  sched.collective all_reduce @dp bytes 8 when step
}

// -----

// A single-stage rank starts at its first action, so the prefetch window
// is clamped there; with a split backward the reduction follows the last
// W.
// FSDP-LABEL: sched.schedule @split
// FSDP: sched.backward_weight stage 0 mb 0
// FSDP-NEXT: sched.reduce_scatter @dp stage 0 bytes 16
sched.schedule @split stages 1 microbatches 1 {
  sched.group @dp members [[0]]
  sched.collective reduce_scatter @dp bytes 16 when after_backward
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward_input stage 0 mb 0
    sched.backward_weight stage 0 mb 0
  }
}
