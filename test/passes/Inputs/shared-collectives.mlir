// Declarations that share kind, group and bytes: dispatch and combine
// all-to-alls of an MoE stage, a gradient and a step all-reduce
// (verify-shared-collectives.mlir).
sched.pipeline @shared pp 2 microbatches 4 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 10 weight_grad 5 parameters 100
  sched.stage 1 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 10 weight_grad 5 parameters 100
  sched.group @dp members [[0], [1]]
  sched.group @ep members [[0], [1]]
  sched.collective all_to_all @ep bytes 64 when before_forward
  sched.collective all_to_all @ep bytes 64 when after_forward stage 1
  sched.collective all_reduce @dp bytes 8 when after_backward
  sched.group @norm members [[0, 1]]
  sched.collective all_reduce @norm bytes 8 when step
}
