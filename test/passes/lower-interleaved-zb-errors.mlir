// RUN: sched-opt %s --sched-lower-interleaved-zb -verify-diagnostics

// expected-error @below {{cannot be lowered: strategy interleaved-zb needs loop placement (stage s on rank s mod pp), got placement v}}
sched.pipeline @p pp 2 vpp 2 microbatches 4 placement v {}
