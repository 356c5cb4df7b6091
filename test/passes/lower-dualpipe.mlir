// RUN: sched-opt %s -split-input-file --sched-lower-dualpipe | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-dualpipe | sched-opt -split-input-file | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-lower-dualpipe --sched-insert-p2p --sched-verify | FileCheck %s --check-prefix=VERIFIED

// P = 2, M = 4: replica A (stages 0, 1 on ranks 0, 1) runs mbs 0 and 1,
// replica B (stages 2, 3 on ranks 1, 0) runs mbs 2 and 3. Both ranks have
// h = min(r, P-1-r) = 0 and are middle ranks; rank 0's phase 0 is replica
// A, rank 1's is replica B. DeepSeek's phases with P/2 - h - 1 = 0:
//   2: one pair F phase 0, F phase 1;
//   4: M/2 - P + h + 1 = 1 step: (middle rank) F phase 0 and B phase 1
//      apart, then F phase 1 overlapped with B phase 0;
//   6: one step: B phase 1 whole, then (h even, i = (h+1)/2 = 0) B phase 0
//      split: I now, its W waiting;
//   8: the waiting W.
// The declarations naming a stage get a copy for replica B, P stages on.
// CHECK-LABEL: sched.schedule @p2m4 stages 4 microbatches 4 replicas 2 {
// CHECK-NEXT: sched.stage 0 layers 2 forward 1.000000e+00 backward_input 2.000000e+00 backward_weight 1.000000e+00 activation 8 weight_grad 4 parameters 100
// CHECK-NEXT: sched.stage 1 layers 2 forward 1.000000e+00 backward_input 1.000000e+00 backward_weight 1.000000e+00 activation 8 weight_grad 4 parameters 300
// CHECK-NEXT: sched.aux_head stage 1 scope microbatch
// CHECK-NEXT: sched.group @dp members {{\[}}[0], [1]]
// CHECK-NEXT: sched.collective all_reduce @dp bytes 16 when after_backward stage 1
// CHECK-NEXT: sched.collective all_to_all @dp bytes 8 when after_forward
// CHECK-NEXT: sched.stage 2 layers 2 forward 1.000000e+00 backward_input 2.000000e+00 backward_weight 1.000000e+00 activation 8 weight_grad 4 parameters 100
// CHECK-NEXT: sched.stage 3 layers 2 forward 1.000000e+00 backward_input 1.000000e+00 backward_weight 1.000000e+00 activation 8 weight_grad 4 parameters 300
// CHECK-NEXT: sched.aux_head stage 3 scope microbatch
// CHECK-NEXT: sched.collective all_reduce @dp bytes 16 when after_backward stage 3
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 2
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.backward stage 3 mb 2
// CHECK-NEXT: sched.overlap {
// CHECK-NEXT: sched.forward stage 3 mb 3
// CHECK-NEXT: sched.backward stage 0 mb 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.backward stage 3 mb 3
// CHECK-NEXT: sched.backward_input stage 0 mb 1
// CHECK-NEXT: sched.backward_weight stage 0 mb 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.rank 1 {
// CHECK-NEXT: sched.forward stage 2 mb 2
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.forward stage 2 mb 3
// CHECK-NEXT: sched.backward stage 1 mb 0
// CHECK-NEXT: sched.overlap {
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.backward stage 2 mb 2
// CHECK-NEXT: }
// CHECK-NEXT: sched.backward stage 1 mb 1
// CHECK-NEXT: sched.backward_input stage 2 mb 3
// CHECK-NEXT: sched.backward_weight stage 2 mb 3
// CHECK-NEXT: }
// CHECK-NEXT: }
// VERIFIED: sched.schedule @p2m4 stages 4 microbatches 4 replicas 2
sched.pipeline @p2m4 pp 2 microbatches 4 {
  sched.stage 0 layers 2 forward 1.0 backward_input 2.0 backward_weight 1.0 activation 8 weight_grad 4 parameters 100
  sched.stage 1 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 8 weight_grad 4 parameters 300
  sched.aux_head stage 1 scope microbatch
  sched.group @dp members [[0], [1]]
  sched.collective all_reduce @dp bytes 16 when after_backward stage 1
  sched.collective all_to_all @dp bytes 8 when after_forward
}

// -----

// P = 4, M = 8, shape only: rank 0 (h = 0, phase 0 = replica A, stage 0
// with mbs 0-3; phase 1 = replica B, stage 7 with mbs 4-7) runs
// 2(P/2 - 1) = 2 forwards of stage 0, the pair (F stage 0, F stage 7),
// then P/2 - 1 = 1 zero-bubble step: I of stage 7, its W, F of stage 7.
// CHECK-LABEL: sched.schedule @p4m8 stages 8 microbatches 8 replicas 2 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.forward stage 0 mb 2
// CHECK-NEXT: sched.forward stage 7 mb 4
// CHECK-NEXT: sched.backward_input stage 7 mb 4
// CHECK-NEXT: sched.backward_weight stage 7 mb 4
// CHECK-NEXT: sched.forward stage 7 mb 5
// CHECK-NEXT: sched.overlap {
// CHECK-NEXT: sched.forward stage 0 mb 3
// CHECK-NEXT: sched.backward stage 7 mb 5
// CHECK-NEXT: }
// Rank 3 mirrors it: its phase 0 is replica B (stage 4, mbs 4-7).
// CHECK: sched.rank 3 {
// CHECK-NEXT: sched.forward stage 4 mb 4
// CHECK-NEXT: sched.forward stage 4 mb 5
// CHECK-NEXT: sched.forward stage 4 mb 6
// CHECK-NEXT: sched.forward stage 3 mb 0
// CHECK-NEXT: sched.backward_input stage 3 mb 0
// CHECK-NEXT: sched.backward_weight stage 3 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 1
// VERIFIED: sched.schedule @p4m8 stages 8 microbatches 8 replicas 2
sched.pipeline @p4m8 pp 4 microbatches 8 {}
