// RUN: sched-opt %s -split-input-file --sched-lower-looped-bfs -verify-diagnostics

// expected-error @below {{cannot be lowered: strategy looped-bfs needs vpp >= 2, got vpp = 1}}
sched.pipeline @p pp 4 microbatches 8 {}

// -----

// expected-error @below {{cannot be lowered: strategy looped-bfs needs loop placement (stage s on rank s mod pp), got placement v}}
sched.pipeline @p pp 2 vpp 2 microbatches 4 placement v {}
