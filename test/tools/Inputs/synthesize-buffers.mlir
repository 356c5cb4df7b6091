// A 4-stage pipeline with sizes in bytes and outputs: its transfers add
// receive buffers and unsent input gradients the verifier counts. Used by
// schedc-synthesize.test.
sched.pipeline @c pp 4 microbatches 8 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 1 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 2 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 200
  sched.stage 3 layers 1 forward 1.5 backward_input 1.5 backward_weight 0.7 activation 150 weight_grad 60 parameters 1000 output 50
}
