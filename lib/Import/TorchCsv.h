//===- TorchCsv.h - import PyTorch pipelining CSV schedules -----*- C++ -*-===//
//
// Reads the CSV that torch.distributed.pipelining writes with _dump_csv and
// reads with _load_csv: a row per rank, a cell per action, an empty cell
// for idle. Every op of the imported sched.schedule carries the
// file:line:column of its cell, so diagnostics point into the CSV.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_IMPORT_TORCHCSV_H
#define LIB_IMPORT_TORCHCSV_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace sched {

/// Which CSV flavour is expected.
enum class TorchCsvFlavour : uint8_t {
  /// Compute actions (and UNSHARD/RESHARD/REDUCE_GRAD) only.
  Compute,
  /// Compute plus SEND/RECV cells.
  ComputeAndComms,
  /// Whichever the file holds.
  Detect,
};

struct TorchCsvOptions {
  TorchCsvFlavour flavour = TorchCsvFlavour::Detect;
  /// Stage and microbatch counts; by default what the file shows.
  std::optional<int64_t> stages;
  std::optional<int64_t> microbatches;
  /// Symbol name of the imported schedule.
  std::string name = "imported";
  /// When set, a cell whose stage or microbatch is outside the given counts
  /// is reported as a schedule violation ("[missing] ... out of range"),
  /// left out, and counted here, instead of failing the import.
  unsigned *outOfRangeCells = nullptr;
};

/// True if the CSV text holds SEND or RECV cells.
bool torchCsvHasComms(llvm::StringRef text);

/// Imports the main buffer of `sourceMgr` as a module holding one
/// sched.schedule. Emits diagnostics and returns null on malformed input.
mlir::OwningOpRef<mlir::ModuleOp>
importTorchCsv(llvm::SourceMgr &sourceMgr, mlir::MLIRContext *context,
               const TorchCsvOptions &options);

} // namespace sched

#endif // LIB_IMPORT_TORCHCSV_H
