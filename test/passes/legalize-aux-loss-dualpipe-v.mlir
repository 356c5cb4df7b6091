// A global-batch aux head at stage 3 on DualPipe-V (4 ranks, 8 stages in a V, 8 microbatches): the lowering refuses the
// order, sched-verify and mode=error report the conflict and name the head,
// mode=reorder makes it verify (compute-only, and after sched-insert-p2p
// under both p2p semantics), and mode=aux-free verifies with the bias
// update and the peak of the same schedule without the head.

// RUN: not sched-opt %s --sched-lower-dualpipe-v 2>&1 | FileCheck %s --check-prefix=LOWER
// LOWER: :[[@LINE+11]]:3: error: the dualpipe-v order breaks the global_batch aux head at stage 3: backward of stage 3 microbatch 0 runs before the forward of microbatch 7 reaches aux head at stage 3 (scope global_batch); ways out: reorder {{.*}}mode=reorder{{.*}}mode=aux-free{{.*}}scope microbatch or sequence
// LOWER-NOT: error

// RUN: not sched-opt %s --sched-lower-dualpipe-v=aux-conflicts=keep --sched-verify 2>&1 | FileCheck %s --check-prefix=CONFLICT
// CONFLICT: error: [dependency] backward of stage 3 microbatch 0 runs before the forward of microbatch 7 reaches aux head at stage 3 (scope global_batch) on rank 3
// CONFLICT: :[[@LINE+6]]:3: note: aux head at stage 3 declared here

// RUN: not sched-opt %s --sched-lower-dualpipe-v=aux-conflicts=keep --sched-legalize-aux-loss 2>&1 | FileCheck %s --check-prefix=ERROR
// ERROR: :[[@LINE+3]]:3: error: backward of stage 3 microbatch 0 runs before the forward of microbatch 7 reaches aux head at stage 3 (scope global_batch) on rank 3; fix: sched-legalize-aux-loss mode=reorder

sched.pipeline @p pp 4 vpp 2 microbatches 8 {
  sched.aux_head stage 3 scope global_batch
}

// RUN: sched-opt %s --pass-pipeline='builtin.module(sched-lower-dualpipe-v{aux-conflicts=keep},sched-legalize-aux-loss{mode=reorder},sched-verify)' -o /dev/null
// RUN: sched-opt %s --pass-pipeline='builtin.module(sched-lower-dualpipe-v{aux-conflicts=keep},sched-insert-p2p,sched-legalize-aux-loss{mode=reorder},sched-verify{p2p=rendezvous},sched-verify{p2p=eager})' -o /dev/null
// RUN: sched-opt %s --pass-pipeline='builtin.module(sched-lower-dualpipe-v{aux-conflicts=keep},sched-legalize-aux-loss{mode=reorder},sched-insert-p2p,sched-insert-collectives,sched-verify{p2p=rendezvous},sched-verify{p2p=eager})' -o /dev/null

// The peaks of the schedule without the head, then with the head made
// aux-free (compute-only and after sched-insert-p2p): the same.
// RUN: sed 's/scope global_batch/scope microbatch/' %s | sched-opt --sched-lower-dualpipe-v --sched-insert-p2p --sched-insert-collectives -o %t.usual.mlir
// RUN: sched-opt %s --pass-pipeline='builtin.module(sched-lower-dualpipe-v{aux-conflicts=keep},sched-legalize-aux-loss{mode=aux-free},sched-insert-p2p,sched-insert-collectives)' -o %t.free.mlir
// RUN: sched-opt %s --pass-pipeline='builtin.module(sched-lower-dualpipe-v{aux-conflicts=keep},sched-insert-p2p,sched-legalize-aux-loss{mode=aux-free},sched-insert-collectives)' -o %t.free-lowered.mlir
// RUN: schedc verify --json %t.usual.mlir > %t.json
// RUN: schedc verify --json %t.free.mlir >> %t.json
// RUN: schedc verify --json %t.free-lowered.mlir >> %t.json
// RUN: FileCheck %s --check-prefix=PEAK < %t.json
// PEAK: "peak_memory": [
// PEAK-NEXT: [[R0:[0-9.]+]],
// PEAK-NEXT: [[R1:[0-9.]+]],
// PEAK-NEXT: [[R2:[0-9.]+]],
// PEAK-NEXT: [[R3:[0-9.]+]]
// PEAK: "verdict": "verified"
// PEAK: "peak_memory": [
// PEAK-NEXT: [[R0]],
// PEAK-NEXT: [[R1]],
// PEAK-NEXT: [[R2]],
// PEAK-NEXT: [[R3]]
// PEAK: "verdict": "verified"
// PEAK: "peak_memory": [
// PEAK-NEXT: [[R0]],
// PEAK-NEXT: [[R1]],
// PEAK-NEXT: [[R2]],
// PEAK-NEXT: [[R3]]
// PEAK: "verdict": "verified"

// The bias update: once, on rank 3, after the last gradient of stage 3 and
// before the optimizer step.
// RUN: FileCheck %s --check-prefix=BIAS < %t.free.mlir
// BIAS: sched.aux_head stage 3 scope aux_free bias @dp bytes 1024
// BIAS: sched.group @dp members {{\[\[0\], \[1\], \[2\], \[3\]\]}}
// BIAS-LABEL: sched.rank 3
// BIAS: sched.all_reduce @dp stage 3 bytes 1024
// BIAS-NOT: {{sched\.(forward|backward)[a-z_]* stage 3 mb}}
// BIAS-NOT: all_reduce
// BIAS: sched.optimizer_step
