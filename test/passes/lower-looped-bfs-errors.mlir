// RUN: sched-opt %s -split-input-file --sched-lower-looped-bfs -verify-diagnostics

// expected-error @below {{cannot be lowered: strategy looped-bfs needs vpp >= 2, got vpp = 1}}
sched.pipeline @p pp 4 microbatches 8 {}

// -----

// expected-error @below {{cannot be lowered: strategy looped-bfs needs loop placement (stage s on rank s mod pp), got placement v}}
sched.pipeline @p pp 2 vpp 2 microbatches 4 placement v {}

// -----

// 2 ranks x 2 stages x 67,108,864 microbatches, an F and a B each:
// 536,870,912 actions, refused under the default budget (the lowering used
// to abort on allocation).
// expected-error-re @below {{cannot be lowered: lowering with looped-bfs needs about {{[0-9.]+}} GiB of working memory (536870912 actions at {{[0-9]+}} bytes each, {{[0-9]+}} microbatches at {{[0-9]+}} bytes each), more than the budget of 2 GiB; raise it with the pass option memory-budget=SIZE (docs/limits.md)}}
sched.pipeline @p pp 2 vpp 2 microbatches 67108864 {}
