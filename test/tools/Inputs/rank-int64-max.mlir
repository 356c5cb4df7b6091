sched.schedule @s stages 2 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
  sched.rank 9223372036854775807 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
}
