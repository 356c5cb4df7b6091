// RUN: sched-opt %s -split-input-file --sched-lower-1f1b -verify-diagnostics

// expected-error @below {{cannot be lowered: strategy 1f1b needs vpp = 1 (one stage per rank), got vpp = 2}}
sched.pipeline @p pp 2 vpp 2 microbatches 4 {}

// -----

// The fuzzer's 4 x 67,108,864: an F and a B per stage and microbatch make
// 536,870,912 actions, refused under the default 2 GiB budget before
// anything is generated (it used to take 8 GB).
// expected-error-re @below {{cannot be lowered: lowering with 1f1b needs about {{[0-9.]+}} GiB of working memory (536870912 actions at {{[0-9]+}} bytes each, {{[0-9]+}} microbatches at {{[0-9]+}} bytes each), more than the budget of 2 GiB; raise it with the pass option memory-budget=SIZE (docs/limits.md)}}
sched.pipeline @p pp 4 microbatches 67108864 {}
