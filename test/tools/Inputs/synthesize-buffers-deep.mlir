// A 16-stage pipeline of 64 microbatches with sizes in bytes and outputs
// (the transfers' buffers count): near its least limit the buffers overflow
// and sched-synthesize solves again, so the time limit must cover the
// repairs too. Used by schedc-synthesize.test.
sched.pipeline @deep pp 16 microbatches 64 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 1 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 2 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 3 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 4 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 5 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 6 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 7 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 200
  sched.stage 8 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 9 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 10 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 11 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 12 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 13 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 14 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 100 weight_grad 40 parameters 1000 output 30
  sched.stage 15 layers 1 forward 1.5 backward_input 1.5 backward_weight 0.7 activation 150 weight_grad 60 parameters 1000 output 30
}
