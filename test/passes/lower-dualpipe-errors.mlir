// RUN: sched-opt %s -split-input-file --sched-lower-dualpipe -verify-diagnostics

// expected-error @below {{cannot be lowered: strategy dualpipe needs an even pp (half the ranks feed each replica), got pp = 3}}
sched.pipeline @odd_pp pp 3 microbatches 6 {}

// -----

// expected-error @below {{cannot be lowered: strategy dualpipe needs an even number of microbatches, at least 2 pp = 8 (half go down each replica), got 9}}
sched.pipeline @odd_m pp 4 microbatches 9 {}

// -----

// expected-error @below {{cannot be lowered: strategy dualpipe needs an even number of microbatches, at least 2 pp = 8 (half go down each replica), got 6}}
sched.pipeline @few_m pp 4 microbatches 6 {}

// -----

// expected-error @below {{cannot be lowered: strategy dualpipe needs vpp = 1 (one stage per rank), got vpp = 2}}
sched.pipeline @virtual pp 4 vpp 2 microbatches 8 {}
