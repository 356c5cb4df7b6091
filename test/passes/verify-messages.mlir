// Message matching: between two ranks, sends of one and receives of the
// other pair up in issue order (PyTorch's p2p ops carry no tag; NCCL
// matches in order), and each pair agrees on direction, stage,
// microbatch and bytes; collectives of a member set agree on bytes. Each
// mismatch is a transfer (collective) violation at both cells, under
// either point-to-point semantics.
// RUN: sched-opt %s -split-input-file --sched-verify="p2p=eager" -verify-diagnostics
// RUN: sched-opt %s -split-input-file --sched-verify="p2p=rendezvous" -verify-diagnostics

// Rank 1 posts its receives in the other order than rank 0 sends: the
// first receive (microbatch 1) would get microbatch 0's activation.
sched.schedule @swapped_receives stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    // expected-error @below {{[transfer] SEND_F(stage 0, mb 0) to rank 1 is matched with RECV_F(stage 1, mb 1) from rank 0: they are the 1st send and receive between rank 0 and rank 1, and point-to-point operations between two ranks match in issue order (they carry no tag); the send carries microbatch 0, the receive expects microbatch 1}}
    // expected-note @below {{the 1st send of the pair is here}}
    sched.send forward stage 0 mb 0 to 1
    sched.forward stage 0 mb 1
    // expected-error @below {{[transfer] SEND_F(stage 0, mb 1) to rank 1 is matched with RECV_F(stage 1, mb 0) from rank 0: they are the 2nd send}}
    // expected-note @below {{the 2nd send of the pair is here}}
    sched.send forward stage 0 mb 1 to 1
    sched.recv backward stage 0 mb 0 from 1
    sched.backward stage 0 mb 0
    sched.recv backward stage 0 mb 1 from 1
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    // expected-error @below {{[transfer] RECV_F(stage 1, mb 1) from rank 0 is matched with SEND_F(stage 0, mb 0) to rank 1: they are the 1st send and receive}}
    // expected-note @below {{the 1st receive of the pair is here}}
    sched.recv forward stage 1 mb 1 from 0
    // expected-error @below {{[transfer] RECV_F(stage 1, mb 0) from rank 0 is matched with SEND_F(stage 0, mb 1) to rank 1}}
    // expected-note @below {{the 2nd receive of the pair is here}}
    sched.recv forward stage 1 mb 0 from 0
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.send backward stage 1 mb 0 to 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
    sched.send backward stage 1 mb 1 to 0
  }
}

// -----

// A send of 4,096 bytes into a receive of 1,024.
sched.schedule @sizes stages 2 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    // expected-error @below {{[transfer] SEND_F(stage 0, mb 0) to rank 1 is matched with RECV_F(stage 1, mb 0) from rank 0: they are the 1st send and receive between rank 0 and rank 1, and point-to-point operations between two ranks match in issue order (they carry no tag); a send of 4096 bytes into a receive of 1024 bytes}}
    // expected-note @below {{the 1st send of the pair is here}}
    sched.send forward stage 0 mb 0 to 1 bytes 4096
    sched.recv backward stage 0 mb 0 from 1
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    // expected-error @below {{a send of 4096 bytes into a receive of 1024 bytes}}
    // expected-note @below {{the 1st receive of the pair is here}}
    sched.recv forward stage 1 mb 0 from 0 bytes 1024
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.send backward stage 1 mb 0 to 0
  }
}

// -----

// A receive without bytes takes the output size of the lower stage of the
// pair (stage 0 declares 64); the send says 4096.
sched.schedule @declared_output stages 2 microbatches 1 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 8 weight_grad 0 parameters 0 output 64
  sched.stage 1 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 8 weight_grad 0 parameters 0 output 64
  sched.rank 0 {
    sched.forward stage 0 mb 0
    // expected-error @below {{a send of 4096 bytes into a receive of 64 bytes}}
    // expected-note @below {{the 1st send of the pair is here}}
    sched.send forward stage 0 mb 0 to 1 bytes 4096
    sched.recv backward stage 0 mb 0 from 1
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    // expected-error @below {{a send of 4096 bytes into a receive of 64 bytes}}
    // expected-note @below {{the 1st receive of the pair is here}}
    sched.recv forward stage 1 mb 0 from 0
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.send backward stage 1 mb 0 to 0
  }
}

// -----

// Rank 0 sends twice to rank 1, which receives once.
sched.schedule @extra_send stages 2 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    // expected-note @below {{the first copy is here}}
    sched.send forward stage 0 mb 0 to 1
    // expected-error @below {{[duplicate] duplicate SEND_F(stage 0, mb 0) to rank 1: it already runs on rank 0}}
    // expected-error @below {{[transfer] SEND_F(stage 0, mb 0) to rank 1 has no matching receive: it is the 2nd send from rank 0 to rank 1, which posts only 1 receive(s) from rank 0}}
    sched.send forward stage 0 mb 0 to 1
    sched.recv backward stage 0 mb 0 from 1
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.recv forward stage 1 mb 0 from 0
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.send backward stage 1 mb 0 to 0
  }
}

// -----

// An all_reduce of 4,096 bytes on one member and 8 on the other.
sched.schedule @collective_bytes stages 2 microbatches 1 {
  sched.group @dp members [[0, 1]]
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    // expected-note @below {{rank 0 issues this one}}
    sched.all_reduce @dp bytes 4096
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    // expected-error @below {{[collective] collective #0 on group @dp: rank 1 issues all_reduce @dp of 8 bytes, but rank 0 issues all_reduce @dp of 4096 bytes; members of a group must issue the same collectives (kind, stage and bytes) in the same order}}
    sched.all_reduce @dp bytes 8
  }
}
