// Two data-parallel replicas, the gradients all-reduced after each stage's
// last backward (executor-step-structure.test).
sched.pipeline @dp pp 2 microbatches 2 {
  sched.mesh dp = 2, pp = 2
  sched.group @dp members [[0], [1]]
  sched.collective all_reduce @dp bytes 64 when after_backward
}
