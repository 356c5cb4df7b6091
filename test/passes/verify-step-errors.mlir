// The rest of the training step (docs/verifier.md, section 5): each broken
// FSDP, gradient-reduction, declared-collective and optimizer-step rule is
// a violation at the offending action, with Z3 and without it.
// RUN: sched-opt %s -split-input-file --sched-verify -verify-diagnostics
// RUN: sched-opt %s -split-input-file --sched-verify="proof=search" -verify-diagnostics
// RUN: %exit schedc verify %S/Inputs/step-reduce-grad-early.mlir 2>&1 | FileCheck %s --check-prefix=EXIT
// EXIT: error: [dependency] REDUCE_GRAD(stage 0) runs before B(stage 0, mb 1) on rank 0
// EXIT: violated: @reduce_grad_early (1 violation)
// EXIT: exit status: 1

//===----------------------------------------------------------------------===//
// Gradient reduction
//===----------------------------------------------------------------------===//

// REDUCE_GRAD before the stage's last backward.
sched.schedule @reduce_grad_early stages 1 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    sched.forward stage 0 mb 1
    // expected-error @below {{[dependency] REDUCE_GRAD(stage 0) runs before B(stage 0, mb 1) on rank 0, but reduces the gradients of stage 0, which must come after every backward and weight gradient of the stage}}
    sched.reduce_grad stage 0
    // expected-note @below {{B(stage 0, mb 1) runs here, later}}
    sched.backward stage 0 mb 1
  }
}

// -----

// With a split backward the last gradient is the last W.
sched.schedule @reduce_grad_before_w stages 1 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward_input stage 0 mb 0
    // expected-error @below {{[dependency] REDUCE_GRAD(stage 0) runs before W(stage 0, mb 0) on rank 0}}
    sched.reduce_grad stage 0
    // expected-note @below {{W(stage 0, mb 0) runs here, later}}
    sched.backward_weight stage 0 mb 0
  }
}

// -----

sched.schedule @reduce_grad_twice stages 1 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    // expected-note @below {{the first one is here}}
    sched.reduce_grad stage 0
    // expected-error @below {{[duplicate] REDUCE_GRAD(stage 0) twice on rank 0: a stage's gradients are reduced once per step}}
    sched.reduce_grad stage 0
  }
}

// -----

sched.schedule @reduce_grad_wrong_rank stages 2 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    sched.reduce_grad stage 0
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    // expected-error @below {{[placement] REDUCE_GRAD(stage 0) is issued by rank 1, but stage 0 runs on rank 0}}
    sched.reduce_grad stage 0
  }
}

// -----

// Once one stage reduces its gradients, every stage does.
sched.schedule @reduce_grad_missing stages 2 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    // expected-note @below {{a REDUCE_GRAD of another stage is here}}
    sched.reduce_grad stage 0
  }
  // expected-error @below {{[missing] stage 1 on rank 1 has no REDUCE_GRAD, but the schedule reduces the gradients of other stages}}
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
}

// -----

// A data-parallel reduce-scatter declared after_backward runs after the
// stage's last gradient ...
sched.schedule @reduce_scatter_early stages 1 microbatches 2 {
  sched.group @dp members [[0]]
  sched.collective reduce_scatter @dp bytes 64 when after_backward
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    // expected-error @below {{[dependency] reduce_scatter @dp (stage 0) runs before B(stage 0, mb 1) on rank 0, but reduces the gradients of stage 0}}
    sched.reduce_scatter @dp stage 0 bytes 64
    // expected-note @below {{B(stage 0, mb 1) runs here, later}}
    sched.backward stage 0 mb 1
  }
}

// -----

// ... once ...
sched.schedule @reduce_scatter_twice stages 1 microbatches 1 {
  sched.group @dp members [[0]]
  sched.collective reduce_scatter @dp bytes 64 when after_backward
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    // expected-note @below {{the first one is here}}
    sched.reduce_scatter @dp stage 0 bytes 64
    // expected-error @below {{[duplicate] reduce_scatter @dp (stage 0) is issued 2 times on rank 0, but its declaration (after_backward) asks for 1 per step}}
    sched.reduce_scatter @dp stage 0 bytes 64
    sched.optimizer_step
  }
}

// -----

// ... and in a whole step (one with an optimizer step) at all.
sched.schedule @reduce_scatter_missing stages 2 microbatches 1 {
  sched.group @dp members [[0], [1]]
  sched.collective reduce_scatter @dp bytes 64 when after_backward stage 1
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    sched.optimizer_step
  }
  // expected-error @below {{[missing] rank 1 does not issue reduce_scatter @dp (stage 1), declared after_backward (after the stage's last gradient)}}
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.optimizer_step
  }
}

// -----

// DualPipe's replica sum (as sched-insert-collectives declares it): the
// all-reduce of stage 1 on rank 1 runs before that copy's last gradient.
sched.schedule @replica_sum_early stages 2 microbatches 2 replicas 2 {
  sched.group @replicas members [[0, 1]]
  sched.collective all_reduce @replicas bytes 0 when after_backward stage 0
  sched.collective all_reduce @replicas bytes 0 when after_backward stage 1
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    sched.all_reduce @replicas stage 0
    sched.optimizer_step
  }
  sched.rank 1 {
    sched.forward stage 1 mb 1
    // expected-error @below {{[dependency] all_reduce @replicas (stage 1) runs before B(stage 1, mb 1) on rank 1, but reduces the gradients of stage 1}}
    sched.all_reduce @replicas stage 1
    // expected-note @below {{B(stage 1, mb 1) runs here, later}}
    sched.backward stage 1 mb 1
    sched.optimizer_step
  }
}

//===----------------------------------------------------------------------===//
// FSDP
//===----------------------------------------------------------------------===//

// -----

sched.schedule @forward_before_unshard stages 1 microbatches 1 {
  sched.rank 0 {
    // expected-error @below {{[dependency] F(stage 0, mb 0) runs before UNSHARD(stage 0) on rank 0, but needs its parameters gathered}}
    sched.forward stage 0 mb 0
    // expected-note @below {{UNSHARD(stage 0) runs here, later}}
    sched.unshard stage 0
    sched.backward stage 0 mb 0
    sched.reshard stage 0
  }
}

// -----

// The F of an overlap counts too.
sched.schedule @overlap_before_unshard stages 2 microbatches 2 {
  sched.rank 0 {
    sched.unshard stage 0
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.unshard stage 1
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.reshard stage 1
    sched.overlap {
      // expected-error @below {{[dependency] F(stage 1, mb 1) runs before UNSHARD(stage 1) on rank 0, but needs its parameters gathered}}
      sched.forward stage 1 mb 1
      sched.backward stage 0 mb 0
    }
    // expected-note @below {{UNSHARD(stage 1) runs here, later}}
    sched.unshard stage 1
    sched.backward stage 1 mb 1
    sched.reshard stage 1
    sched.backward stage 0 mb 1
  }
}

// -----

sched.schedule @unshard_twice stages 1 microbatches 1 {
  sched.rank 0 {
    // expected-note @below {{the previous UNSHARD is here}}
    sched.unshard stage 0
    sched.forward stage 0 mb 0
    // expected-error @below {{[duplicate] UNSHARD(stage 0) on rank 0 while the stage is unsharded: it has no RESHARD since the previous UNSHARD}}
    sched.unshard stage 0
    sched.backward stage 0 mb 0
    sched.reshard stage 0
  }
}

// -----

sched.schedule @reshard_twice stages 1 microbatches 1 {
  sched.rank 0 {
    sched.unshard stage 0
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    // expected-note @below {{the stage was last resharded here}}
    sched.reshard stage 0
    // expected-error @below {{[missing] RESHARD(stage 0) on rank 0 without an UNSHARD before it: the stage's parameters are not gathered}}
    sched.reshard stage 0
  }
}

// -----

// A stage resharded but never unsharded.
sched.schedule @never_unsharded stages 1 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    // expected-error @below {{[missing] RESHARD(stage 0) on rank 0 without an UNSHARD before it}}
    sched.reshard stage 0
  }
}

// -----

sched.schedule @compute_after_reshard stages 1 microbatches 1 {
  sched.rank 0 {
    sched.unshard stage 0
    sched.forward stage 0 mb 0
    // expected-error @below {{[dependency] RESHARD(stage 0) runs before B(stage 0, mb 0) on rank 0, but frees the parameters B(stage 0, mb 0) needs, and no later UNSHARD gathers them again}}
    sched.reshard stage 0
    // expected-note @below {{B(stage 0, mb 0) runs here, later}}
    sched.backward stage 0 mb 0
  }
}

// -----

sched.schedule @unshard_wrong_rank stages 2 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    // expected-error @below {{[placement] UNSHARD(stage 0) is issued by rank 1, but stage 0 runs on rank 0}}
    sched.unshard stage 0
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
}

//===----------------------------------------------------------------------===//
// Declared collectives
//===----------------------------------------------------------------------===//

// -----

// A parameter all-gather declared before_forward runs after its forward.
sched.schedule @all_gather_late stages 1 microbatches 1 {
  sched.group @dp members [[0]]
  sched.collective all_gather @dp bytes 32 when before_forward
  sched.rank 0 {
    // expected-error @below {{[dependency] F(stage 0, mb 0) runs before all_gather @dp (stage 0) on rank 0, but the collective is declared before_forward of stage 0: the k-th one runs before the k-th forward}}
    sched.forward stage 0 mb 0
    // expected-note @below {{all_gather @dp (stage 0) runs here, later}}
    sched.all_gather @dp stage 0 bytes 32
    sched.backward stage 0 mb 0
  }
}

// -----

// One all-gather for two forwards in a whole step.
sched.schedule @all_gather_missing stages 1 microbatches 2 {
  sched.group @dp members [[0]]
  sched.collective all_gather @dp bytes 32 when before_forward
  sched.rank 0 {
    sched.all_gather @dp stage 0 bytes 32
    sched.forward stage 0 mb 0
    // expected-error @below {{[missing] F(stage 0, mb 1) has no all_gather @dp (stage 0) before it: the collective is declared before_forward, and rank 0 issues it 1 times for the stage's 2 forwards}}
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
    sched.optimizer_step
  }
}

// -----

sched.schedule @all_to_all_before_its_forward stages 1 microbatches 1 {
  sched.group @ep members [[0]]
  sched.collective all_to_all @ep bytes 8 when after_forward
  sched.rank 0 {
    // expected-error @below {{[dependency] all_to_all @ep (stage 0) runs before F(stage 0, mb 0) on rank 0, but is declared after_forward of stage 0: the k-th one runs after the k-th forward}}
    sched.all_to_all @ep stage 0 bytes 8
    // expected-note @below {{F(stage 0, mb 0) runs here, later}}
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
}

// -----

sched.schedule @all_to_all_after_its_backward stages 1 microbatches 1 {
  sched.group @ep members [[0]]
  sched.collective all_to_all @ep bytes 8 when before_backward
  sched.rank 0 {
    sched.forward stage 0 mb 0
    // expected-error @below {{[dependency] I(stage 0, mb 0) runs before all_to_all @ep (stage 0) on rank 0, but the collective is declared before_backward of stage 0}}
    sched.backward_input stage 0 mb 0
    // expected-note @below {{all_to_all @ep (stage 0) runs here, later}}
    sched.all_to_all @ep stage 0 bytes 8
    sched.backward_weight stage 0 mb 0
  }
}

// -----

// A collective declared at the step runs once per stage.
sched.schedule @step_collective_twice stages 1 microbatches 1 {
  sched.group @dp members [[0]]
  sched.collective barrier @dp bytes 0 when step
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    // expected-note @below {{the first one is here}}
    sched.barrier @dp stage 0
    // expected-error @below {{[duplicate] barrier @dp (stage 0) is issued 2 times on rank 0, but its declaration (step) asks for 1 per step}}
    sched.barrier @dp stage 0
    sched.optimizer_step
  }
}

//===----------------------------------------------------------------------===//
// Optimizer step
//===----------------------------------------------------------------------===//

// -----

sched.schedule @step_before_backward stages 1 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    // expected-error @below {{[dependency] OPTIMIZER_STEP runs before B(stage 0, mb 0) on rank 0, but the optimizer step ends the training step: every action of the rank must come before it}}
    sched.optimizer_step
    // expected-note @below {{B(stage 0, mb 0) runs here, later}}
    sched.backward stage 0 mb 0
  }
}

// -----

sched.schedule @step_before_reduce_grad stages 1 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    // expected-error @below {{[dependency] OPTIMIZER_STEP runs before REDUCE_GRAD(stage 0) on rank 0}}
    sched.optimizer_step
    // expected-note @below {{REDUCE_GRAD(stage 0) runs here, later}}
    sched.reduce_grad stage 0
  }
}

// -----

// A collective declared at the step comes before the optimizer step.
sched.schedule @step_before_step_collective stages 1 microbatches 1 {
  sched.group @dp members [[0]]
  sched.collective all_reduce @dp bytes 8 when step
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    // expected-error @below {{[dependency] OPTIMIZER_STEP runs before all_reduce @dp (stage 0) on rank 0}}
    sched.optimizer_step
    // expected-note @below {{all_reduce @dp (stage 0) runs here, later}}
    sched.all_reduce @dp stage 0 bytes 8
  }
}

// -----

// Compute of the same step after the optimizer step.
sched.schedule @compute_after_step stages 2 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    sched.optimizer_step
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    // expected-error @below {{[dependency] OPTIMIZER_STEP runs before B(stage 1, mb 0) on rank 1}}
    sched.optimizer_step
    // expected-note @below {{B(stage 1, mb 0) runs here, later}}
    sched.backward stage 1 mb 0
  }
}

// -----

sched.schedule @step_twice stages 1 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    // expected-note @below {{the first one is here}}
    sched.optimizer_step
    // expected-error @below {{[duplicate] OPTIMIZER_STEP twice on rank 0: a training step updates the parameters once}}
    sched.optimizer_step
  }
}

// -----

sched.schedule @step_missing stages 2 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    // expected-note @below {{an optimizer step of another rank}}
    sched.optimizer_step
  }
  // expected-error @below {{[missing] rank 1 holds stages but has no OPTIMIZER_STEP, while other ranks step}}
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
}
