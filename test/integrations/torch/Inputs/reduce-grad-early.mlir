// REDUCE_GRAD of stage 0 before its last backward: the verifier calls it a
// dependency violation, and the gradient it hands the optimizer misses
// microbatch 1.
sched.schedule @reduce_grad_early stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.send forward stage 0 mb 0 to 1
    sched.recv backward stage 0 mb 0 from 1
    sched.backward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.send forward stage 0 mb 1 to 1
    sched.recv backward stage 0 mb 1 from 1
    sched.reduce_grad stage 0
    sched.backward stage 0 mb 1
    sched.optimizer_step
  }
  sched.rank 1 {
    sched.recv forward stage 1 mb 0 from 0
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.send backward stage 1 mb 0 to 0
    sched.recv forward stage 1 mb 1 from 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
    sched.send backward stage 1 mb 1 to 0
    sched.reduce_grad stage 1
    sched.optimizer_step
  }
}
