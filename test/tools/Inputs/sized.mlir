// 1F1B on 2 ranks, 2 microbatches, with stage sizes: 1024 bytes of
// activations per microbatch and stage, 512 of them kept for W.
sched.schedule @sized stages 2 microbatches 2 {
  sched.stage 0 layers 4 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1024 weight_grad 512 parameters 4096
  sched.stage 1 layers 4 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1024 weight_grad 512 parameters 4096
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
  }
}
