// Finite stage costs whose sum is not: 1e308 + 1e308 overflows a double.
sched.schedule @huge_costs stages 1 microbatches 1 {
  sched.stage 0 layers 1 forward 1.0e308 backward_input 1.0e308 backward_weight 0.0 activation 0 weight_grad 0 parameters 0
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
}
