// Data parallelism with a gradient all-reduce and a step all-reduce on the
// same group (executor-named-declaration.test).
sched.pipeline @named pp 2 microbatches 2 {
  sched.mesh dp = 2, pp = 2
  sched.group @dp members [[0], [1]]
  sched.collective all_reduce @dp bytes 64 when after_backward
  sched.collective all_reduce @dp bytes 8 when step
}
