// Two FSDP-sharded stages on one rank (dp = 2, 1000 bytes of parameters
// each, activations of 10 bytes, stage 0's output 5 bytes): each backward
// accumulates into a full unsharded gradient, which lives until the
// stage's REDUCE_GRAD. Peak 3015 at B(1, 0) (schedc-verify-memory.test
// derives it); the memory_limit holds it exactly.
sched.schedule @unreduced_gradient stages 2 microbatches 1 memory_limit 3015 {
  sched.mesh dp = 2
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 10 weight_grad 0 parameters 1000 output 5
  sched.stage 1 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 10 weight_grad 0 parameters 1000 output 5
  sched.rank 0 {
    sched.unshard stage 0
    sched.forward stage 0 mb 0
    sched.reshard stage 0
    sched.unshard stage 1
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.reshard stage 1
    sched.reduce_grad stage 1
    sched.unshard stage 0
    sched.backward stage 0 mb 0
    sched.reshard stage 0
    sched.reduce_grad stage 0
    sched.optimizer_step
  }
}
