// Two data-parallel replicas with FSDP: each stage's gradients reduced by
// its REDUCE_GRAD (executor-step-structure.test).
sched.pipeline @fsdp pp 2 microbatches 2 {
  sched.mesh dp = 2, pp = 2
  sched.group @dp members [[0], [1]]
}
