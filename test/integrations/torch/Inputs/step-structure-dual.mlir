// DualPipe: two pipeline replicas (executor-step-structure.test).
sched.pipeline @dual pp 2 microbatches 4 {
}
