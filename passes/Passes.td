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
    compute actions only; `sched-insert-p2p` adds the transfers.
  }];
  let dependentDialects = ["::sched::SchedDialect"];
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

#endif // SCHED_PASSES_TD
