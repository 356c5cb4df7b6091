// RUN: sched-opt %s --sched-lower-gpipe -verify-diagnostics

// expected-error @below {{cannot be lowered: strategy gpipe needs vpp = 1 (one stage per rank), got vpp = 3}}
sched.pipeline @p pp 2 vpp 3 microbatches 4 {}
