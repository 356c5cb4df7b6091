// sched-verify's options: bad values are clear errors; the SMT-LIB flag
// writes the query; a memory limit option overrides the schedule's.
// RUN: not sched-opt %s --sched-verify="p2p=maybe" 2>&1 | FileCheck %s --check-prefix=P2P
// P2P: error: sched-verify: unknown p2p semantics 'maybe'; expected eager or rendezvous
// RUN: not sched-opt %s --sched-verify="proof=guess" 2>&1 | FileCheck %s --check-prefix=PROOF
// PROOF: error: sched-verify: unknown proof mode 'guess'; expected witness or search
// RUN: not sched-opt %s --sched-verify="timeout=inf" 2>&1 | FileCheck %s --check-prefix=TIMEOUT
// TIMEOUT: error: sched-verify: timeout must be a finite number of seconds >= 0 (0: no limit), got inf
// A fraction outside [0, 1] made the residue from I to W negative: a
// memory violation came out "verified".
// RUN: not sched-opt %s --sched-verify="memory-limit=1 weight-grad-fraction=-100" 2>&1 | FileCheck %s --check-prefix=FRACTION
// FRACTION: error: sched-verify: weight-grad-fraction must be a number in [0, 1], got -100
// FRACTION-NOT: verified
// RUN: not sched-opt %s --sched-verify="weight-grad-fraction=nan" 2>&1 | FileCheck %s --check-prefix=FRACTION-NAN
// FRACTION-NAN: error: sched-verify: weight-grad-fraction must be a number in [0, 1], got nan
// RUN: sched-opt %s --sched-verify --sched-verify-emit-smtlib=%t.smt2 -o /dev/null
// RUN: FileCheck %s --check-prefix=SMT < %t.smt2
// SMT: (declare-fun t!
// SMT: (check-sat)
// RUN: not sched-opt %s --sched-verify="memory-limit=1" 2>&1 | FileCheck %s --check-prefix=LIMIT
// LIMIT: error: [memory] memory on rank 0 reaches 2 activation units here, over the limit of 1 activation units

sched.schedule @s stages 2 microbatches 2 memory_limit 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
  }
}
