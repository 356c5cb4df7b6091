// Two live activations of 2^63 - 1 bytes: the peak does not fit in 64 bits.
sched.schedule @too_large stages 1 microbatches 2 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 9223372036854775807 weight_grad 0 parameters 0
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
}
