//===- TorchCsv.h - import PyTorch pipelining CSV schedules -----*- C++ -*-===//
//
// Reads the CSV that torch.distributed.pipelining writes with _dump_csv and
// reads with _load_csv: a row per rank, a cell per action, an empty cell
// for idle. The plain reader keeps the column of every cell, so that
// diagnostics point into the CSV without building IR; the importer builds a
// sched.schedule whose ops carry the file:line:column of their cells.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_IMPORT_TORCHCSV_H
#define LIB_IMPORT_TORCHCSV_H

#include "lib/Limits/ResourceLimits.h"
#include "lib/Schedule/Schedule.h"

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
  /// When set (with outOfRangeCells), receives the stage and microbatch
  /// (-1 for an action without one) of the action of each such cell that
  /// is out of range, for the verifier to state its range rule.
  std::vector<std::pair<int64_t, int64_t>> *outOfRangeIndices = nullptr;
  /// importTorchCsv: the working-memory budget of building the IR, in bytes
  /// (MemoryPath::Import, docs/limits.md), checked on the plain form before
  /// any op is built; `raiseBudget` says how to raise it.
  int64_t memoryBudget = kDefaultMemoryBudget;
  std::string raiseBudget = "--memory-budget=SIZE";
};

/// A PyTorch CSV read into the plain form. Rank r is line r + 1 of the
/// file; every action remembers the column of its cell (the two actions of
/// an overlap share theirs). A transfer whose far stage runs on no rank of
/// the file has peer -1.
class TorchCsvSchedule {
public:
  TorchCsvSchedule(mlir::MLIRContext *context, llvm::StringRef file);

  /// The schedule's name (TorchCsvOptions::name).
  std::string name;
  Schedule schedule;
  /// Per rank and action: the 1-based column of the action's cell.
  std::vector<std::vector<uint32_t>> columns;

  /// The cell of action `index` of rank `rank`; the start of the rank's row
  /// when `index` is -1, of the file when `rank` is -1.
  mlir::Location locateAction(int32_t rank, int32_t index) const;
  /// Line `line`, column `column` of the file.
  mlir::Location locate(unsigned line, unsigned column) const;

private:
  mlir::StringAttr file;
};

/// True if the CSV text holds SEND or RECV cells.
bool torchCsvHasComms(llvm::StringRef text);

/// Reads the main buffer of `sourceMgr` into the plain form, building no
/// IR. Emits diagnostics at the cells and fails on malformed input; a
/// well-formed schedule that is wrong reads fine, for the verifier to
/// judge. Allocates in proportion to the file, whatever the counts in
/// `options`.
mlir::FailureOr<TorchCsvSchedule> readTorchCsv(llvm::SourceMgr &sourceMgr,
                                               mlir::MLIRContext *context,
                                               const TorchCsvOptions &options);

/// The sizes that building the IR of `schedule` (read from a PyTorch CSV)
/// costs along MemoryPath::Import: every action is an op and a location
/// (SEND/RECV cells included), each overlap a sched.overlap, each
/// microbatch its uniqued attributes.
RequestSize torchCsvImportSize(const Schedule &schedule);

/// Imports the main buffer of `sourceMgr` as a module holding one
/// sched.schedule. Emits diagnostics and returns null on malformed input,
/// on a transfer whose peer the IR cannot name, and on a schedule whose IR
/// is estimated over `options.memoryBudget`.
mlir::OwningOpRef<mlir::ModuleOp>
importTorchCsv(llvm::SourceMgr &sourceMgr, mlir::MLIRContext *context,
               const TorchCsvOptions &options);

} // namespace sched

#endif // LIB_IMPORT_TORCHCSV_H
