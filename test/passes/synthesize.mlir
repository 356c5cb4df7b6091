// RUN: sched-opt %s -split-input-file --sched-synthesize="memory-limit=4" | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-synthesize="memory-limit=4" --sched-insert-p2p --sched-verify | FileCheck %s --check-prefix=VERIFIED
// RUN: sched-opt %s -split-input-file --sched-synthesize="memory-limit=4" | sched-opt -split-input-file | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-synthesize="memory-limit=4 backward=full" --sched-insert-p2p --sched-verify | FileCheck %s --check-prefix=FULL

// P = 2, M = 2, unit costs, split backward: the last rank starts after one
// forward and then works 3M = 6 steps, so 7 is optimal and the bound says
// so without Z3. Rank 1 runs each I right after its F and lets W wait.
// CHECK-LABEL: sched.schedule @two stages 2 microbatches 2 memory_limit 4 attributes {sched.synthesis = {gap = 0.000000e+00 : f64, lower_bound = 7.000000e+00 : f64, makespan = 7.000000e+00 : f64, optimal = true, solvers = "list"}} {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.backward_input stage 0 mb 0
// CHECK-NEXT: sched.backward_weight stage 0 mb 0
// CHECK-NEXT: sched.backward_input stage 0 mb 1
// CHECK-NEXT: sched.backward_weight stage 0 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.backward_input stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.backward_input stage 1 mb 1
// CHECK-NEXT: sched.backward_weight stage 1 mb 0
// CHECK-NEXT: sched.backward_weight stage 1 mb 1
// CHECK-NEXT: }
// VERIFIED: sched.schedule @two
// VERIFIED: sched.send forward stage 0 mb 0 to 1
sched.pipeline @two pp 2 microbatches 2 {}

// -----

// P = 4, M = 8 under 1F1B's memory (4 activations). Split, ZB-H1's
// (P - 1) + 3M = 27 is the bound and is reached; with a full backward,
// 1F1B's (M + P - 1)(F + B) = 33, which the bound proves optimal.
// CHECK-LABEL: sched.schedule @p4m8 stages 4 microbatches 8 memory_limit 4 attributes {sched.synthesis = {gap = 0.000000e+00 : f64, lower_bound = 2.700000e+01 : f64, makespan = 2.700000e+01 : f64, optimal = true, solvers = "list"}} {
// FULL-LABEL: sched.schedule @p4m8 stages 4 microbatches 8 memory_limit 4 attributes {sched.synthesis = {gap = 0.000000e+00 : f64, lower_bound = 3.300000e+01 : f64, makespan = 3.300000e+01 : f64, optimal = true, solvers = "list"}} {
// FULL-NOT: sched.backward_input
// FULL: sched.backward stage 0 mb 7
// VERIFIED: sched.schedule @p4m8
sched.pipeline @p4m8 pp 4 microbatches 8 {}

// -----

// The V (rank r holds stages r and 2P-1-r): ZB-V's 6M + P - 1 = 25 steps
// for P = 2, M = 4, reached and proved.
// CHECK-LABEL: sched.schedule @v stages 4 microbatches 4 memory_limit 4 attributes {sched.synthesis = {gap = 0.000000e+00 : f64, lower_bound = 2.500000e+01 : f64, makespan = 2.500000e+01 : f64, optimal = true, solvers = "list"}} {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK: sched.forward stage 3 mb 0
// CHECK: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK: sched.forward stage 2 mb 0
// VERIFIED: sched.schedule @v
sched.pipeline @v pp 2 vpp 2 microbatches 4 placement v {}
