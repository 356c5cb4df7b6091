// A schedule with a truncated action.
sched.schedule @s stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage
  }
}
