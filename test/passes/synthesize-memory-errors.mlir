// RUN: sched-opt %s -split-input-file --sched-synthesize -verify-diagnostics

// Rank 1 holds its parameters (1000 bytes) and one activation of its stage
// (200): 1200 bytes, over the pipeline's limit of 1150; rank 0 needs 1100.
// expected-error @below {{cannot be synthesized: no schedule fits the memory limit of 1150 bytes: rank 1 needs 1200 bytes (its parameters and one microbatch's activations of its stages); the smallest feasible limit is 1200 bytes}}
sched.pipeline @bytes pp 2 microbatches 3 memory_limit 1150 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 100 weight_grad 40 parameters 1000
  sched.stage 1 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 200 weight_grad 40 parameters 1000
}

// -----

// On the V each rank holds two stages: two stage activations.
// expected-error @below {{no schedule fits the memory limit of 1 stage activation: rank 0 needs 2 stage activations}}
sched.pipeline @v pp 2 vpp 2 microbatches 4 placement v memory_limit 1 {}

// -----

// A global_batch aux head at stage 1: ranks 0 and 1 hold all four
// microbatches' activations before its first backward (4 activations);
// the pipeline's limit of 3 is short of that.
// expected-error @below {{cannot be synthesized: no schedule fits the memory limit of 3 stage activations: rank 0 needs 4 stage activations (its parameters and all 4 microbatches' activations of its stages, held together before the global_batch aux head at stage 1 runs its first backward); the smallest feasible limit is 4 stage activations}}
sched.pipeline @aux pp 3 microbatches 4 memory_limit 3 {
  sched.aux_head stage 1 scope global_batch
}

// -----

// Synthesis around a global_batch head needs one stage per rank on a loop.
// expected-error @below {{cannot be synthesized: a global_batch aux head is synthesized with one stage per rank (vpp = 1 on a loop), not on a V with vpp = 2; lower with a strategy and sched-legalize-aux-loss, or use scope aux_free, microbatch or sequence}}
sched.pipeline @auxv pp 2 vpp 2 microbatches 4 placement v {
  sched.aux_head stage 2 scope global_batch
}

// -----

// Stages with an output size: the gradients that arrive before the head's
// last forward would sit beside every microbatch's activations, which the
// solvers do not plan yet.
// expected-error @below {{cannot be synthesized: a global_batch aux head is synthesized for stages without an output size}}
sched.pipeline @auxout pp 2 microbatches 3 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 100 weight_grad 40 parameters 1000 output 10
  sched.stage 1 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 100 weight_grad 40 parameters 1000 output 10
  sched.aux_head stage 0 scope global_batch
}

// -----

// A head of microbatch scope adds no dependency: synthesized.
sched.pipeline @local pp 2 microbatches 2 {
  sched.aux_head stage 1 scope microbatch
}
