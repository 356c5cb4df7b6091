// RUN: sched-opt %s --sched-insert-collectives -verify-diagnostics

sched.schedule @s stages 2 microbatches 1 {
  sched.group @tp members [[0]]
  // expected-error @below {{asks rank 1 (it holds stage 1) to issue a collective on group @tp, which has no member set holding that rank}}
  sched.collective all_reduce @tp bytes 8 when after_forward
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
}
