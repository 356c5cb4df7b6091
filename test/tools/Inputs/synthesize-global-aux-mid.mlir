// Four stages, the last 1.5x heavier, a global-batch aux head at stage 1:
// the executor computes the head's loss over every microbatch. Used by
// integrations/torch/executor-synthesized.test.
sched.pipeline @mid pp 4 microbatches 6 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 0 weight_grad 0 parameters 0
  sched.stage 1 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 0 weight_grad 0 parameters 0
  sched.stage 2 layers 1 forward 1.0 backward_input 1.0 backward_weight 0.5 activation 0 weight_grad 0 parameters 0
  sched.stage 3 layers 1 forward 1.5 backward_input 1.5 backward_weight 0.75 activation 0 weight_grad 0 parameters 0
  sched.aux_head stage 1 scope global_batch
}
