//===- Passes.td - passes of schedc ------------------------*- tablegen -*-===//

#ifndef SCHED_PASSES_TD
#define SCHED_PASSES_TD

include "mlir/Pass/PassBase.td"

class LowerPass<string flag, string name, string what>
    : Pass<flag, "mlir::ModuleOp"> {
  let summary = "Lower each sched.pipeline to a " # name # " schedule";
  let description = [{
    Replaces every `sched.pipeline` in the module by a `sched.schedule` of
    the same name whose ranks run }] # what # [{ The stage, group, aux-head
    and collective declarations move into the schedule. The schedule holds
    compute actions only; `sched-insert-p2p` adds the transfers. When the
    order breaks a `global_batch` aux head (a backward of its stage before
    the last forward there), the lowering fails with one error at the head
    naming the conflict and the ways out, unless `aux-conflicts=keep`
    leaves it to `sched-legalize-aux-loss` (docs/aux-loss.md). A
    lowering whose working memory, estimated from the pipeline's sizes, is
    over `memory-budget` is refused before anything is generated
    (docs/limits.md).
  }];
  let dependentDialects = ["::sched::SchedDialect"];
  let options = [
    Option<"memoryBudget", "memory-budget", "::sched::MemoryBudgetOption",
           /*default=*/"::sched::kDefaultMemoryBudget",
           "Working memory the lowering may use: bytes, or a number with a "
           "K, M, G or T suffix (default 2G)">,
    Option<"auxConflicts", "aux-conflicts", "std::string",
           /*default=*/"\"error\"",
           "A global-batch aux head the order breaks: error (fail at the "
           "head, naming the ways out) or keep (lower anyway, for "
           "sched-legalize-aux-loss)">,
  ];
}

def LowerGPipe : LowerPass<"sched-lower-gpipe", "GPipe",
    [{every forward, then every backward, microbatches in order (Huang et al.
    2019). Peak activations: all M microbatches on every rank.

    ```mlir
    // sched-opt --sched-lower-gpipe
    sched.pipeline @p pp 2 microbatches 2 {}
    // becomes
    sched.schedule @p stages 2 microbatches 2 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.forward stage 0 mb 1
        sched.backward stage 0 mb 0
        sched.backward stage 0 mb 1
      }
      sched.rank 1 { ... }
    }
    ```}]>;

def LowerOneFOneB : LowerPass<"sched-lower-1f1b", "1F1B",
    [{1F1B (PipeDream-Flush, Narayanan et al. 2021): rank `r` runs
    `min(P - 1 - r, M)` warm-up forwards, then alternates one forward and one
    backward, then drains the remaining backwards. Any `M >= 1` works; with
    `M < P` the warm-up is shorter. Peak activations on rank `r`:
    `min(P - r, M)`.

    ```mlir
    // sched-opt --sched-lower-1f1b
    sched.pipeline @p pp 2 microbatches 2 {}
    // becomes
    sched.schedule @p stages 2 microbatches 2 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.forward stage 0 mb 1
        sched.backward stage 0 mb 0
        sched.backward stage 0 mb 1
      }
      sched.rank 1 {
        sched.forward stage 1 mb 0
        sched.backward stage 1 mb 0
        sched.forward stage 1 mb 1
        sched.backward stage 1 mb 1
      }
    }
    ```}]>;

def LowerInterleavedOneFOneB : LowerPass<"sched-lower-interleaved-1f1b",
    "Megatron interleaved 1F1B",
    [{Megatron-LM's interleaved 1F1B (Narayanan et al. 2021). Needs
    `vpp >= 2` and loop placement: rank `r` holds chunks `c = 0 .. v-1`,
    chunk `c` being stage `c * P + r`. Microbatches form `max(1, M / P)`
    groups as even as possible (larger first, `P` to `2P - 1` each; one
    group when `M < P`). Every rank runs the forwards of a group chunk by
    chunk and its backwards chunk by chunk in reverse; rank `r` runs
    `2(P - 1 - r) + (v - 1) G` warm-up forwards (`G` the largest group),
    then alternates one forward and one backward. Any `M >= 1` works. With
    `P | M`: makespan `(M v + P - 1)(T_F + T_B)` in per-stage costs and a
    peak of `2(P - 1) + (v - 1) P + 1` stage activations on rank 0.

    ```mlir
    // sched-opt --sched-lower-interleaved-1f1b
    sched.pipeline @p pp 2 vpp 2 microbatches 2 {}
    // becomes
    sched.schedule @p stages 4 microbatches 2 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.forward stage 0 mb 1
        sched.forward stage 2 mb 0
        sched.forward stage 2 mb 1
        sched.backward stage 2 mb 0
        sched.backward stage 2 mb 1
        sched.backward stage 0 mb 0
        sched.backward stage 0 mb 1
      }
      sched.rank 1 {
        sched.forward stage 1 mb 0
        sched.forward stage 1 mb 1
        sched.forward stage 3 mb 0
        sched.backward stage 3 mb 0
        sched.forward stage 3 mb 1
        sched.backward stage 3 mb 1
        sched.backward stage 1 mb 0
        sched.backward stage 1 mb 1
      }
    }
    ```}]>;

def LowerLoopedBFS : LowerPass<"sched-lower-looped-bfs", "looped BFS",
    [{every microbatch of a chunk before the next chunk (Lamy-Poirier 2023,
    "Breadth-First Pipeline Parallelism"). Needs `vpp >= 2` and loop
    placement: rank `r` holds stages `c * P + r`. Each rank runs all
    forwards chunk by chunk, then all backwards from the last chunk down.
    Peak activations: all `M v` stage activations on every rank; makespan
    as interleaved 1F1B's.

    ```mlir
    // sched-opt --sched-lower-looped-bfs
    sched.pipeline @p pp 2 vpp 2 microbatches 2 {}
    // becomes
    sched.schedule @p stages 4 microbatches 2 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.forward stage 0 mb 1
        sched.forward stage 2 mb 0
        sched.forward stage 2 mb 1
        sched.backward stage 2 mb 0
        sched.backward stage 2 mb 1
        sched.backward stage 0 mb 0
        sched.backward stage 0 mb 1
      }
      sched.rank 1 { ... }
    }
    ```}]>;

def LowerZBH1 : LowerPass<"sched-lower-zb-h1", "ZB-H1",
    [{ZB-H1 (Qi et al. 2024, "Zero Bubble Pipeline Parallelism"): the
    backward splits into `sched.backward_input` (I) and
    `sched.backward_weight` (W). Needs `vpp = 1`. Rank `r` runs `P - r`
    forwards, then per microbatch an I, a W once more than `r` weight
    gradients wait, and the next forward; the waiting W close the program.
    Any `M >= 1`. Bubble `(P - 1)(T_F + T_I - T_W)` for `M >= P`; peak
    activations `P` on rank 0.

    ```mlir
    // sched-opt --sched-lower-zb-h1
    sched.pipeline @p pp 2 microbatches 2 {}
    // becomes
    sched.schedule @p stages 2 microbatches 2 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.forward stage 0 mb 1
        sched.backward_input stage 0 mb 0
        sched.backward_weight stage 0 mb 0
        sched.backward_input stage 0 mb 1
        sched.backward_weight stage 0 mb 1
      }
      sched.rank 1 {
        sched.forward stage 1 mb 0
        sched.backward_input stage 1 mb 0
        sched.forward stage 1 mb 1
        sched.backward_input stage 1 mb 1
        sched.backward_weight stage 1 mb 0
        sched.backward_weight stage 1 mb 1
      }
    }
    ```}]>;

def LowerZBH2 : LowerPass<"sched-lower-zb-h2", "ZB-H2",
    [{ZB-H2 (Qi et al. 2024): as ZB-H1 with `2(P - 1 - r) + 1` forwards
    before the first I on rank `r` and up to `r + min(r, max(0, M - P))`
    waiting weight gradients. Needs `vpp = 1`; any `M >= 1`. For
    `M >= 2P - 1` and `T_F = T_I = T_W` every rank runs from its first
    action to its last without idle (the makespan still carries the
    `(P - 1) T_F` it takes the first forward to reach the last rank); peak
    activations `2P - 1` on rank 0.

    ```mlir
    // sched-opt --sched-lower-zb-h2
    sched.pipeline @p pp 2 microbatches 3 {}
    // becomes
    sched.schedule @p stages 2 microbatches 3 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.forward stage 0 mb 1
        sched.forward stage 0 mb 2
        sched.backward_input stage 0 mb 0
        sched.backward_weight stage 0 mb 0
        ...
      }
      sched.rank 1 {
        sched.forward stage 1 mb 0
        sched.backward_input stage 1 mb 0
        sched.forward stage 1 mb 1
        sched.backward_input stage 1 mb 1
        sched.forward stage 1 mb 2
        sched.backward_input stage 1 mb 2
        sched.backward_weight stage 1 mb 0
        sched.backward_weight stage 1 mb 1
        sched.backward_weight stage 1 mb 2
      }
    }
    ```}]>;

def LowerInterleavedZB : LowerPass<"sched-lower-interleaved-zb",
    "interleaved zero-bubble",
    [{interleaved 1F1B with the backward split into `sched.backward_input`
    (I) and `sched.backward_weight` (W) (Qi et al. 2024 on Megatron's
    interleaving; PyTorch's `ScheduleInterleavedZeroBubble`). Needs loop
    placement: rank `r` holds chunks `c = 0 .. v-1`, chunk `c` being stage
    `c * P + r`; any `v >= 1` (with `v = 1` the order is ZB-H1's). The
    microbatches form interleaved 1F1B's groups (`max(1, M / P)` of them, `P`
    to `2P - 1` each, larger first); every rank runs the forwards of a group
    chunk by chunk and its input gradients chunk by chunk in reverse. Rank
    `r` runs `w_r = min(M v, (v - 1) G + P - 1 - r)` forwards (`G` the
    largest group), then per input gradient the next forward while any
    remain, the I, and the oldest waiting W once `r` of them wait. Any
    `M >= 1`. With unit costs the makespan is
    `max(3 M v + P - 1, 2 M v + P v + P - 1, 2 P v + 2 M - 1)`, the least
    any schedule can have, and rank `r` peaks at
    `min(M v, w_r + 1 + min(r, M v - w_r - 1) / 2)` stage activations:
    `v P` on rank 0 when `P | M`.

    ```mlir
    // sched-opt --sched-lower-interleaved-zb
    sched.pipeline @p pp 2 vpp 2 microbatches 2 {}
    // becomes
    sched.schedule @p stages 4 microbatches 2 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.forward stage 0 mb 1
        sched.forward stage 2 mb 0
        sched.forward stage 2 mb 1
        sched.backward_input stage 2 mb 0
        sched.backward_weight stage 2 mb 0
        sched.backward_input stage 2 mb 1
        sched.backward_weight stage 2 mb 1
        sched.backward_input stage 0 mb 0
        sched.backward_weight stage 0 mb 0
        sched.backward_input stage 0 mb 1
        sched.backward_weight stage 0 mb 1
      }
      sched.rank 1 {
        sched.forward stage 1 mb 0
        sched.forward stage 1 mb 1
        sched.forward stage 3 mb 0
        sched.backward_input stage 3 mb 0
        sched.forward stage 3 mb 1
        sched.backward_input stage 3 mb 1
        sched.backward_weight stage 3 mb 0
        sched.backward_input stage 1 mb 0
        sched.backward_weight stage 3 mb 1
        sched.backward_input stage 1 mb 1
        sched.backward_weight stage 1 mb 0
        sched.backward_weight stage 1 mb 1
      }
    }
    ```}]>;

def LowerZBV : LowerPass<"sched-lower-zb-v", "ZB-V",
    [{ZB-V (Qi et al. 2024, "Zero Bubble Pipeline Parallelism"): two stages
    per rank in a V, stage `r` and stage `2P - 1 - r` on rank `r`, and the
    backward split into I and W. Needs `vpp = 2`; the strategy places the
    stages in a V whatever the pipeline's `placement` says (it defaults to
    `loop`). The order is list-scheduled in unit steps: a free rank runs the
    ready action that comes first in V-Min's building block, forwards only
    while it holds at most `2P` stage activations (`P` rank-worths), a
    waiting W whenever nothing else could start at once. Any `M >= 1`. With
    `T_F = T_I = T_W` and `M >= 2P` the makespan is `6M + P - 1` per-stage
    steps, the least possible.

    ```mlir
    // sched-opt --sched-lower-zb-v
    sched.pipeline @p pp 2 vpp 2 microbatches 2 {}
    // becomes
    sched.schedule @p stages 4 microbatches 2 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.forward stage 0 mb 1
        sched.forward stage 3 mb 0
        sched.backward_input stage 3 mb 0
        sched.forward stage 3 mb 1
        sched.backward_input stage 3 mb 1
        sched.backward_input stage 0 mb 0
        sched.backward_weight stage 3 mb 0
        sched.backward_input stage 0 mb 1
        sched.backward_weight stage 3 mb 1
        sched.backward_weight stage 0 mb 0
        sched.backward_weight stage 0 mb 1
      }
      sched.rank 1 {
        sched.forward stage 1 mb 0
        sched.forward stage 2 mb 0
        sched.forward stage 1 mb 1
        sched.forward stage 2 mb 1
        sched.backward_input stage 2 mb 0
        sched.backward_input stage 1 mb 0
        sched.backward_input stage 2 mb 1
        sched.backward_input stage 1 mb 1
        sched.backward_weight stage 2 mb 0
        sched.backward_weight stage 1 mb 0
        sched.backward_weight stage 2 mb 1
        sched.backward_weight stage 1 mb 1
      }
    }
    ```}]>;

def LowerVHalf : LowerPass<"sched-lower-v-half", "V-Half",
    [{V-Half (Qi et al. 2024b, "Pipeline Parallelism with Controllable
    Memory"): ZB-V's V and list schedule under a cap of `P + 2` stage
    activations, about half of 1F1B's. Needs `vpp = 2` (V placement, as
    ZB-V); any `M >= 1`. With `T_F = T_I = T_W` and `M >= 2P` the bubble is
    at most `3(P - 1)` steps, half of 1F1B's.

    ```mlir
    // sched-opt --sched-lower-v-half
    sched.pipeline @p pp 4 vpp 2 microbatches 4 {}
    // becomes (rank 0 admits three microbatches, not four, before its
    // first I: three activations and the three chunk-1 forwards they still
    // need fill the cap of 6)
    sched.schedule @p stages 8 microbatches 4 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.forward stage 0 mb 1
        sched.forward stage 0 mb 2
        sched.forward stage 7 mb 0
        sched.backward_input stage 7 mb 0
        sched.forward stage 7 mb 1
        sched.backward_input stage 7 mb 1
        sched.forward stage 7 mb 2
        sched.backward_input stage 7 mb 2
        sched.backward_weight stage 7 mb 0
        sched.forward stage 0 mb 3
        ...
      }
      ...
    }
    ```}]>;

def LowerVMin : LowerPass<"sched-lower-v-min", "V-Min",
    [{V-Min (Qi et al. 2024b): the V-Min building block repeated every six
    steps. In the block the forward goes down and up the V and the input
    gradient back without waiting, each action on the first step at or
    after its input whose slot modulo 6 is free on its rank, each W in the
    first free slot after its I; every rank runs its actions of all
    microbatches in the order of those steps. Needs `vpp = 2` (V placement,
    as ZB-V); any `M >= 1`. Peak `floor(2P/3) + 2` stage activations, about
    a third of 1F1B's; makespan `6M + 4P - 5` steps with unit costs (two
    more when 3 divides `P > 3` and `M > 1`), a bubble about two thirds of
    1F1B's.

    ```mlir
    // sched-opt --sched-lower-v-min
    sched.pipeline @p pp 2 vpp 2 microbatches 2 {}
    // becomes (block steps: rank 0 F 0, 3, I 4, 7, W 5, 8; rank 1 F 1, 2,
    // I 5, 6, W 9, 10; microbatch 1 six steps later)
    sched.schedule @p stages 4 microbatches 2 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.forward stage 3 mb 0
        sched.backward_input stage 3 mb 0
        sched.backward_weight stage 3 mb 0
        sched.forward stage 0 mb 1
        sched.backward_input stage 0 mb 0
        sched.backward_weight stage 0 mb 0
        sched.forward stage 3 mb 1
        sched.backward_input stage 3 mb 1
        sched.backward_weight stage 3 mb 1
        sched.backward_input stage 0 mb 1
        sched.backward_weight stage 0 mb 1
      }
      sched.rank 1 {
        sched.forward stage 1 mb 0
        sched.forward stage 2 mb 0
        sched.backward_input stage 2 mb 0
        sched.backward_input stage 1 mb 0
        sched.forward stage 1 mb 1
        sched.forward stage 2 mb 1
        sched.backward_weight stage 2 mb 0
        sched.backward_weight stage 1 mb 0
        sched.backward_input stage 2 mb 1
        sched.backward_input stage 1 mb 1
        sched.backward_weight stage 2 mb 1
        sched.backward_weight stage 1 mb 1
      }
    }
    ```}]>;

def LowerDualPipeV : LowerPass<"sched-lower-dualpipe-v", "DualPipeV",
    [{DeepSeek's DualPipeV (DualPipe cut in half): `P` ranks hold `2P`
    stages in a V. Rank `r` runs `2(P - 1 - r)` forwards of chunk 0, then
    `r + 1` pairs of forwards (chunk 0, chunk 1), `P - 1 - r` times an I of
    chunk 1, a waiting W and a forward of chunk 1, then
    `M - 2P + r + 1` times a `sched.overlap` of a chunk-0 forward with a
    chunk-1 backward and one of a chunk-1 forward with a chunk-0 backward
    (the last of them with an I, whose W fills a gap later); the rest is
    list-scheduled with split backwards, input gradients first. Needs
    `vpp = 2` (V placement, as ZB-V); any `M >= 1`, overlaps need `M > P`.
    With unit costs and `M >= P` the makespan is `6M + P - 1` steps; peak
    `2P + 1` stage activations.

    ```mlir
    // sched-opt --sched-lower-dualpipe-v
    sched.pipeline @p pp 2 vpp 2 microbatches 4 {}
    // becomes
    sched.schedule @p stages 4 microbatches 4 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.forward stage 0 mb 1
        sched.forward stage 0 mb 2
        sched.forward stage 3 mb 0
        sched.backward_input stage 3 mb 0
        sched.backward_weight stage 3 mb 0
        sched.forward stage 3 mb 1
        sched.overlap {
          sched.forward stage 0 mb 3
          sched.backward stage 3 mb 1
        }
        sched.overlap {
          sched.forward stage 3 mb 2
          sched.backward_input stage 0 mb 0
        }
        ...
      }
      sched.rank 1 {
        sched.forward stage 1 mb 0
        sched.forward stage 2 mb 0
        sched.forward stage 1 mb 1
        sched.forward stage 2 mb 1
        sched.overlap {
          sched.forward stage 1 mb 2
          sched.backward stage 2 mb 0
        }
        sched.overlap {
          sched.forward stage 2 mb 2
          sched.backward stage 1 mb 0
        }
        sched.overlap {
          sched.forward stage 1 mb 3
          sched.backward stage 2 mb 1
        }
        sched.overlap {
          sched.forward stage 2 mb 3
          sched.backward_input stage 1 mb 1
        }
        ...
      }
    }
    ```}]>;

def LowerDualPipe : LowerPass<"sched-lower-dualpipe", "DualPipe",
    [{DeepSeek's bidirectional DualPipe: two replicas of the `P`-stage
    pipeline, replica A fed from rank 0 with microbatches `0..M/2-1` and
    replica B fed from rank `P - 1` with the rest. The schedule has
    `replicas 2` and `2P` stages: replica A's stage `k` is stage `k` on
    rank `k`, replica B's is stage `P + k` on rank `P - 1 - k`; the stage,
    aux-head and per-stage collective declarations get a copy for replica
    B. Each rank runs DeepSeek's eight phases: forwards of its own side's
    replica, pairs of forwards, zero-bubble warm-up (I, W, F), a steady
    phase of `sched.overlap` pairs (a forward of one replica with a full
    backward of the other), then backwards whose weight gradients fill the
    drain. Needs `vpp = 1`, `P` even, `M` even and `M >= 2P`; every rank
    keeps both replicas' parameters. With unit costs (an overlap costs
    `F + B`) the makespan is `3M + P - 2` steps and every rank peaks at
    `P + 1` stage activations (docs/schedules.md).

    ```mlir
    // sched-opt --sched-lower-dualpipe
    sched.pipeline @p pp 2 microbatches 4 {}
    // becomes
    sched.schedule @p stages 4 microbatches 4 replicas 2 {
      sched.rank 0 { ... }
      sched.rank 1 { ... }
    }
    ```}]>;

def LowerNoPP : LowerPass<"sched-lower-no-pp", "no-pipeline",
    [{the whole model as one stage: every microbatch's forward, then its
    backward (gradient accumulation, no pipeline parallelism). Needs
    `pp = 1` and `vpp = 1`. No bubble, one activation alive.

    ```mlir
    // sched-opt --sched-lower-no-pp
    sched.pipeline @p pp 1 microbatches 2 {}
    // becomes
    sched.schedule @p stages 1 microbatches 2 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.backward stage 0 mb 0
        sched.forward stage 0 mb 1
        sched.backward stage 0 mb 1
      }
    }
    ```}]>;

def LowerCombinedOneFOneB : LowerPass<"sched-lower-combined-1f1b",
    "combined 1F1B",
    [{Megatron-Core's combined 1F1B without a pipeline
    (`combined_1f1b_schedule_for_no_pipelining`, turned on by
    `--overlap-moe-expert-parallel-comm`): the whole model as one stage, the
    forward of microbatch 0 alone, then `M - 1` `sched.overlap` pairs of the
    forward of microbatch `i + 1` with the backward of microbatch `i`, then
    the backward of microbatch `M - 1` alone. A runtime runs each pair layer
    by layer on two streams, so that the expert all-to-all of the one hides
    under the computation of the other. Needs `pp = 1` and `vpp = 1`; any
    `M >= 1`. No bubble; two activations alive (one with `M = 1`), against
    `no-pp`'s one.

    ```mlir
    // sched-opt --sched-lower-combined-1f1b
    sched.pipeline @p pp 1 microbatches 3 {}
    // becomes
    sched.schedule @p stages 1 microbatches 3 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.overlap {
          sched.forward stage 0 mb 1
          sched.backward stage 0 mb 0
        }
        sched.overlap {
          sched.forward stage 0 mb 2
          sched.backward stage 0 mb 1
        }
        sched.backward stage 0 mb 2
      }
    }
    ```}]>;

def LowerInterleavedCombinedOneFOneB
    : LowerPass<"sched-lower-interleaved-combined-1f1b",
    "Megatron interleaved combined 1F1B",
    [{Megatron-Core's combined 1F1B inside its interleaved 1F1B
    (`combined_1f1b_schedule_for_interleaved_pipelining`, what
    `--overlap-moe-expert-parallel-comm` runs with pipeline parallelism):
    the chunks, microbatch groups and order of `sched-lower-interleaved-1f1b`
    (`vpp >= 2`, loop placement, chunk `c` of rank `r` being stage
    `c * P + r`), one more warm-up forward on every rank
    (`2(P - 1 - r) + (v - 1) G + 1`, `G` the largest group), and every step
    of the steady phase a `sched.overlap` pair of the next forward with the
    oldest pending backward, of another microbatch or chunk; the cool-down
    runs the remaining backwards alone. The extra forward keeps each pair's
    backward independent of its forward. Any `M >= 1`. One stage activation
    more than interleaved 1F1B at the peak: `2(P - 1 - r) + (v - 1) G + 2`
    on rank `r` (at most `M v`).

    ```mlir
    // sched-opt --sched-lower-interleaved-combined-1f1b
    sched.pipeline @p pp 2 vpp 2 microbatches 2 {}
    // becomes
    sched.schedule @p stages 4 microbatches 2 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.forward stage 0 mb 1
        sched.forward stage 2 mb 0
        sched.forward stage 2 mb 1
        sched.backward stage 2 mb 0
        sched.backward stage 2 mb 1
        sched.backward stage 0 mb 0
        sched.backward stage 0 mb 1
      }
      sched.rank 1 {
        sched.forward stage 1 mb 0
        sched.forward stage 1 mb 1
        sched.forward stage 3 mb 0
        sched.overlap {
          sched.forward stage 3 mb 1
          sched.backward stage 3 mb 0
        }
        sched.backward stage 3 mb 1
        sched.backward stage 1 mb 0
        sched.backward stage 1 mb 1
      }
    }
    ```}]>;

def Synthesize : Pass<"sched-synthesize", "mlir::ModuleOp"> {
  let summary = "Replace each sched.pipeline by a schedule solved for its "
                "costs and memory, with a certified gap";
  let description = [{
    Solves for the schedule instead of choosing a strategy
    (docs/synthesis.md): the pipeline's F, I and W (or B) per stage and
    microbatch, with the stage times and sizes its `sched.stage`
    declarations give, a transfer time between ranks (`comm`), one compute
    stream per rank, and a memory limit per rank (`memory-limit`, else the
    pipeline's `memory_limit`, else none), on the pipeline's placement
    (loop or v). A list scheduler with local search finds a schedule; a
    lower bound (critical path, the round trips memory forces, each
    rank's work with heads and tails) states how far from optimal it can be; while
    that gap is open, Z3 searches for a shorter schedule or a proof that
    none is (`solver=exact`, within `time-limit`). The result replaces the
    pipeline like every lowering, so `sched-insert-p2p`,
    `sched-insert-collectives` and `sched-verify` run unchanged; the
    schedule's `sched.synthesis` attribute records makespan, bound, gap,
    solvers and why Z3 stopped (`z3`: optimal, gap reached, time limit).
    Memory counts parameters and activations (F allocates, I frees all but
    the weight-gradient part, W or B the rest); receive buffers are left
    to the verifier. A limit below what one microbatch needs is one
    error naming the smallest feasible limit. A global-batch aux head
    orders every forward of its stage before any backward there, and the
    ranks at and below it hold every microbatch's activations (one stage
    per rank on a loop, stages without an output size; otherwise an
    error naming the ways out).

    ```mlir
    // sched-opt --sched-synthesize="memory-limit=4"
    sched.pipeline @p pp 2 microbatches 2 {}
    // becomes
    sched.schedule @p stages 2 microbatches 2 attributes {sched.synthesis =
        {gap = 0.0 : f64, lower_bound = 7.0 : f64, makespan = 7.0 : f64,
         optimal = true, solvers = "list"}} {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.forward stage 0 mb 1
        ...
      }
      ...
    }
    ```
  }];
  let dependentDialects = ["::sched::SchedDialect"];
  let options = [
    Option<"memoryLimit", "memory-limit", "std::string", /*default=*/"\"\"",
           "Device memory per rank: bytes, or stage activations when no "
           "stage declares sizes, read exactly as written (4, 3.5, 8e10; "
           "inf: none); empty: the pipeline's memory_limit">,
    Option<"comm", "comm", "::sched::PassOptionValue<double>", /*default=*/"0",
           "Time of one transfer between two ranks">,
    Option<"backward", "backward", "std::string", /*default=*/"\"split\"",
           "split: input and weight gradients as I and W; full: one B">,
    Option<"solver", "solver", "std::string", /*default=*/"\"exact\"",
           "list: the list scheduler and the bound; exact: then Z3 while "
           "the gap is open">,
    Option<"timeLimit", "time-limit", "::sched::PassOptionValue<double>", /*default=*/"10",
           "Seconds for the whole synthesis: the list scheduler's search, "
           "Z3 and the transfers' buffer repairs">,
    Option<"gap", "gap", "::sched::PassOptionValue<double>", /*default=*/"0.01",
           "Z3 stops once the gap is at most this (0: prove optimality)">,
    Option<"weightGradFraction", "weight-grad-fraction", "::sched::PassOptionValue<double>",
           /*default=*/"0.5",
           "Part of an activation kept from I until W when stages have no "
           "sizes">,
    Option<"memoryBudget", "memory-budget", "::sched::MemoryBudgetOption",
           /*default=*/"::sched::kDefaultMemoryBudget",
           "Working memory the synthesis may use: bytes, or a number with a "
           "K, M, G or T suffix (default 2G)">,
  ];
}

def LegalizeAuxLoss : Pass<"sched-legalize-aux-loss", "mlir::ModuleOp"> {
  let summary = "Make a schedule keep its global-batch aux-loss heads";
  let description = [{
    A `global_batch` aux head at stage `h` makes every backward of `h` wait
    for the forward of every microbatch there; 1F1B-like orders break that
    (the lowering passes refuse them unless `aux-conflicts=keep`). On every
    `sched.schedule` with such heads, by `mode`:

    - `error` (default): one error at each head whose order is broken,
      naming the backward and forward in conflict and the fixes;
    - `reorder`: rewrites the ranks so the heads hold. The backwards (B, I,
      W) of the stages at or below the highest head are held back; a list
      simulation (stage costs, unit steps when a cost is zero) runs every
      rank in its order, and a held-back action runs at its place once its
      inputs and every forward of its head are done, else the next action
      that is not held back overtakes it. The stages at and below the head
      end up all-forward-then-all-backward; the rest keeps its order. On a
      lowered schedule (after `sched-insert-p2p`) the transfers move with
      their compute: they are placed again as `sched-insert-p2p` places
      them (grouped if the schedule had p2p groups, with the bytes they
      carried), so the result runs under rendezvous and eager semantics.
      A schedule that already keeps its heads is left as it is; one with
      collectives or an optimizer step is refused (run this pass before
      `sched-insert-collectives`). The memory the held activations take is
      for `sched-verify` to check against the limit;
    - `aux-free`: DeepSeek-V3's auxiliary-loss-free balancing. Each head
      becomes `scope aux_free` with a bias update, an all-reduce of the
      per-expert load (`bias-bytes`) on `bias-group` (created with each
      rank alone when the schedule has none: the data-parallel peers of a
      rank are the same rank of the other replicas; with pipeline replicas,
      DualPipe's, the ranks of a model stage's copies together, since each
      copy sees only its replica's microbatches and their biases must be
      reduced together). No order changes, so
      the peak is the strategy's. On a schedule that already holds more
      than compute the pass inserts the all-reduce after the op that
      completes the stage's last gradient; on a compute-only one
      `sched-insert-collectives` does.

    ```mlir
    // sched-opt --sched-legalize-aux-loss="mode=aux-free"
    sched.schedule @s stages 2 microbatches 2 {
      sched.aux_head stage 1 scope global_batch
      ...
    }
    // becomes
    sched.schedule @s stages 2 microbatches 2 {
      sched.group @dp members [[0], [1]]
      sched.aux_head stage 1 scope aux_free bias @dp bytes 1024
      ...
    }
    ```
  }];
  let dependentDialects = ["::sched::SchedDialect"];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"error\"",
           "error (report each broken head), reorder (all forwards, then "
           "all backwards around the heads) or aux-free (bias balancing)">,
    Option<"biasGroup", "bias-group", "std::string", /*default=*/"\"dp\"",
           "aux-free: the group of the bias update's all-reduce">,
    Option<"biasBytes", "bias-bytes", "::sched::PassOptionValue<int64_t>", /*default=*/"1024",
           "aux-free: bytes of the per-expert load the all-reduce sums "
           "(default: 256 experts x 4 bytes)">,
  ];
}

def VerifySchedules : Pass<"sched-verify", "mlir::ModuleOp"> {
  let summary = "Prove each sched.schedule complete, deadlock-free and "
                "within memory";
  let description = [{
    Runs the schedule verifier (docs/verifier.md states the contract) on
    every `sched.schedule` in the module: completeness, dependencies
    (including global-batch aux-loss heads), progress under the chosen
    point-to-point semantics, collective order, and memory against the
    schedule's `memory_limit` (or the `memory-limit` option). Each
    violation is an error at the offending action with notes (the cycle of
    waits of a deadlock, the live set at a memory peak); the pass fails
    when a schedule is violated or the verdict is unknown. Z3 decides
    every verdict; `--sched-verify-emit-smtlib=FILE` writes its query.

    ```mlir
    // sched-opt --sched-verify
    sched.schedule @s stages 2 microbatches 1 {
      sched.rank 0 {
        // error: [dependency] B(stage 0, mb 0) runs before F(stage 0, mb 0)
        sched.backward stage 0 mb 0
        sched.forward stage 0 mb 0
      }
      ...
    }
    ```
  }];
  let options = [
    Option<"p2p", "p2p", "std::string", /*default=*/"\"rendezvous\"",
           "Point-to-point semantics: eager or rendezvous">,
    Option<"memoryLimit", "memory-limit", "std::string", /*default=*/"\"\"",
           "Device memory (bytes, or activation units without sizes), "
           "read exactly as written (1.9, 8e10; inf: none); empty: the "
           "schedule's memory_limit">,
    Option<"weightGradFraction", "weight-grad-fraction", "::sched::PassOptionValue<double>",
           /*default=*/"0.5",
           "Part of an activation kept from I until W when stages have no "
           "sizes">,
    Option<"timeout", "timeout", "::sched::PassOptionValue<double>", /*default=*/"0",
           "Solver budget in seconds (0: none); running out gives unknown">,
    Option<"proof", "proof", "std::string", /*default=*/"\"witness\"",
           "witness: Z3 checks the graph path's execution; search: Z3 "
           "solves unaided">,
    Option<"emitSmtlib", "emit-smtlib", "std::string", /*default=*/"\"\"",
           "Write the SMT-LIB 2 query to this file">,
  ];
}

def InsertP2P : Pass<"sched-insert-p2p", "mlir::ModuleOp"> {
  let summary = "Insert the sends and receives a compute-only schedule "
                "needs, in a deadlock-free order";
  let description = [{
    For every input that crosses ranks in a compute-only `sched.schedule`
    (as the `sched-lower-<strategy>` passes produce), adds a send on the
    producer's rank and a receive on the consumer's rank: F(s, m) gets the
    activation of F(s - 1, m) by `sched.send forward stage s-1` right
    after that forward and `sched.recv forward stage s` before its own;
    the B or I of stage `s` gets the gradient of B/I(s + 1, m) by
    `sched.send backward stage s+1` and `sched.recv backward stage s`.

    Transfers go where a list simulation of the compute order (stage
    costs, unit steps when a cost is zero) puts them: each at the end of
    its producer, and every rank issues its actions in the order of those
    times. Both ends of each transfer then sit at the same point of one
    global order, so the schedule runs to the end under rendezvous
    semantics (a send completes only with its receive), without relying
    on groups. Transfers between the same two ranks that are adjacent on
    both become one `sched.p2p_group` on both sides (Megatron's
    send-forward-receive-backward); `group=false` keeps them apart. When
    the stages declare an `output` size, each transfer carries the output
    of the lower stage of its pair as `bytes` (the activation going up,
    its gradient coming back). With pipeline replicas no transfer crosses
    from one replica's chain to the other's.

    Its tables are sized by the actions the schedule holds, not by its
    stages x microbatches; a schedule whose transfers would take more
    working memory than `memory-budget` is refused before it is read
    (docs/limits.md).

    Fails, at the offending action, when the schedule already holds
    transfers or other non-compute actions, runs a stage on two ranks,
    computes a (stage, microbatch) twice, lacks the producer of a
    cross-rank input, or cannot run to the end.

    ```mlir
    // sched-opt --sched-lower-1f1b --sched-insert-p2p
    sched.pipeline @p pp 2 microbatches 3 {}
    // becomes
    sched.schedule @p stages 2 microbatches 3 {
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.send forward stage 0 mb 0 to 1
        ...
        sched.forward stage 0 mb 2
        sched.p2p_group {
          sched.send forward stage 0 mb 2 to 1
          sched.recv backward stage 0 mb 1 from 1
        }
        sched.backward stage 0 mb 1
        ...
      }
      sched.rank 1 {
        sched.recv forward stage 1 mb 0 from 0
        sched.forward stage 1 mb 0
        ...
        sched.backward stage 1 mb 1
        sched.p2p_group {
          sched.recv forward stage 1 mb 2 from 0
          sched.send backward stage 1 mb 1 to 0
        }
        sched.forward stage 1 mb 2
        ...
      }
    }
    ```
  }];
  let dependentDialects = ["::sched::SchedDialect"];
  let options = [
    Option<"memoryBudget", "memory-budget", "::sched::MemoryBudgetOption",
           /*default=*/"::sched::kDefaultMemoryBudget",
           "Working memory the pass may use: bytes, or a number with a K, M, "
           "G or T suffix (default 2G)">,
    Option<"group", "group", "::sched::PassOptionValue<bool>", /*default=*/"true",
           "Issue transfers between the same two ranks that are adjacent "
           "on both as one sched.p2p_group">,
  ];
}

def AssignBuffers : Pass<"sched-assign-buffers", "mlir::ModuleOp"> {
  let summary = "Give activations and receive buffers slots from liveness";
  let description = [{
    Walks each rank's program in order. A `sched.forward` takes the lowest
    free activation slot (`sched.slot`); `sched.backward`, or
    `sched.backward_weight` after `sched.backward_input`, reads it and gives
    it back (the input-gradient half keeps it for the weight gradient). A
    `sched.recv` takes the lowest free receive slot until the action that
    consumes it (marked `sched.recv_slot`). Each `sched.rank` gets
    `sched.activation_slots` and `sched.recv_slots`: the slot counts, which
    are the rank's peaks.

    ```mlir
    // sched-opt --sched-assign-buffers
    sched.rank 0 attributes {sched.activation_slots = 2 : i64,
                             sched.recv_slots = 0 : i64} {
      sched.forward stage 0 mb 0 {sched.slot = 0 : i64}
      sched.forward stage 0 mb 1 {sched.slot = 1 : i64}
      sched.backward stage 0 mb 0 {sched.slot = 0 : i64}
      sched.backward stage 0 mb 1 {sched.slot = 1 : i64}
    }
    ```
  }];
}

def InsertCollectives : Pass<"sched-insert-collectives", "mlir::ModuleOp"> {
  let summary = "Turn collective declarations into collective actions";
  let description = [{
    For every `sched.collective` declaration of a `sched.schedule`, every
    rank that holds the declared stage (every stage when none is named)
    issues the collective on the declared group, with the stage and bytes:

    - `before_forward` / `after_forward`: around each forward of the stage
      (per microbatch: expert-parallel all-to-all, tensor-parallel
      all-reduce);
    - `before_backward`: before each backward (B or I) of the stage;
    - `after_backward`: once, after the action that completes the stage's
      last weight gradient (B or W): data-parallel gradient reduce-scatter
      or all-reduce;
    - `step`: once, at the end of the rank, before its optimizer step.

    An `aux_free` aux head with a bias update (`bias @group bytes N`) gets
    its all-reduce once, after the action that completes the stage's last
    weight gradient, unless the rank issues it already.

    With `fsdp`, each stage's parameters are gathered (`sched.unshard`)
    `prefetch` actions before the stage's first compute on the rank, freed
    (`sched.reshard`) after its last, and its gradients reduced
    (`sched.reduce_grad`) then. With `gather-per-compute` (ZeRO-3 as
    FSDP runs it with resharding after the forward, and as `schedc plan
    --write-plan` writes it), each top-level compute action (an overlap
    pair counts as one) is bracketed instead: a `sched.unshard` of each of
    its stages right before it and a `sched.reshard` right after, so the
    parameters are gathered for every forward and again for every
    backward; the gradient reduction is left to the declarations
    (`reduce_scatter ... when after_backward`). The two options exclude
    each other. A schedule of several pipeline replicas
    (DualPipe) keeps a copy of each model stage per replica: before its
    optimizer step every rank all-reduces the gradients of its stages on a
    new group `@replicas`, whose member sets are the ranks sharing model
    stages, in model-stage order (ranks that share one model stage must
    hold the same model stages, as DualPipe's do; otherwise the pass
    fails). It declares each of these sums too (`sched.collective
    all_reduce @replicas bytes P when after_backward stage s`, P the
    stage's `parameters`, 0 when it declares none), so that `sched-verify`
    holds them after the stage's last gradient. Every rank ends with one
    `sched.optimizer_step`.

    A collective that could be read two ways names its declaration
    (`declaration N`, the N-th `sched.collective`): when another
    declaration of its kind and group applies to the stage with its bytes,
    an aux-free head's bias update has its group, stage and bytes, or it is
    an all-reduce or reduce-scatter not declared `after_backward` that an
    `after_backward` declaration's kind, group and stage fit (the engine
    would take it for a gradient reduction). Others stay unnamed. The
    replica sums' declarations go after the existing ones, so the named
    indices keep their meaning. Collectives declared per stage belong on groups
    whose member sets do not span pipeline ranks (the data-parallel peers of
    a rank are the same rank of the other replicas); a group that spans
    ranks gets per-stage collectives that `sched-verify` reports as issued
    in different orders.

    ```mlir
    // sched-opt --sched-insert-collectives
    sched.schedule @s stages 1 microbatches 2 {
      sched.group @dp members [[0]]
      sched.collective reduce_scatter @dp bytes 4096 when after_backward
      sched.rank 0 {
        sched.forward stage 0 mb 0
        sched.forward stage 0 mb 1
        sched.backward stage 0 mb 0
        sched.backward stage 0 mb 1
        // inserted:
        sched.reduce_scatter @dp stage 0 bytes 4096
        sched.optimizer_step
      }
    }
    ```
  }];
  let options = [
    Option<"fsdp", "fsdp", "::sched::PassOptionValue<bool>", /*default=*/"false",
           "Add FSDP unshard/reshard and gradient reduction per stage">,
    Option<"prefetch", "prefetch", "::sched::PassOptionValue<unsigned>", /*default=*/"1",
           "How many actions ahead of a stage's first compute to unshard">,
    Option<"gatherPerCompute", "gather-per-compute", "::sched::PassOptionValue<bool>",
           /*default=*/"false",
           "Unshard each stage before each of its computes and reshard it "
           "after (ZeRO-3); the declarations reduce the gradients">,
  ];
}

def SimulateSchedules : Pass<"sched-simulate", "mlir::ModuleOp"> {
  let summary = "Simulate each sched.schedule: makespan, bubble, peak memory";
  let description = [{
    Runs the list simulation of `schedc simulate` (docs/cli.md) on every
    `sched.schedule`: each rank runs its actions in order, an action starts
    when its rank is free and its inputs are there, transfers are eager.
    Each schedule gets a remark with its makespan, the bubble ratio of
    every rank and every rank's peak of live stage-microbatch activations.
    With `annotate`, the schedule gets `sched.makespan` and every action
    its `sched.start` and `sched.end` times (f64), for tools that draw or
    trace the schedule. `cost` replaces every stage's times as
    `schedc simulate --cost` does (`f=1,b=2`, `f=1,i=1,w=1,comm=0.1`);
    without it the declared `sched.stage` times count (none: unit). A
    schedule that cannot run to the end is an error at the schedule naming
    the stuck ranks, and the pass fails.

    ```mlir
    // sched-opt --sched-simulate="annotate=true"
    // remark: makespan 9; bubble ratio per rank 0.333333 0.333333; ...
    sched.schedule @s stages 2 microbatches 2 attributes {sched.makespan = 9.0 : f64} {
      sched.rank 0 {
        sched.forward stage 0 mb 0 {sched.end = 1.0 : f64, sched.start = 0.0 : f64}
        ...
    ```
  }];
  let options = [
    Option<"cost", "cost", "std::string", /*default=*/"\"\"",
           "Stage times for every stage (f=1,b=2 or f=1,i=1,w=1, plus "
           "comm=T); empty: the declared ones">,
    Option<"annotate", "annotate", "::sched::PassOptionValue<bool>", /*default=*/"false",
           "Attach sched.start/sched.end to every action and "
           "sched.makespan to the schedule">,
  ];
}

#endif // SCHED_PASSES_TD
