// DualPipeV's per-rank prefix (warm-up and steady phase) stops once its
// microbatches are done: 16,384 ranks with 2 microbatches lower in linear
// memory. The prefix grew with pp on every rank, quadratic in all: 714 MB at
// pp 8,192, "LLVM ERROR: out of memory" at 16,384 (through sched-opt, the
// plugin, schedc generate and schedc.generate alike).
// RUN: %vmem-limit 1000000 sched-opt %s --sched-lower-dualpipe-v | FileCheck %s
// RUN: %vmem-limit 1000000 schedc generate --strategy dualpipe-v --pp 16384 --microbatches 2 --emit mlir | FileCheck %s

// With M = 2 each rank runs its two microbatches down and up the V: two
// forwards of each chunk, and their gradients.
// CHECK: sched.schedule @{{p|pipeline}} stages 32768 microbatches 2 {
// CHECK: sched.rank 16383 {
// CHECK-NEXT: sched.forward stage 16383 mb 0
// CHECK-NEXT: sched.forward stage 16384 mb 0
sched.pipeline @p pp 16384 vpp 2 microbatches 2 {}
