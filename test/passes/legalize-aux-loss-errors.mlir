// Bad options and schedules sched-legalize-aux-loss cannot rewrite: one
// clear error each.

// RUN: not sched-opt %s --sched-legalize-aux-loss=mode=sideways 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: error: sched-legalize-aux-loss: mode must be error, reorder or aux-free, got 'sideways'

// RUN: not sched-opt %s --sched-legalize-aux-loss="mode=aux-free bias-bytes=-1" 2>&1 | FileCheck %s --check-prefix=BYTES
// BYTES: error: sched-legalize-aux-loss: bias-bytes must be an integer of at least 0, got -1

// RUN: not sched-opt %s --sched-legalize-aux-loss="mode=aux-free bias-group=world" 2>&1 | FileCheck %s --check-prefix=GROUP
// GROUP: error: the bias update of this head runs on rank 1, which is not a member of bias group @world

// RUN: not sched-opt %s --sched-insert-collectives --sched-legalize-aux-loss=mode=reorder 2>&1 | FileCheck %s --check-prefix=STEP
// STEP: error: sched-legalize-aux-loss mode=reorder moves compute and transfers, but this schedule already holds OPTIMIZER_STEP; run it before sched-insert-collectives

// The lowering passes take aux-conflicts=error or keep only.
// RUN: not sched-opt %s --sched-lower-1f1b=aux-conflicts=ignore 2>&1 | FileCheck %s --check-prefix=CONFLICTS
// CONFLICTS: error: sched-lower-1f1b: aux-conflicts must be 'error' or 'keep', got 'ignore'

sched.schedule @s stages 2 microbatches 2 {
  sched.group @world members [[0]]
  sched.aux_head stage 1 scope global_batch
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
  }
}


