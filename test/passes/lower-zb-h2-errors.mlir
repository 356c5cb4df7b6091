// RUN: sched-opt %s --sched-lower-zb-h2 -verify-diagnostics

// expected-error @below {{cannot be lowered: strategy zb-h2 needs vpp = 1 (one stage per rank), got vpp = 2}}
sched.pipeline @p pp 2 vpp 2 microbatches 4 {}
