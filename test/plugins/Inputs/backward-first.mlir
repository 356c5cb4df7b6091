sched.schedule @s stages 2 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.send forward stage 0 mb 0 to 1
    sched.recv backward stage 0 mb 0 from 1
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.backward stage 1 mb 0
    sched.recv forward stage 1 mb 0 from 0
    sched.forward stage 1 mb 0
    sched.send backward stage 1 mb 0 to 0
  }
}
