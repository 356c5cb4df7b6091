// The bench's open row (docs/synthesis.md): 8 stages, 16 microbatches, the
// last stage 1.2x heavier, W 0.3 of I. Used by schedc-synthesize.test.
sched.pipeline @h pp 8 microbatches 16 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.3 activation 0 weight_grad 0 parameters 0
  sched.stage 1 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.3 activation 0 weight_grad 0 parameters 0
  sched.stage 2 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.3 activation 0 weight_grad 0 parameters 0
  sched.stage 3 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.3 activation 0 weight_grad 0 parameters 0
  sched.stage 4 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.3 activation 0 weight_grad 0 parameters 0
  sched.stage 5 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.3 activation 0 weight_grad 0 parameters 0
  sched.stage 6 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.3 activation 0 weight_grad 0 parameters 0
  sched.stage 7 layers 1 forward 1.2 backward_input 1.2 backward_weight 0.36 activation 0 weight_grad 0 parameters 0
}
