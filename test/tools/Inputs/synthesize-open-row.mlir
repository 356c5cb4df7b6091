// The bench's open row (docs/synthesis.md): 8 stages, the last 1.2x heavier,
// W = 0.3 I, transfers of one forward, 1F1B's memory: the list schedule
// leaves a gap of 2.6% that Z3 does not close in a short time. Used by
// schedc-synthesize.test.
sched.pipeline @open pp 8 microbatches 16 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.30 activation 0 weight_grad 0 parameters 0
  sched.stage 1 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.30 activation 0 weight_grad 0 parameters 0
  sched.stage 2 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.30 activation 0 weight_grad 0 parameters 0
  sched.stage 3 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.30 activation 0 weight_grad 0 parameters 0
  sched.stage 4 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.30 activation 0 weight_grad 0 parameters 0
  sched.stage 5 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.30 activation 0 weight_grad 0 parameters 0
  sched.stage 6 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.30 activation 0 weight_grad 0 parameters 0
  sched.stage 7 layers 1 forward 1.2 backward_input 1.2 backward_weight 0.36 activation 0 weight_grad 0 parameters 0
}
