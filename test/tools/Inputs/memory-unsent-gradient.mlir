// Rank 1 computes the input gradient of B(1, 0) (stage 0's output, 1000
// bytes) and sends it only after the next receive and forward: the
// engine holds it until its send. Rank 1 peaks at 2000 bytes, rank 0 at
// 1200 (schedc-verify-memory.test derives both): over the limit of 1200.
sched.schedule @unsent_gradient stages 2 microbatches 2 memory_limit 1200 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 100 weight_grad 0 parameters 0 output 1000
  sched.stage 1 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 100 weight_grad 0 parameters 0 output 1000
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.send forward stage 0 mb 0 to 1
    sched.forward stage 0 mb 1
    sched.send forward stage 0 mb 1 to 1
    sched.recv backward stage 0 mb 0 from 1
    sched.backward stage 0 mb 0
    sched.recv backward stage 0 mb 1 from 1
    sched.backward stage 0 mb 1
    sched.optimizer_step
  }
  sched.rank 1 {
    sched.recv forward stage 1 mb 0 from 0
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.recv forward stage 1 mb 1 from 0
    sched.forward stage 1 mb 1
    sched.send backward stage 1 mb 0 to 0
    sched.backward stage 1 mb 1
    sched.send backward stage 1 mb 1 to 0
    sched.optimizer_step
  }
}
