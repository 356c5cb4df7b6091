// DualPipe with FSDP over two data-parallel replicas
// (executor-step-structure.test).
sched.pipeline @dual_fsdp pp 2 microbatches 4 {
  sched.mesh dp = 2, pp = 2
  sched.group @dp members [[0], [1]]
}
