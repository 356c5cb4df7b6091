// NCCL group semantics under rendezvous: a p2p group posts all of its
// operations at once, each completes once its peer posted the match, and
// the rank goes on when all of them completed. A group against the same
// operations issued one by one on the peer completes; so does a group of
// two sends against two receives in a row. Both shapes also run under
// eager semantics.
// RUN: sched-opt %s -split-input-file --sched-verify="p2p=rendezvous" -verify-diagnostics
// RUN: sched-opt %s -split-input-file --sched-verify="p2p=eager" -verify-diagnostics
// RUN: schedc verify %s --p2p rendezvous | FileCheck %s
// CHECK: verified: @group_against_sequence
// CHECK: verified: @two_sends_grouped
// CHECK: verified: @group_on_the_other_side

// Rank 0 groups the send of microbatch 1 with the receive of microbatch
// 0's gradient; rank 1 first receives microbatch 1, then sends the
// gradient. Rank 1's receive matches the grouped send, then its send
// matches the grouped receive.
sched.schedule @group_against_sequence stages 2 microbatches 2 {
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
    sched.recv forward stage 1 mb 1 from 0
    sched.send backward stage 1 mb 0 to 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
    sched.send backward stage 1 mb 1 to 0
  }
}

// -----

// Two sends posted together against two receives in a row.
sched.schedule @two_sends_grouped stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.p2p_group {
      sched.send forward stage 0 mb 0 to 1
      sched.send forward stage 0 mb 1 to 1
    }
    sched.recv backward stage 0 mb 0 from 1
    sched.backward stage 0 mb 0
    sched.recv backward stage 0 mb 1 from 1
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    sched.recv forward stage 1 mb 0 from 0
    sched.recv forward stage 1 mb 1 from 0
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.send backward stage 1 mb 0 to 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
    sched.send backward stage 1 mb 1 to 0
  }
}

// -----


// The same orders with rank 1's two operations grouped: rank 0's lone send
// of microbatch 1 matches the grouped receive, then rank 0's receive
// matches the grouped send.
sched.schedule @group_on_the_other_side stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.send forward stage 0 mb 0 to 1
    sched.forward stage 0 mb 1
    sched.send forward stage 0 mb 1 to 1
    sched.recv backward stage 0 mb 0 from 1
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
