// Activation sizes near 2^63 - 1 bytes whose peaks still fit in 64 bits.

// Two live activations of 2^62 - 1 bytes: a peak of 2^63 - 2.
sched.schedule @two_halves stages 1 microbatches 2 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 4611686018427387903 weight_grad 0 parameters 0
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
}

// 2^63 - 1 bytes, one microbatch alive at a time: the peak is the size.
sched.schedule @one_at_a_time stages 1 microbatches 2 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 9223372036854775807 weight_grad 0 parameters 0
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 1
  }
}
