// The pass estimates its working memory in three steps, each counted
// exactly before it allocates for it (docs/limits.md): the compute ops
// before it reads them (12 at 208 bytes), the sends and receives the
// insertion adds before it inserts them (two per activation or gradient
// that crosses ranks: 12 at 104), and the p2p groups they form before it
// writes their ops (2 at 216, one op on each rank): 2496, 3744 and 4176 bytes. One figure per
// compute op was 2 to 3 times the peak of zb-h2 (few transfers per compute
// op) and of no-pp (none).
// RUN: not sched-opt %s --sched-insert-p2p=memory-budget=2495 2>&1 | FileCheck %s --check-prefix=COMPUTE
// RUN: not sched-opt %s --sched-insert-p2p=memory-budget=3743 2>&1 | FileCheck %s --check-prefix=TRANSFERS
// RUN: not sched-opt %s --sched-insert-p2p=memory-budget=4175 2>&1 | FileCheck %s --check-prefix=GROUPS
// RUN: sched-opt %s --sched-insert-p2p=memory-budget=4176 | FileCheck %s

// COMPUTE: error: cannot insert transfers: inserting transfers needs about 2.4 KiB of working memory (12 actions at 208 bytes each), more than the budget of 2.4 KiB; raise it with the pass option memory-budget=SIZE (docs/limits.md)
// TRANSFERS: error: cannot insert transfers: inserting transfers needs about 3.7 KiB of working memory (12 actions at 208 bytes each, 12 sends and receives at 104 bytes each), more than the budget of 3.7 KiB; raise it with the pass option memory-budget=SIZE (docs/limits.md)
// GROUPS: error: cannot insert transfers: inserting transfers needs about 4.1 KiB of working memory (12 actions at 208 bytes each, 12 sends and receives at 104 bytes each, 2 p2p groups at 216 bytes each), more than the budget of 4.1 KiB; raise it with the pass option memory-budget=SIZE (docs/limits.md)

// 1F1B on two ranks with three microbatches: rank 0's send of F(0,2) and
// receive of B(1,1) are issued together with rank 1's matching pair, one
// group written on each of the two ranks.
// CHECK-LABEL: sched.rank 0
// CHECK: sched.p2p_group {
// CHECK: sched.rank 1
// CHECK: sched.p2p_group {
// CHECK-NOT: sched.p2p_group
sched.schedule @pipeline stages 2 microbatches 3 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.forward stage 0 mb 2
    sched.backward stage 0 mb 1
    sched.backward stage 0 mb 2
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
    sched.forward stage 1 mb 2
    sched.backward stage 1 mb 2
  }
}
