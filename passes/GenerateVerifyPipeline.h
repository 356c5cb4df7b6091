//===- GenerateVerifyPipeline.h - sched-generate-verify -----*- C++ -*-===//
//
// Declares the named pass pipeline that takes a sched.pipeline through
// lowering, communication, verification and simulation.
//
//===----------------------------------------------------------------------===//

#ifndef PASSES_GENERATEVERIFYPIPELINE_H
#define PASSES_GENERATEVERIFYPIPELINE_H

#include "lib/Limits/MemoryBudgetOption.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace sched {

/// What `sched-generate-verify` does; its textual options have the same
/// names (`sched-generate-verify{strategy=zb-h1 p2p=eager}`).
struct GenerateVerifyOptions {
  /// A strategy name of `schedc generate --strategy` (1f1b, zb-h1, ...).
  std::string strategy = "1f1b";
  /// Point-to-point semantics for the proof: eager or rendezvous.
  std::string p2p = "rendezvous";
  /// Device memory for the proof (bytes, or activation units without
  /// sizes); negative: the schedule's own memory_limit.
  double memoryLimit = -1;
  /// Stage times for the simulation (`f=1,b=2`); empty: the declared ones.
  std::string cost;
  /// Working memory lowering and insertion may use: bytes, or the text of
  /// the pass option (`2G`), read by memoryBudgetBytes.
  MemoryBudgetOption memoryBudget = kDefaultMemoryBudget;
};

/// Adds to `pm` (on builtin.module): sched-lower-<strategy>,
/// sched-insert-p2p, sched-insert-collectives, sched-verify and
/// sched-simulate. Fails, reporting through `errorHandler`, on an unknown
/// strategy or p2p semantics.
mlir::LogicalResult buildGenerateVerifyPipeline(
    mlir::OpPassManager &pm, const GenerateVerifyOptions &options,
    llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)> errorHandler);

/// Registers `sched-generate-verify` with MLIR's pass registry, for
/// `--pass-pipeline` and `--sched-generate-verify` in opt tools.
void registerSchedPipelines();

} // namespace sched

#endif // PASSES_GENERATEVERIFYPIPELINE_H
