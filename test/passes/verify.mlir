// Schedules that verify: generated ones, a hand-lowered 1F1B with p2p
// groups under both semantics, a GPipe order with a global-batch aux loss.
// RUN: sched-opt %s -split-input-file --sched-verify | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-verify="p2p=eager" | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-verify="proof=search" | FileCheck %s
// RUN: schedc generate --strategy 1f1b --pp 4 --microbatches 8 | sched-opt --sched-verify | FileCheck %s --check-prefix=GEN
// RUN: schedc generate --strategy 1f1b --pp 8 --microbatches 3 | sched-opt --sched-verify="proof=search" | FileCheck %s --check-prefix=GEN
// RUN: schedc generate --strategy gpipe --pp 3 --microbatches 5 | sched-opt --sched-verify="proof=search" | FileCheck %s --check-prefix=GEN
// GEN: sched.schedule @pipeline

// CHECK-LABEL: sched.schedule @lowered
sched.schedule @lowered stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.send forward stage 0 mb 0 to 1
    sched.forward stage 0 mb 1
    sched.p2p_group {
      sched.send forward stage 0 mb 1 to 1
      sched.recv backward stage 0 mb 0 from 1
    }
    sched.backward stage 0 mb 0
    sched.recv backward stage 0 mb 1 from 1
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    sched.recv forward stage 1 mb 0 from 0
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.p2p_group {
      sched.send backward stage 1 mb 0 to 0
      sched.recv forward stage 1 mb 1 from 0
    }
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
    sched.send backward stage 1 mb 1 to 0
  }
}

// -----

// All forwards before any backward: what a global-batch aux loss needs.
// CHECK-LABEL: sched.schedule @gpipe_aux
sched.schedule @gpipe_aux stages 2 microbatches 2 {
  sched.aux_head stage 1 scope global_batch
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 0
    sched.backward stage 1 mb 1
  }
}

// -----

// Split backward, collectives in the same order on both ranks, an overlap.
// CHECK-LABEL: sched.schedule @split
sched.schedule @split stages 2 microbatches 2 {
  sched.group @world members [[0, 1]]
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward_input stage 0 mb 0
    sched.backward_input stage 0 mb 1
    sched.backward_weight stage 0 mb 0
    sched.backward_weight stage 0 mb 1
    sched.all_reduce @world stage 0
    sched.barrier @world
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.overlap {
      sched.forward stage 1 mb 1
      sched.backward_input stage 1 mb 0
    }
    sched.backward_input stage 1 mb 1
    sched.backward_weight stage 1 mb 0
    sched.backward_weight stage 1 mb 1
    sched.all_reduce @world stage 0
    sched.barrier @world
  }
}

