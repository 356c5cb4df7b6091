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
    Option<"memoryLimit", "memory-limit", "double", /*default=*/"-1",
           "Device memory (bytes, or activation units without sizes); "
           "negative: the schedule's memory_limit">,
    Option<"weightGradFraction", "weight-grad-fraction", "double",
           /*default=*/"0.5",
           "Part of an activation kept from I until W when stages have no "
           "sizes">,
    Option<"timeout", "timeout", "double", /*default=*/"0",
           "Solver budget in seconds (0: none); running out gives unknown">,
    Option<"proof", "proof", "std::string", /*default=*/"\"witness\"",
           "witness: Z3 checks the graph path's execution; search: Z3 "
           "solves unaided">,
    Option<"emitSmtlib", "emit-smtlib", "std::string", /*default=*/"\"\"",
           "Write the SMT-LIB 2 query to this file">,
  ];
}

#endif // SCHED_PASSES_TD
