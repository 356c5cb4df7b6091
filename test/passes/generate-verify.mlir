// sched-generate-verify: lower, insert transfers and collectives, prove and
// simulate, under one name and with its options.
// RUN: sched-opt %s --sched-generate-verify="strategy=zb-h1 p2p=eager" 2>&1 | FileCheck %s
// RUN: sched-opt %s --pass-pipeline="builtin.module(sched-generate-verify{strategy=gpipe cost=f=1,b=2})" 2>&1 | FileCheck %s --check-prefix=GPIPE

// CHECK: remark: makespan 10; bubble ratio per rank 0.1 0.1; peak activations per rank 2 1.5
// CHECK-LABEL: sched.schedule @p stages 2 microbatches 3 {
// CHECK: sched.rank 0 {
// CHECK-NEXT: sched.forward stage 0 mb 0
// CHECK-NEXT: sched.send forward stage 0 mb 0 to 1
// CHECK: sched.backward_weight stage 0 mb 2
// CHECK-NEXT: sched.optimizer_step
// CHECK: sched.rank 1 {
// CHECK-NEXT: sched.recv forward stage 1 mb 0 from 0
// CHECK: sched.optimizer_step

// GPipe, with F = 1 and B = 2: 3 forwards and 3 backwards on each of two
// ranks, one step of fill and drain each way: (3 + 1) * 1 + (3 + 1) * 2.
// GPIPE: remark: makespan 12; bubble ratio per rank 0.25 0.25; peak activations per rank 3 3
// GPIPE: sched.schedule @p stages 2 microbatches 3 {

// A memory limit below the peak is a violation at the schedule's ops.
// RUN: not sched-opt %s --sched-generate-verify="memory-limit=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MEMORY
// MEMORY: error: [memory] memory on rank 0 reaches 2 activation units here, over the limit of 1 activation units
// MEMORY-NOT: remark: makespan

// Bad options are one clear error each.
// RUN: not sched-opt %s --sched-generate-verify="strategy=zz" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// STRATEGY: error: sched-generate-verify: unknown strategy 'zz'; expected one of: gpipe, 1f1b,
// RUN: not sched-opt %s --sched-generate-verify="p2p=maybe" 2>&1 | FileCheck %s --check-prefix=P2P
// P2P: error: sched-generate-verify: unknown p2p semantics 'maybe'; expected eager or rendezvous
// RUN: not sched-opt %s --sched-generate-verify="memory-budget=0" 2>&1 | FileCheck %s --check-prefix=BUDGET
// BUDGET: error: sched-generate-verify: memory-budget: invalid memory size '0': expected bytes, or a number with a K, M, G or T suffix (e.g. 512M, 4G), from 1 byte to 8 EiB
// RUN: not sched-opt %s --sched-generate-verify="strategy=interleaved-1f1b" 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: 'sched.pipeline' op cannot be lowered: strategy interleaved-1f1b needs vpp >= 2, got vpp = 1

sched.pipeline @p pp 2 microbatches 3 {}
