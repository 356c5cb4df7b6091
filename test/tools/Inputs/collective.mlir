sched.schedule @collectives stages 2 microbatches 1 {
  sched.group @world members [[0, 1]]
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    sched.all_reduce @world stage 0
    sched.barrier @world
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.barrier @world
    sched.all_reduce @world stage 0
  }
}
