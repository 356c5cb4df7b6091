// The schedule of memory-unreduced-gradient.mlir with stage 1's
// REDUCE_GRAD moved after B(0, 0): both full gradients are live there,
// 4000 bytes over the limit of 3015 (schedc-verify-memory.test derives
// it).
sched.schedule @late_reduce_grad stages 2 microbatches 1 memory_limit 3015 {
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
    sched.unshard stage 0
    sched.backward stage 0 mb 0
    sched.reduce_grad stage 1
    sched.reshard stage 0
    sched.reduce_grad stage 0
    sched.optimizer_step
  }
}
