// RUN: sched-opt %s --sched-lower-dualpipe-v -verify-diagnostics

// expected-error @below {{cannot be lowered: strategy dualpipe-v needs vpp = 2 (two stages per rank in a V), got vpp = 1}}
sched.pipeline @p pp 4 microbatches 8 {}
