// Every sched-lower-* pass estimates the working memory of a lowering from
// the pipeline's sizes and refuses one over its memory-budget option
// (default 2 GiB) before generating anything (docs/limits.md).
// RUN: sched-opt %s --sched-lower-gpipe=memory-budget=1024 -verify-diagnostics
// RUN: sched-opt %s --sched-lower-gpipe=memory-budget=1048576 | FileCheck %s

// GPipe: an F and a B per stage and microbatch, 2 x 2 x 2 = 8 actions at
// a hundred bytes or more each: over 1 KiB, well within 1 MiB.
// expected-error-re @below {{cannot be lowered: lowering with gpipe needs about {{.*}} of working memory (8 actions at {{[0-9]+}} bytes each, {{[0-9]+}} microbatches at {{[0-9]+}} bytes each), more than the budget of 1 KiB; raise it with the pass option memory-budget=SIZE (docs/limits.md)}}
sched.pipeline @p pp 2 microbatches 2 {}
// CHECK: sched.schedule @p stages 2 microbatches 2
