// RUN: sched-opt %s -split-input-file --sched-lower-1f1b -verify-diagnostics

// expected-error @below {{cannot be lowered: strategy 1f1b needs vpp = 1 (one stage per rank), got vpp = 2}}
sched.pipeline @p pp 2 vpp 2 microbatches 4 {}
