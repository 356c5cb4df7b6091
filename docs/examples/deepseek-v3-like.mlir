// DeepSeek-V3-like pipeline for docs/aux-loss.md: 61 layers as 32 stages of
// two (the last holds one) on 16 ranks, two stages per rank (interleaved
// 1F1B), 32 microbatches. Illustrative sizes per stage and microbatch: 1 GiB
// of activations (512 MiB kept for the weight gradient), 10 GiB of static
// memory (parameters, gradients and optimizer state after expert
// sharding), a 56 MiB hidden state between stages; times in units of one
// stage forward. Layers 0-2 are dense; every stage from 1 on holds an MoE
// layer and so a load-balancing loss, computed over the global batch.
sched.pipeline @deepseek_v3_like pp 16 vpp 2 microbatches 32 memory_limit 85899345920 {
  sched.stage 0 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 1 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 2 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 3 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 4 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 5 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 6 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 7 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 8 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 9 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 10 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 11 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 12 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 13 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 14 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 15 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 16 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 17 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 18 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 19 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 20 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 21 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 22 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 23 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 24 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 25 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 26 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 27 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 28 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 29 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 30 layers 2 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.stage 31 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 1073741824 weight_grad 536870912 parameters 10737418240 output 58720256
  sched.aux_head stage 1 scope global_batch
  sched.aux_head stage 2 scope global_batch
  sched.aux_head stage 3 scope global_batch
  sched.aux_head stage 4 scope global_batch
  sched.aux_head stage 5 scope global_batch
  sched.aux_head stage 6 scope global_batch
  sched.aux_head stage 7 scope global_batch
  sched.aux_head stage 8 scope global_batch
  sched.aux_head stage 9 scope global_batch
  sched.aux_head stage 10 scope global_batch
  sched.aux_head stage 11 scope global_batch
  sched.aux_head stage 12 scope global_batch
  sched.aux_head stage 13 scope global_batch
  sched.aux_head stage 14 scope global_batch
  sched.aux_head stage 15 scope global_batch
  sched.aux_head stage 16 scope global_batch
  sched.aux_head stage 17 scope global_batch
  sched.aux_head stage 18 scope global_batch
  sched.aux_head stage 19 scope global_batch
  sched.aux_head stage 20 scope global_batch
  sched.aux_head stage 21 scope global_batch
  sched.aux_head stage 22 scope global_batch
  sched.aux_head stage 23 scope global_batch
  sched.aux_head stage 24 scope global_batch
  sched.aux_head stage 25 scope global_batch
  sched.aux_head stage 26 scope global_batch
  sched.aux_head stage 27 scope global_batch
  sched.aux_head stage 28 scope global_batch
  sched.aux_head stage 29 scope global_batch
  sched.aux_head stage 30 scope global_batch
  sched.aux_head stage 31 scope global_batch
}
