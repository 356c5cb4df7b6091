// REDUCE_GRAD before the stage's last backward (verify-step-errors.mlir).
sched.schedule @reduce_grad_early stages 1 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.reduce_grad stage 0
    sched.backward stage 0 mb 1
  }
}
