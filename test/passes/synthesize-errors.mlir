// sched-synthesize's errors: bad option values, a memory limit no
// schedule fits (one error naming the smallest feasible limit), and what
// synthesis does not take yet. One clear error each.

// RUN: not sched-opt %s --sched-synthesize="solver=magic" 2>&1 | FileCheck %s --check-prefix=SOLVER
// SOLVER: error: sched-synthesize: unknown solver 'magic'; expected list or exact
// RUN: not sched-opt %s --sched-synthesize="backward=half" 2>&1 | FileCheck %s --check-prefix=BACKWARD
// BACKWARD: error: sched-synthesize: unknown backward 'half'; expected split or full
// RUN: not sched-opt %s --sched-synthesize="memory-limit=lots" 2>&1 | FileCheck %s --check-prefix=LIMIT
// LIMIT: error: sched-synthesize: memory-limit 'lots' is not a number >= 0
// RUN: not sched-opt %s --sched-synthesize="gap=1" 2>&1 | FileCheck %s --check-prefix=GAP
// GAP: error: sched-synthesize: gap must be a number in [0, 1), got 1
// RUN: not sched-opt %s --sched-synthesize="time-limit=0" 2>&1 | FileCheck %s --check-prefix=TIME
// TIME: error: sched-synthesize: time-limit must be a finite number of seconds > 0, got 0
// RUN: not sched-opt %s --sched-synthesize="comm=-1" 2>&1 | FileCheck %s --check-prefix=COMM
// COMM: error: sched-synthesize: comm must be a finite number >= 0, got -1
// RUN: not sched-opt %s --sched-synthesize="weight-grad-fraction=2" 2>&1 | FileCheck %s --check-prefix=FRACTION
// FRACTION: error: sched-synthesize: weight-grad-fraction must be a number in [0, 1], got 2

// Every F of a microbatch comes before its first backward, so a rank holds
// one microbatch's activations of all its stages at some point: here one
// stage activation (P = 2, a stage per rank), and with the V two.
// RUN: not sched-opt %s --sched-synthesize="memory-limit=0.5" 2>&1 | FileCheck %s --check-prefix=UNITS
// UNITS: error: 'sched.pipeline' op cannot be synthesized: no schedule fits the memory limit of 0.5 stage activations: rank 0 needs 1 stage activation (its parameters and one microbatch's activations of its stages); the smallest feasible limit is 1 stage activation
// UNITS-NOT: error
sched.pipeline @p pp 2 microbatches 4 {}
