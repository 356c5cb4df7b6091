// The pass refuses a schedule whose transfers would take more working
// memory than its budget, before reading it (docs/limits.md).
// RUN: sched-opt %s --sched-insert-p2p=memory-budget=512 -verify-diagnostics
// RUN: sched-opt %s --sched-insert-p2p=memory-budget=1048576 | FileCheck %s

// Four compute actions at a few hundred bytes each: over 512 bytes, well
// within 1 MiB. (insert-p2p-budget-counts.mlir has the transfers and their
// groups.)
// expected-error-re @below {{cannot insert transfers: inserting transfers needs about {{.*}} of working memory (4 actions at {{[0-9]+}} bytes each), more than the budget of 512 bytes; raise it with the pass option memory-budget=SIZE (docs/limits.md)}}
sched.schedule @s stages 2 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
}
// CHECK: sched.send forward stage 0 mb 0 to 1
