// RUN: sched-translate --export-torch-csv -split-input-file %s | FileCheck %s --check-prefix=COMPUTE
// RUN: sched-translate --export-torch-csv-comms -split-input-file %s | FileCheck %s --check-prefix=COMMS

// A compute-only schedule with an overlap (forward first in its cell, as
// PyTorch writes it). With comms, the transfers are inserted first, as
// sched-insert-p2p does (test/passes/insert-p2p.mlir, @hand).
// COMPUTE:      0F0,(0F1;0B0)OVERLAP_F_B,0B1
// COMPUTE-NEXT: 1F0,1B0,1F1,1B1
// COMMS:      0F0,0SEND_F0,0RECV_B0,(0F1;0B0)OVERLAP_F_B,0SEND_F1,0RECV_B1,0B1
// COMMS-NEXT: 1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1
sched.schedule @hand stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.overlap {
      sched.backward stage 0 mb 0
      sched.forward stage 0 mb 1
    }
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
  }
}

// -----

// A lowered schedule: its transfers are kept (comms) or left out
// (compute); a p2p group becomes one cell per member. Rank 1 has no
// program for rank id 1, so its row is empty; UNSHARD, RESHARD and
// REDUCE_GRAD have cells of their own.
// COMPUTE:      0UNSHARD,0F0,0B0,0REDUCE_GRAD,0RESHARD
// COMPUTE-EMPTY:
// COMPUTE-NEXT: 1F0,1B0
// COMMS:      0UNSHARD,0F0,0SEND_F0,0RECV_B0,0B0,0REDUCE_GRAD,0RESHARD
// COMMS-EMPTY:
// COMMS-NEXT: 1RECV_F0,1F0,1B0,1SEND_B0
sched.schedule @lowered stages 2 microbatches 1 {
  sched.rank 0 {
    sched.unshard stage 0
    sched.forward stage 0 mb 0
    sched.p2p_group {
      sched.send forward stage 0 mb 0 to 2
      sched.recv backward stage 0 mb 0 from 2
    }
    sched.backward stage 0 mb 0
    sched.reduce_grad stage 0
    sched.reshard stage 0
  }
  sched.rank 2 {
    sched.recv forward stage 1 mb 0 from 0
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.send backward stage 1 mb 0 to 0
  }
}
