// RUN: sched-opt %s --sched-lower-v-min -verify-diagnostics

// expected-error @below {{cannot be lowered: strategy v-min needs vpp = 2 (two stages per rank in a V), got vpp = 1}}
sched.pipeline @p pp 4 microbatches 8 {}
