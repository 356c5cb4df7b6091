// Rank 0 waits for the gradient of microbatch 0 before it runs the
// forward that the gradient needs.
sched.schedule @stuck stages 2 microbatches 1 {
  sched.rank 0 {
    sched.backward stage 0 mb 0
    sched.forward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
}
