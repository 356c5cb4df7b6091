// RUN: sched-opt %s -split-input-file --sched-lower-interleaved-combined-1f1b | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-interleaved-combined-1f1b | sched-opt -split-input-file | FileCheck %s
// The full lowering verifies under both p2p semantics; the simulation
// (T_F = 1, T_B = 2, an overlap F + B) gives interleaved 1F1B's makespan,
// 3(M v + P - 1) = 27 for M >= P and 3(P v + M - 1) = 12 for M = 1, and
// one stage activation more than it, min(M v, 2(P - 1 - r) + (v - 1) G + 2).
// RUN: sched-opt %s -split-input-file --sched-lower-interleaved-combined-1f1b --sched-insert-p2p --sched-insert-collectives --sched-assign-buffers --sched-verify -o /dev/null
// RUN: sched-opt %s -split-input-file --sched-lower-interleaved-combined-1f1b --sched-insert-p2p --sched-verify=p2p=eager --sched-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=SIM
// SIM: remark: makespan 27; bubble ratio per rank 0.111111 0.111111; peak activations per rank 6 4
// SIM: remark: makespan 12; bubble ratio per rank 0.5 0.5; peak activations per rank 2 2

// P = 2, v = 2, M = 4: two groups of P = 2 microbatches (G = 2); rank r
// holds stages r and 2 + r. Forwards walk (chunk 0: mb 0, 1), (chunk 1:
// mb 0, 1), (chunk 0: mb 2, 3), (chunk 1: mb 2, 3); backwards the same
// groups with chunk 1 first. Rank 0 runs 2(P - 1) + (v - 1) G + 1 = 5
// warm-up forwards, rank 1 runs 3, one more than interleaved 1F1B; then
// each remaining forward beside the oldest pending backward, then the
// remaining backwards alone. Rank 1's first pair runs the forward of
// stage 3 microbatch 1 beside the backward of stage 3 microbatch 0, whose
// own forward came before: without the extra forward it would have been
// paired with it.
// CHECK-LABEL: sched.schedule @p2v2m4 stages 4 microbatches 4 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 1
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.overlap layerwise {
// CHECK-NEXT: sched.forward stage 0 mb 3
// CHECK-NEXT: sched.backward stage 2 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.overlap layerwise {
// CHECK-NEXT: sched.forward stage 2 mb 2
// CHECK-NEXT: sched.backward stage 2 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.overlap layerwise {
// CHECK-NEXT: sched.forward stage 2 mb 3
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.backward stage 0 mb 1
// CHECK-NEXT: sched.backward stage 2 mb 2
// CHECK-NEXT: sched.backward stage 2 mb 3
// CHECK-NEXT: sched.backward stage 0 mb 2
// CHECK-NEXT: sched.backward stage 0 mb 3
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.overlap layerwise {
// CHECK-NEXT: sched.forward stage 3 mb 1
// CHECK-NEXT: sched.backward stage 3 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.overlap layerwise {
// CHECK-NEXT: sched.forward stage 1 mb 2
// CHECK-NEXT: sched.backward stage 3 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.overlap layerwise {
// CHECK-NEXT: sched.forward stage 1 mb 3
// CHECK-NEXT: sched.backward stage 1 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.overlap layerwise {
// CHECK-NEXT: sched.forward stage 3 mb 2
// CHECK-NEXT: sched.backward stage 1 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.overlap layerwise {
// CHECK-NEXT: sched.forward stage 3 mb 3
// CHECK-NEXT: sched.backward stage 3 mb 2
// CHECK-NEXT: }
// CHECK-NEXT: sched.backward stage 3 mb 3
// CHECK-NEXT: sched.backward stage 1 mb 2
// CHECK-NEXT: sched.backward stage 1 mb 3
// CHECK-NEXT: }
// CHECK-NEXT: }
sched.pipeline @p2v2m4 pp 2 vpp 2 microbatches 4 {}

// -----

// M = 1: the warm-up takes every forward, so nothing overlaps.
// CHECK-LABEL: sched.schedule @p2v2m1 stages 4 microbatches 1 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 0
// CHECK-NEXT: sched.backward stage 2 mb 0
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.backward stage 3 mb 0
// CHECK-NEXT: sched.backward stage 1 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: }
sched.pipeline @p2v2m1 pp 2 vpp 2 microbatches 1 {}
