// RUN: sched-opt %s -split-input-file --sched-lower-no-pp -verify-diagnostics

// expected-error @below {{cannot be lowered: strategy no-pp needs pp = 1 (a single pipeline stage), got pp = 2}}
sched.pipeline @p pp 2 microbatches 4 {}

// -----

// expected-error @below {{cannot be lowered: strategy no-pp needs vpp = 1 (one stage per rank), got vpp = 2}}
sched.pipeline @p pp 1 vpp 2 microbatches 4 {}
