// RUN: sched-opt %s -split-input-file --sched-lower-zb-v -verify-diagnostics

// expected-error @below {{cannot be lowered: strategy zb-v needs vpp = 2 (two stages per rank in a V), got vpp = 1}}
sched.pipeline @p pp 4 microbatches 8 {}

// -----

// expected-error @below {{cannot be lowered: strategy zb-v needs vpp = 2 (two stages per rank in a V), got vpp = 3}}
sched.pipeline @p pp 4 vpp 3 microbatches 8 {}
