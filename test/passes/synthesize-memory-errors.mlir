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

sched.pipeline @aux pp 2 microbatches 4 {
  // expected-error @below {{sched-synthesize does not synthesize around a global_batch aux head yet; lower with a strategy and sched-legalize-aux-loss, or use scope aux_free, microbatch or sequence}}
  sched.aux_head stage 1 scope global_batch
}

// -----

// A head of microbatch scope adds no dependency: synthesized.
sched.pipeline @local pp 2 microbatches 2 {
  sched.aux_head stage 1 scope microbatch
}
