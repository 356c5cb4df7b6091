// RUN: sched-opt %s --sched-lower-1f1b --sched-simulate -verify-diagnostics
// RUN: sched-opt %s --sched-lower-1f1b --sched-simulate="annotate=true" 2>/dev/null | FileCheck %s
// RUN: sched-opt %s --sched-lower-1f1b --sched-simulate="cost=f=2,b=4" 2>&1 | FileCheck %s --check-prefix=COST
// Transfers, collectives and the optimizer step (which names no stage)
// cost nothing: the fully lowered schedule simulates the same.
// RUN: sched-opt %s --sched-lower-1f1b --sched-insert-p2p --sched-insert-collectives --sched-simulate 2>&1 >/dev/null | FileCheck %s --check-prefix=LOWERED
// LOWERED: remark: makespan 9; bubble ratio per rank 0.333333 0.333333; peak activations per rank 2 1

// 1F1B, P = 2, M = 2, unit stage times (B = 2). Rank 0: F0 [0,1], F1
// [1,2], then B0 when rank 1's B0 ends at 4: [4,6], B1 after rank 1's B1
// ends at 7: [7,9]. Rank 1: F0 [1,2], B0 [2,4], F1 [4,5], B1 [5,7].
// Makespan 9, busy 6 on each rank: bubble ratio 3/9. Peaks: rank 0 holds
// both forwards, rank 1 one.
// expected-remark @below {{makespan 9; bubble ratio per rank 0.333333 0.333333; peak activations per rank 2 1}}
sched.pipeline @p pp 2 microbatches 2 {}
// CHECK-LABEL: sched.schedule @p stages 2 microbatches 2 attributes {sched.makespan = 9.000000e+00 : f64} {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0 {sched.end = 1.000000e+00 : f64, sched.start = 0.000000e+00 : f64}
// CHECK-NEXT: sched.forward stage 0 mb 1 {sched.end = 2.000000e+00 : f64, sched.start = 1.000000e+00 : f64}
// CHECK-NEXT: sched.backward stage 0 mb 0 {sched.end = 6.000000e+00 : f64, sched.start = 4.000000e+00 : f64}
// CHECK-NEXT: sched.backward stage 0 mb 1 {sched.end = 9.000000e+00 : f64, sched.start = 7.000000e+00 : f64}
// CHECK:      sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0 {sched.end = 2.000000e+00 : f64, sched.start = 1.000000e+00 : f64}
// CHECK-NEXT: sched.backward stage 1 mb 0 {sched.end = 4.000000e+00 : f64, sched.start = 2.000000e+00 : f64}
// CHECK-NEXT: sched.forward stage 1 mb 1 {sched.end = 5.000000e+00 : f64, sched.start = 4.000000e+00 : f64}
// CHECK-NEXT: sched.backward stage 1 mb 1 {sched.end = 7.000000e+00 : f64, sched.start = 5.000000e+00 : f64}
// Doubled times double the makespan; the ratios stay.
// COST: remark: makespan 18; bubble ratio per rank 0.333333 0.333333; peak activations per rank 2 1
