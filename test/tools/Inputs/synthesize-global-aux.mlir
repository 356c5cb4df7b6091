// A pipeline whose stage 1 carries a global-batch aux loss: every backward
// of that stage waits for every microbatch's forward there. Used by
// schedc-synthesize.test.
sched.pipeline @aux pp 2 microbatches 4 {
  sched.aux_head stage 1 scope global_batch
}
