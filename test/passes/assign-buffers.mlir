// RUN: sched-opt %s -split-input-file --sched-assign-buffers | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-assign-buffers | sched-opt -split-input-file | FileCheck %s

// 1F1B, P = 2, M = 3: rank 0 keeps two activations alive (min(P - r, M)),
// and slot 0 is reused by F2 once B0 frees it.
// CHECK-LABEL: sched.schedule @one_f_one_b
// CHECK: sched.rank 0 attributes {sched.activation_slots = 2 : i64, sched.recv_slots = 0 : i64}
// CHECK-NEXT: sched.forward stage 0 mb 0 {sched.slot = 0 : i64}
// CHECK-NEXT: sched.forward stage 0 mb 1 {sched.slot = 1 : i64}
// CHECK-NEXT: sched.backward stage 0 mb 0 {sched.slot = 0 : i64}
// CHECK-NEXT: sched.forward stage 0 mb 2 {sched.slot = 0 : i64}
// CHECK-NEXT: sched.backward stage 0 mb 1 {sched.slot = 1 : i64}
// CHECK-NEXT: sched.backward stage 0 mb 2 {sched.slot = 0 : i64}
// CHECK: sched.rank 1 attributes {sched.activation_slots = 1 : i64, sched.recv_slots = 0 : i64}
sched.schedule @one_f_one_b stages 2 microbatches 3 {
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

// -----

// I keeps the activation for W; receive buffers live until their consumer,
// also inside a p2p group.
// CHECK-LABEL: sched.schedule @lowered
// CHECK: sched.rank 1 attributes {sched.activation_slots = 2 : i64, sched.recv_slots = 2 : i64}
// CHECK-NEXT: sched.recv forward stage 1 mb 0 from 0 {sched.slot = 0 : i64}
// CHECK-NEXT: sched.p2p_group {
// CHECK-NEXT: sched.recv forward stage 1 mb 1 from 0 {sched.slot = 1 : i64}
// CHECK-NEXT: }
// CHECK-NEXT: sched.forward stage 1 mb 0 {sched.recv_slot = 0 : i64, sched.slot = 0 : i64}
// CHECK-NEXT: sched.backward_input stage 1 mb 0 {sched.slot = 0 : i64}
// CHECK-NEXT: sched.forward stage 1 mb 1 {sched.recv_slot = 1 : i64, sched.slot = 1 : i64}
// CHECK-NEXT: sched.backward_weight stage 1 mb 0 {sched.slot = 0 : i64}
// CHECK-NEXT: sched.backward stage 1 mb 1 {sched.slot = 1 : i64}
sched.schedule @lowered stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.send forward stage 0 mb 0 to 1
    sched.forward stage 0 mb 1
    sched.send forward stage 0 mb 1 to 1
  }
  sched.rank 1 {
    sched.recv forward stage 1 mb 0 from 0
    sched.p2p_group {
      sched.recv forward stage 1 mb 1 from 0
    }
    sched.forward stage 1 mb 0
    sched.backward_input stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward_weight stage 1 mb 0
    sched.backward stage 1 mb 1
  }
}

// -----

// A shape exchange's receive holds no buffer: only the data receive after
// it takes a slot.
// CHECK-LABEL: sched.schedule @shapes
// CHECK: sched.rank 1 attributes {sched.activation_slots = 1 : i64, sched.recv_slots = 1 : i64}
// CHECK-NEXT: sched.recv shape forward stage 1 mb 0 from 0{{$}}
// CHECK-NEXT: sched.recv forward stage 1 mb 0 from 0 {sched.slot = 0 : i64}
// CHECK-NEXT: sched.forward stage 1 mb 0 {sched.recv_slot = 0 : i64, sched.slot = 0 : i64}
sched.schedule @shapes stages 2 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.send shape forward stage 0 mb 0 to 1
    sched.send forward stage 0 mb 0 to 1
  }
  sched.rank 1 {
    sched.recv shape forward stage 1 mb 0 from 0
    sched.recv forward stage 1 mb 0 from 0
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
}
