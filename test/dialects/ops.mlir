// Round trip of every sched op through the custom assembly format.
// RUN: sched-opt %s | sched-opt | FileCheck %s
// RUN: sched-opt %s --mlir-print-op-generic | sched-opt | FileCheck %s

// CHECK-LABEL: sched.pipeline @spec pp 2 vpp 2 microbatches 4 placement v memory_limit 80000000000 {
// CHECK-NEXT: sched.stage 0 layers 8 forward 1.000000e+00 backward_input 1.500000e+00 backward_weight 5.000000e-01 activation 1024 weight_grad 512 parameters 4096 output 64{{$}}
// CHECK: sched.stage 3 layers 8
// CHECK-NEXT: sched.mesh dp = 2, pp = 2, tp = 8, "expert parallel" = 1
// CHECK-NEXT: sched.aux_head stage 3 scope global_batch
// CHECK-NEXT: sched.aux_head stage 0 scope aux_free{{$}}
// CHECK-NEXT: sched.aux_head stage 1 scope aux_free bias @dp bytes 1024{{$}}
// CHECK-NEXT: sched.group @dp members {{\[}}[0], [1]]
// CHECK-NEXT: sched.group @tp members {{\[}}[0, 1]]
// CHECK-NEXT: sched.collective reduce_scatter @dp bytes 4096 when after_backward stage 0
// CHECK-NEXT: sched.collective all_to_all @tp bytes 128 when before_forward{{$}}
sched.pipeline @spec pp 2 vpp 2 microbatches 4 placement v memory_limit 80000000000 {
  sched.stage 0 layers 8 forward 1.0 backward_input 1.5 backward_weight 0.5 activation 1024 weight_grad 512 parameters 4096 output 64
  sched.stage 1 layers 8 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1024 weight_grad 512 parameters 4096
  sched.stage 2 layers 8 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1024 weight_grad 512 parameters 4096
  sched.stage 3 layers 8 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1024 weight_grad 512 parameters 4096
  sched.mesh dp = 2, pp = 2, tp = 8, "expert parallel" = 1
  sched.aux_head stage 3 scope global_batch
  sched.aux_head stage 0 scope aux_free
  sched.aux_head stage 1 scope aux_free bias @dp bytes 1024
  sched.group @dp members [[0], [1]]
  sched.group @tp members [[0, 1]]
  sched.collective reduce_scatter @dp bytes 4096 when after_backward stage 0
  sched.collective all_to_all @tp bytes 128 when before_forward
}

// Defaults (vpp 1, loop placement) are elided when printed.
// CHECK-LABEL: sched.pipeline @defaults pp 4 microbatches 8 {
// CHECK-NEXT: }
sched.pipeline @defaults pp 4 vpp 1 microbatches 8 placement loop {
}

// CHECK-LABEL: sched.schedule @lowered stages 2 microbatches 2 memory_limit 6 {
// CHECK: sched.aux_head stage 1 scope microbatch
// CHECK: sched.group @pair members {{\[}}[0, 1]]
// CHECK: sched.rank 0 {
// CHECK-NEXT: sched.unshard stage 0
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.send forward stage 0 mb 0 to 1 bytes 1024
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.p2p_group {
// CHECK-NEXT: sched.send forward stage 0 mb 1 to 1
// CHECK-NEXT: sched.recv backward stage 0 mb 0 from 1
// CHECK-NEXT: }
// CHECK-NEXT: sched.backward_input stage 0 mb 0
// CHECK-NEXT: sched.backward_weight stage 0 mb 0
// CHECK-NEXT: sched.recv backward stage 0 mb 1 from 1
// CHECK-NEXT: sched.backward stage 0 mb 1
// CHECK-NEXT: sched.reshard stage 0
// CHECK-NEXT: sched.reduce_grad stage 0
// CHECK-NEXT: sched.all_reduce @pair stage 0 bytes 4096
// CHECK-NEXT: sched.reduce_scatter @pair
// CHECK-NEXT: sched.all_gather @pair bytes 64
// CHECK-NEXT: sched.all_to_all @pair stage 0
// CHECK-NEXT: sched.barrier @pair
// CHECK-NEXT: sched.optimizer_step
// CHECK-NEXT: }
// CHECK: sched.rank 1 {
// CHECK-NEXT: sched.recv forward stage 1 mb 0 from 0 bytes 1024
// CHECK-NEXT: sched.forward stage 1 mb 0
// CHECK-NEXT: sched.p2p_group {
// CHECK-NEXT: sched.send backward stage 1 mb 0 to 0
// CHECK-NEXT: sched.recv forward stage 1 mb 1 from 0
// CHECK-NEXT: }
// CHECK-NEXT: sched.overlap {
// CHECK-NEXT: sched.forward stage 1 mb 1
// CHECK-NEXT: sched.backward stage 1 mb 0
// CHECK-NEXT: }
sched.schedule @lowered stages 2 microbatches 2 memory_limit 6 {
  sched.aux_head stage 1 scope microbatch
  sched.group @pair members [[0, 1]]
  sched.rank 0 {
    sched.unshard stage 0
    sched.forward stage 0 mb 0
    sched.send forward stage 0 mb 0 to 1 bytes 1024
    sched.forward stage 0 mb 1
    sched.p2p_group {
      sched.send forward stage 0 mb 1 to 1
      sched.recv backward stage 0 mb 0 from 1
    }
    sched.backward_input stage 0 mb 0
    sched.backward_weight stage 0 mb 0
    sched.recv backward stage 0 mb 1 from 1
    sched.backward stage 0 mb 1
    sched.reshard stage 0
    sched.reduce_grad stage 0
    sched.all_reduce @pair stage 0 bytes 4096
    sched.reduce_scatter @pair
    sched.all_gather @pair bytes 64
    sched.all_to_all @pair stage 0
    sched.barrier @pair
    sched.optimizer_step
  }
  sched.rank 1 {
    sched.recv forward stage 1 mb 0 from 0 bytes 1024
    sched.forward stage 1 mb 0
    sched.p2p_group {
      sched.send backward stage 1 mb 0 to 0
      sched.recv forward stage 1 mb 1 from 0
    }
    sched.overlap {
      sched.forward stage 1 mb 1
      sched.backward stage 1 mb 0
    }
    sched.send backward stage 1 mb 1 to 0
    sched.all_reduce @pair stage 0 bytes 4096
    sched.reduce_scatter @pair
    sched.all_gather @pair bytes 64
    sched.all_to_all @pair stage 0
    sched.barrier @pair
    sched.optimizer_step
  }
}

// Two pipeline replicas (DualPipe): replica A is stages 0-1 with mb 0,
// replica B stages 2-3 with mb 1. The default of one replica is not
// printed.
// CHECK-LABEL: sched.schedule @dual stages 4 microbatches 2 replicas 2 {
// CHECK-NEXT: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.forward stage 3 mb 1
// CHECK: sched.schedule @single stages 1 microbatches 1 {
sched.schedule @dual stages 4 microbatches 2 replicas 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 3 mb 1
  }
}
sched.schedule @single stages 1 microbatches 1 replicas 1 {}

// Rank ids need not be contiguous and run up to 2^31 - 1; a transfer to its
// own rank is well-formed (the schedule verifier reports it).
// CHECK-LABEL: sched.schedule @sparse_ranks stages 2 microbatches 1 {
// CHECK-NEXT: sched.group @g members {{\[}}[7, 2147483647]]
// CHECK-NEXT: sched.rank 7 {
// CHECK-NEXT: sched.send forward stage 0 mb 0 to 2147483647
// CHECK-NEXT: sched.send forward stage 0 mb 0 to 7
// CHECK: sched.rank 2147483647 {
// CHECK-NEXT: sched.recv forward stage 1 mb 0 from 7
sched.schedule @sparse_ranks stages 2 microbatches 1 {
  sched.group @g members [[7, 2147483647]]
  sched.rank 7 {
    sched.send forward stage 0 mb 0 to 2147483647
    sched.send forward stage 0 mb 0 to 7
  }
  sched.rank 2147483647 {
    sched.recv forward stage 1 mb 0 from 7
  }
}

// A collective that names the declaration it fulfils.
// CHECK-LABEL: sched.schedule @named stages 1 microbatches 1 {
// CHECK: sched.all_reduce @dp stage 0 bytes 8 declaration 0{{$}}
// CHECK-NEXT: sched.barrier @dp declaration 1{{$}}
sched.schedule @named stages 1 microbatches 1 {
  sched.group @dp members [[0]]
  sched.collective all_reduce @dp bytes 8 when step
  sched.collective barrier @dp bytes 0 when step
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    sched.all_reduce @dp stage 0 bytes 8 declaration 0
    sched.barrier @dp declaration 1
  }
}

// Shape exchanges (Megatron-LM's variable_seq_lengths): `shape` before the
// direction, beside a communicator and bytes.
// CHECK-LABEL: sched.schedule @shapes stages 2 microbatches 1 {
// CHECK: sched.send shape forward stage 0 mb 0 to 1{{$}}
// CHECK-NEXT: sched.send forward stage 0 mb 0 to 1{{$}}
// CHECK: sched.recv shape forward stage 1 mb 0 from 0 on @pp bytes 24{{$}}
// CHECK-NEXT: sched.recv forward stage 1 mb 0 from 0{{$}}
sched.schedule @shapes stages 2 microbatches 1 {
  sched.group @pp members [[0, 1]]
  sched.rank 0 {
    sched.send shape forward stage 0 mb 0 to 1
    sched.send forward stage 0 mb 0 to 1
  }
  sched.rank 1 {
    sched.recv shape forward stage 1 mb 0 from 0 on @pp bytes 24
    sched.recv forward stage 1 mb 0 from 0
  }
}
