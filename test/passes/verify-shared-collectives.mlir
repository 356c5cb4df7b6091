// Collective declarations that share kind, group and bytes (an expert
// all-to-all before each forward and one after it, a gradient all-reduce
// and a step all-reduce) are not told apart by their actions: each action
// serves the declaration whose next instance it can be, the one due
// soonest (docs/verifier.md, section 5). What sched-insert-collectives
// makes of such declarations verifies; a schedule that cannot be read as
// issuing every declaration on time is still a violation.
// RUN: sched-opt %s -split-input-file --sched-verify -verify-diagnostics
// RUN: sched-opt %s -split-input-file --sched-verify="proof=search" -verify-diagnostics
// RUN: sched-opt %S/Inputs/shared-collectives.mlir --sched-lower-1f1b --sched-insert-p2p --sched-insert-collectives --sched-verify | FileCheck %s --check-prefix=PASS
// RUN: sched-opt %S/Inputs/shared-collectives.mlir --sched-lower-gpipe --sched-insert-p2p --sched-insert-collectives="fsdp=true" --sched-verify -o /dev/null
// RUN: sched-opt %S/Inputs/shared-collectives.mlir --sched-lower-zb-h1 --sched-insert-p2p --sched-insert-collectives --sched-verify="p2p=eager" -o /dev/null
// RUN: sched-opt %S/Inputs/shared-collectives.mlir --sched-lower-dualpipe --sched-insert-p2p --sched-insert-collectives --sched-verify -o /dev/null

// The step ends with the gradient all-reduce and the step one (a
// gradient-norm reduction over both ranks, each tagging its own stage);
// the combine all-to-all of stage 1 sits after each of its forwards, the
// dispatch one before it.
// PASS-LABEL: sched.rank 0 {
// PASS: sched.all_reduce @dp stage 0 bytes 8
// PASS-NEXT: sched.all_reduce @norm stage 0 bytes 8
// PASS-NEXT: sched.optimizer_step
// PASS-LABEL: sched.rank 1 {
// PASS: sched.all_to_all @ep stage 1 bytes 64
// PASS-NEXT: sched.forward stage 1 mb 0
// PASS-NEXT: sched.all_to_all @ep stage 1 bytes 64

// Dispatch and combine around each forward, written by hand.
sched.schedule @dispatch_combine stages 1 microbatches 2 {
  sched.group @ep members [[0]]
  sched.collective all_to_all @ep bytes 64 when before_forward
  sched.collective all_to_all @ep bytes 64 when after_forward
  sched.rank 0 {
    sched.all_to_all @ep stage 0 bytes 64
    sched.forward stage 0 mb 0
    sched.all_to_all @ep stage 0 bytes 64
    sched.all_to_all @ep stage 0 bytes 64
    sched.forward stage 0 mb 1
    sched.all_to_all @ep stage 0 bytes 64
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
}

// -----

// The second action could be the first combine, but then the last one
// could be neither: it is the second dispatch, due at F(stage 0, mb 1).
sched.schedule @dispatch_due_first stages 1 microbatches 2 {
  sched.group @ep members [[0]]
  sched.collective all_to_all @ep bytes 64 when after_forward
  sched.collective all_to_all @ep bytes 64 when before_forward
  sched.rank 0 {
    sched.all_to_all @ep stage 0 bytes 64
    sched.forward stage 0 mb 0
    sched.all_to_all @ep stage 0 bytes 64
    sched.forward stage 0 mb 1
    sched.all_to_all @ep stage 0 bytes 64
    sched.all_to_all @ep stage 0 bytes 64
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
}

// -----

// A gradient all-reduce and a step all-reduce of the same kind and group,
// both at the end of the step. Matching reads one as each declaration, on
// time; but the engine takes every all-reduce an after_backward
// declaration could explain for a gradient reduction, so it sums the
// stage's gradients twice (integrations/torch confirms it:
// executor-step-structure.test).
sched.schedule @gradient_and_step stages 1 microbatches 2 {
  sched.group @dp members [[0]]
  sched.collective all_reduce @dp bytes 8 when step
  sched.collective all_reduce @dp bytes 8 when after_backward
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
    // expected-note @below {{the first reduction is here}}
    sched.all_reduce @dp stage 0 bytes 8
    // expected-error @below {{[duplicate] all_reduce @dp (stage 0) reduces the gradients of stage 0 over @dp a second time on rank 0: the engine takes every all_reduce or reduce_scatter that an after_backward declaration could explain (and REDUCE_GRAD, over @dp) for a gradient reduction, and sums the reduced gradients again}}
    sched.all_reduce @dp stage 0 bytes 8
    sched.optimizer_step
  }
}

// -----

// On a group of its own, the step all-reduce is no gradient reduction.
sched.schedule @gradient_and_norm stages 1 microbatches 2 {
  sched.group @dp members [[0]]
  sched.group @norm members [[0]]
  sched.collective all_reduce @norm bytes 8 when step
  sched.collective all_reduce @dp bytes 8 when after_backward
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
    sched.all_reduce @dp stage 0 bytes 8
    sched.all_reduce @norm stage 0 bytes 8
    sched.optimizer_step
  }
}

// -----

// The second combine has no action after F(stage 0, mb 1) to be.
sched.schedule @combine_missing stages 1 microbatches 2 {
  sched.group @ep members [[0]]
  sched.collective all_to_all @ep bytes 64 when before_forward
  sched.collective all_to_all @ep bytes 64 when after_forward
  sched.rank 0 {
    // expected-note @below {{the first one is here}}
    sched.all_to_all @ep stage 0 bytes 64
    sched.forward stage 0 mb 0
    sched.all_to_all @ep stage 0 bytes 64
    sched.all_to_all @ep stage 0 bytes 64
    // expected-error @below {{[duplicate] all_to_all @ep (stage 0) is issued 3 times on rank 0, but its declaration (before_forward) asks for 2 per step}}
    sched.all_to_all @ep stage 0 bytes 64
    // expected-error @below {{[missing] F(stage 0, mb 1) has no all_to_all @ep (stage 0) after it: the collective is declared after_forward, and rank 0 issues it 1 times for the stage's 2 forwards}}
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
}

// -----

// Before the last gradient, the only all-reduce can be the step one; the
// gradient reduction is then missing.
sched.schedule @gradient_reduction_early stages 1 microbatches 2 {
  sched.group @dp members [[0]]
  sched.collective all_reduce @dp bytes 8 when after_backward
  sched.collective all_reduce @dp bytes 8 when step
  // expected-error @below {{[missing] rank 0 does not issue all_reduce @dp (stage 0), declared after_backward (after the stage's last gradient)}}
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.all_reduce @dp stage 0 bytes 8
    sched.backward stage 0 mb 1
    sched.optimizer_step
  }
}

// -----

// Named and unnamed mixed, two declarations due at the same forwards: the
// unnamed first all-to-all is read as the second declaration's, since the
// named one after it takes the first declaration's first instance and the
// two after F(stage 0, mb 0) are the second instances of both. Matching
// alone, due soonest, would read it as the first declaration's; the exact
// search that follows finds the reading.
sched.schedule @named_tie stages 1 microbatches 2 {
  sched.group @ep members [[0]]
  sched.collective all_to_all @ep bytes 64 when before_forward
  sched.collective all_to_all @ep bytes 64 when before_forward
  sched.rank 0 {
    sched.all_to_all @ep stage 0 bytes 64
    sched.all_to_all @ep stage 0 bytes 64 declaration 0
    sched.forward stage 0 mb 0
    sched.all_to_all @ep stage 0 bytes 64
    sched.all_to_all @ep stage 0 bytes 64
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
    sched.optimizer_step
  }
}

// -----

// Matching keeps the instances that later actions name for them: the
// unnamed all-to-all after F(stage 0, mb 0) is read as the step one, since
// the two after it name the after_forward declaration (read as its first
// instance, the later named ones would be one too many).
sched.schedule @named_later stages 1 microbatches 2 {
  sched.group @ep members [[0]]
  sched.collective all_to_all @ep bytes 64 when after_forward
  sched.collective all_to_all @ep bytes 64 when step
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.all_to_all @ep stage 0 bytes 64
    sched.forward stage 0 mb 1
    sched.all_to_all @ep stage 0 bytes 64 declaration 0
    sched.all_to_all @ep stage 0 bytes 64 declaration 0
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
    sched.optimizer_step
  }
}
