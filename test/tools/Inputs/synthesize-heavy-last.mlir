// A 4-stage pipeline whose last stage (the loss head) costs 1.5x the others;
// W is half of I. Used by schedc-synthesize.test.
sched.pipeline @h pp 4 microbatches 8 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 0 weight_grad 0 parameters 0
  sched.stage 1 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 0 weight_grad 0 parameters 0
  sched.stage 2 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 0 weight_grad 0 parameters 0
  sched.stage 3 layers 1 forward 1.5 backward_input 1.5 backward_weight 0.75 activation 0 weight_grad 0 parameters 0
}
