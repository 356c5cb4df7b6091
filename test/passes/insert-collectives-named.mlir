// RUN: sched-opt %s -split-input-file --sched-insert-collectives | FileCheck %s
// RUN: sched-opt %s -split-input-file --sched-insert-collectives --sched-verify -o /dev/null
// RUN: sched-opt %s -split-input-file --sched-insert-collectives --sched-verify="p2p=eager" -o /dev/null

// sched-insert-collectives names the declaration (`declaration N`, the
// N-th sched.collective of the schedule) on every collective it inserts
// that could be read two ways: as an instance of another declaration (the
// verifier matches declarations of one kind, group, stage and bytes by
// time), of an aux-free head's bias update, or, for an all-reduce or
// reduce-scatter, as a gradient reduction (the engine takes any whose kind,
// group and stage an after_backward declaration fits for one, whatever its
// bytes). The inserted plans have one reading and verify
// (docs/verifier.md, "Declared collectives").

// A gradient all-reduce and a step all-reduce of one kind, group and
// bytes: each names its own.
// CHECK-LABEL: sched.schedule @gradient_and_step
// CHECK: sched.backward stage 0 mb 1
// CHECK-NEXT: sched.all_reduce @dp stage 0 bytes 8 declaration 1
// CHECK-NEXT: sched.all_reduce @dp stage 0 bytes 8 declaration 0
// CHECK-NEXT: sched.optimizer_step
sched.schedule @gradient_and_step stages 1 microbatches 2 {
  sched.group @dp members [[0]]
  sched.collective all_reduce @dp bytes 8 when step
  sched.collective all_reduce @dp bytes 8 when after_backward
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
}

// -----

// Bytes tell the verifier the two apart, but not the engine, which would
// take the step all-reduce for a second gradient reduction: the step one
// is named, the gradient one has one reading either way.
// CHECK-LABEL: sched.schedule @step_other_bytes
// CHECK: sched.backward stage 0 mb 1
// CHECK-NEXT: sched.all_reduce @dp stage 0 bytes 64{{$}}
// CHECK-NEXT: sched.all_reduce @dp stage 0 bytes 8 declaration 1
// CHECK-NEXT: sched.optimizer_step
sched.schedule @step_other_bytes stages 1 microbatches 2 {
  sched.group @dp members [[0]]
  sched.collective all_reduce @dp bytes 64 when after_backward
  sched.collective all_reduce @dp bytes 8 when step
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
}

// -----

// Dispatch and combine all-to-alls of an MoE stage around each forward.
// CHECK-LABEL: sched.schedule @dispatch_combine
// CHECK: sched.all_to_all @ep stage 0 bytes 64 declaration 0
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.all_to_all @ep stage 0 bytes 64 declaration 1
// CHECK-NEXT: sched.all_to_all @ep stage 0 bytes 64 declaration 0
// CHECK-NEXT: sched.forward stage 0 mb 1
// CHECK-NEXT: sched.all_to_all @ep stage 0 bytes 64 declaration 1
sched.schedule @dispatch_combine stages 1 microbatches 2 {
  sched.group @ep members [[0]]
  sched.collective all_to_all @ep bytes 64 when before_forward
  sched.collective all_to_all @ep bytes 64 when after_forward
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
}

// -----

// A declaration of one stage reads only that stage's actions: the step
// all-reduce of stage 0 is named, that of stage 1 has one reading.
// CHECK-LABEL: sched.schedule @one_stage
// CHECK: sched.rank 0 {
// CHECK: sched.all_reduce @dp stage 0 bytes 8 declaration 0
// CHECK-NEXT: sched.all_reduce @dp stage 0 bytes 8 declaration 1
// CHECK: sched.rank 1 {
// CHECK: sched.all_reduce @dp stage 1 bytes 8{{$}}
// CHECK-NEXT: sched.optimizer_step
sched.schedule @one_stage stages 2 microbatches 1 {
  sched.group @dp members [[0], [1]]
  sched.collective all_reduce @dp bytes 8 when after_backward stage 0
  sched.collective all_reduce @dp bytes 8 when step
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
}

// -----

// A declared all-reduce that a bias update could be read as: the declared
// one is named; the bias update, no sched.collective, cannot be, and has
// one reading once the other is named.
// CHECK-LABEL: sched.schedule @bias_and_step
// CHECK: sched.backward stage 0 mb 0
// CHECK-NEXT: sched.all_reduce @dp stage 0 bytes 8{{$}}
// CHECK-NEXT: sched.all_reduce @dp stage 0 bytes 8 declaration 0
// CHECK-NEXT: sched.optimizer_step
sched.schedule @bias_and_step stages 1 microbatches 1 {
  sched.group @dp members [[0]]
  sched.aux_head stage 0 scope aux_free bias @dp bytes 8
  sched.collective all_reduce @dp bytes 8 when step
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
}

// -----

// Declarations that differ in kind or group have one reading each: no
// names.
// CHECK-LABEL: sched.schedule @distinct
// CHECK-NOT: declaration
// CHECK: sched.reduce_scatter @dp stage 0 bytes 8{{$}}
// CHECK-NEXT: sched.all_reduce @dp stage 0 bytes 8{{$}}
// CHECK-NEXT: sched.all_reduce @norm stage 0 bytes 8{{$}}
// CHECK-NEXT: sched.optimizer_step
sched.schedule @distinct stages 1 microbatches 1 {
  sched.group @dp members [[0]]
  sched.group @norm members [[0]]
  sched.collective reduce_scatter @dp bytes 8 when after_backward
  sched.collective all_reduce @dp bytes 8 when step
  sched.collective all_reduce @norm bytes 8 when step
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
}

// -----

// With pipeline replicas the pass declares the replica sums after the
// existing declarations, so a declaration written after the ranks keeps
// the index its actions name.
// CHECK-LABEL: sched.schedule @replicas_after
// CHECK: sched.rank 0 {
// CHECK: sched.all_reduce @dp stage 0 bytes 8 declaration 0
// CHECK-NEXT: sched.all_reduce @dp stage 0 bytes 8 declaration 1
// CHECK: sched.collective all_reduce @dp bytes 8 when step
// CHECK-NEXT: sched.group @replicas
// CHECK-NEXT: sched.collective all_reduce @replicas bytes 0 when after_backward stage 0
sched.schedule @replicas_after stages 2 microbatches 2 replicas 2 {
  sched.group @dp members [[0], [1]]
  sched.collective all_reduce @dp bytes 8 when after_backward
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
  }
  sched.collective all_reduce @dp bytes 8 when step
}
