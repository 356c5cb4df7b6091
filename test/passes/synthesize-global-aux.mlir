// RUN: sched-opt %s -split-input-file --sched-synthesize="memory-limit=4" | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-synthesize="memory-limit=4" --sched-insert-p2p --sched-verify | FileCheck %s --check-prefix=VERIFIED
// RUN: sched-opt %s -split-input-file --sched-synthesize="memory-limit=4 backward=full" --sched-insert-p2p --sched-verify | FileCheck %s --check-prefix=FULL

// A global_batch aux head at stage 1 of three: every forward of stage 1
// runs before any backward there, so ranks 0 and 1 run their four
// forwards first and hold all four activations (the limit of 4 is the
// least). Rank 2, above the head, is free: from the end of its first
// input at time 2 it never idles (each F(2, m) is ready at m + 3, and it
// alternates F and I, then runs the Ws), so (P - 1) + 3M = 2 + 12 = 14,
// zero bubble, which the bound proves.
// CHECK-LABEL: sched.schedule @aux stages 3 microbatches 4 memory_limit 4 attributes {sched.synthesis = {gap = 0.000000e+00 : f64, lower_bound = 1.400000e+01 : f64, makespan = 1.400000e+01 : f64, optimal = true, solvers = "list"}} {
// CHECK-NEXT: sched.aux_head stage 1 scope global_batch
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.forward stage 0 mb 3
// CHECK-NEXT: sched.backward_input stage 0 mb 0
// CHECK:      sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.forward stage 1 mb 2
// CHECK-NEXT: sched.forward stage 1 mb 3
// CHECK-NEXT: sched.backward_input stage 1 mb 0
// CHECK:      sched.rank 2 {
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.backward_input stage 2 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 1
// The verifier proves the lowered schedule, the head's edges included.
// VERIFIED: sched.schedule @aux
// VERIFIED: sched.aux_head stage 1 scope global_batch
// With a full backward (B = 2): rank 2 works 4 x (F + B) = 12 from time
// 2, and its last B's gradient still goes back through ranks 1 and 0:
// 14 + 2 x 2 = 18, 1F1B's (M + P - 1)(F + B), which the head does not
// cost here.
// FULL: sched.schedule @aux stages 3 microbatches 4 memory_limit 4 attributes {sched.synthesis = {gap = 0.000000e+00 : f64, lower_bound = 1.800000e+01 : f64, makespan = 1.800000e+01 : f64, optimal = true, solvers = "list"}}
sched.pipeline @aux pp 3 microbatches 4 {
  sched.aux_head stage 1 scope global_batch
}

// -----

// A head on the last stage orders every rank: all forwards, then all
// backwards (GPipe's order), every rank at four activations. The last
// forward ends at (P - 1) + M = 6, the first input gradient's chain back
// reaches rank 0 at 6 + P - 1 = 8, and rank 0 then has 4 I and 4 W to
// run: 3M + 2(P - 1) = 16, which the bound proves.
// CHECK-LABEL: sched.schedule @last
// CHECK-SAME: lower_bound = 1.600000e+01 : f64, makespan = 1.600000e+01 : f64, optimal = true
// VERIFIED: sched.schedule @last
sched.pipeline @last pp 3 microbatches 4 {
  sched.aux_head stage 2 scope global_batch
}
