// Two schedules in one file: 1F1B with one microbatch (makespan 6 with
// unit costs) and GPipe with two (makespan 9).
sched.schedule @a stages 2 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
}
sched.schedule @b stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 0
    sched.backward stage 1 mb 1
  }
}
