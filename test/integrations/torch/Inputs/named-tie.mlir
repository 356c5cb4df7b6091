// Two dispatch all-to-alls before each forward, one named: the unnamed
// first one is read as the second declaration's (executor-named-declaration.test).
sched.schedule @tie stages 1 microbatches 2 {
  sched.group @ep members [[0]]
  sched.collective all_to_all @ep bytes 64 when before_forward
  sched.collective all_to_all @ep bytes 64 when before_forward
  sched.rank 0 {
    sched.all_to_all @ep stage 0 bytes 64
    sched.all_to_all @ep stage 0 bytes 64 declaration 0
    sched.forward stage 0 mb 0
    sched.all_to_all @ep stage 0 bytes 64
    sched.all_to_all @ep stage 0 bytes 64
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
    sched.optimizer_step
  }
}
