// RUN: sched-opt %s -split-input-file --sched-lower-1f1b --sched-insert-collectives="gather-per-compute=true" | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-1f1b --sched-insert-p2p --sched-insert-collectives="gather-per-compute=true" --sched-verify | sched-opt -split-input-file | FileCheck %s --check-prefix=VERIFIED
// RUN: not sched-opt %s --sched-lower-1f1b --sched-insert-collectives="fsdp=true gather-per-compute=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOTH

// ZeRO-3 as FSDP runs it with resharding after the forward: each compute
// gathers its stage's parameters right before it and frees them right
// after, so a microbatch gathers twice (forward, backward). The declared
// reduce-scatter follows the last backward's reshard; the before-forward
// all-to-all sits between the unshard and its forward.
// CHECK-LABEL: sched.schedule @p
// CHECK: sched.rank 0 {
// CHECK-NEXT: sched.unshard stage 0
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.reshard stage 0
// CHECK-NEXT: sched.unshard stage 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.reshard stage 0
// CHECK-NEXT: sched.unshard stage 0
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: sched.reshard stage 0
// CHECK-NEXT: sched.unshard stage 0
// CHECK-NEXT: sched.backward stage 0 mb 1
// CHECK-NEXT: sched.reshard stage 0
// CHECK-NEXT: sched.reduce_scatter @dp stage 0 bytes 4096
// CHECK-NEXT: sched.optimizer_step
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.unshard stage 1
// CHECK-NEXT: sched.all_to_all @ep stage 1 bytes 64
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.reshard stage 1
// CHECK-NEXT: sched.unshard stage 1
// CHECK-NEXT: sched.backward stage 1 mb 0
// CHECK-NEXT: sched.reshard stage 1
// CHECK-NOT: sched.reduce_grad
// CHECK: sched.reduce_scatter @dp stage 1 bytes 4096
// CHECK-NEXT: sched.optimizer_step
// VERIFIED-LABEL: sched.schedule @p
// VERIFIED: sched.unshard stage 0
sched.pipeline @p pp 2 microbatches 2 {
  sched.mesh dp = 2, pp = 2
  sched.group @dp members [[0], [1]]
  sched.group @ep members [[0], [1]]
  sched.collective all_to_all @ep bytes 64 when before_forward stage 1
  sched.collective reduce_scatter @dp bytes 4096 when after_backward
}

// -----

// An overlap pair is one action: one window around it, for each stage it
// computes (here both halves are stage 0, as combined 1F1B pairs them).
// CHECK-LABEL: sched.schedule @pair
// CHECK: sched.unshard stage 0
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.reshard stage 0
// CHECK-NEXT: sched.unshard stage 0
// CHECK-NEXT: sched.overlap {
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.reshard stage 0
// CHECK-NEXT: sched.unshard stage 0
// CHECK-NEXT: sched.backward stage 0 mb 1
// CHECK-NEXT: sched.reshard stage 0
// CHECK-NEXT: sched.reduce_scatter @dp stage 0 bytes 16
// VERIFIED-LABEL: sched.schedule @pair
// VERIFIED: sched.overlap
sched.schedule @pair stages 1 microbatches 2 {
  sched.mesh dp = 2, pp = 1
  sched.group @dp members [[0]]
  sched.collective reduce_scatter @dp bytes 16 when after_backward
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.overlap {
      sched.forward stage 0 mb 1
      sched.backward stage 0 mb 0
    }
    sched.backward stage 0 mb 1
  }
}

// -----

// The two FSDP forms exclude each other.
// BOTH: error: 'sched.schedule' op fsdp (one gather around a stage's computes) and gather-per-compute (one around each) exclude each other
sched.schedule @both stages 1 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
}
