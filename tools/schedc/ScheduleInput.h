//===- ScheduleInput.h - reading schedule files for schedc ------*- C++ -*-===//
//
// The subcommands that read a schedule (verify, simulate) share how a file
// is found, its format chosen and its contents parsed or imported, with
// diagnostics at file:line:column.
//
//===----------------------------------------------------------------------===//

#ifndef TOOLS_SCHEDC_SCHEDULEINPUT_H
#define TOOLS_SCHEDC_SCHEDULEINPUT_H

#include "lib/Import/JsonPlan.h"
#include "lib/Import/TorchCsv.h"
#include "lib/Limits/ExcerptDiagnosticHandler.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <optional>

namespace sched {

/// How a schedule file is written.
enum class InputFormat : uint8_t { Mlir, TorchCsv, TorchCsvComms, JsonPlan };

/// A schedule file read with the context and the source manager its
/// diagnostics point into: MLIR parsed into a module, a PyTorch CSV read
/// into the plain form (no IR), each action located at its cell.
class ScheduleInput {
public:
  ScheduleInput();

  /// Reads `path` ("-" for stdin) in `format` (empty: .mlir is MLIR, .csv is
  /// PyTorch CSV, with SEND/RECV cells the comms flavour, .json a runtime
  /// plan). A CSV read in
  /// the torch-csv format must hold no SEND/RECV cells. Returns ExitOk, or
  /// the exit status after printing why not.
  int read(llvm::StringRef path, llvm::StringRef format,
           TorchCsvOptions csvOptions);

  InputFormat getFormat() const { return format; }
  /// The module of an MLIR input.
  mlir::ModuleOp getModule() { return *module; }
  /// The schedule of a CSV input; null for MLIR.
  TorchCsvSchedule *getCsv() { return csv ? &*csv : nullptr; }
  /// The plan of a JSON input; null otherwise.
  JsonPlanInput *getJsonPlan() { return plan ? &*plan : nullptr; }
  mlir::MLIRContext &getContext() { return context; }

private:
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<ExcerptDiagnosticHandler> diagnostics;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::optional<TorchCsvSchedule> csv;
  std::optional<JsonPlanInput> plan;
  InputFormat format = InputFormat::Mlir;
};

} // namespace sched

#endif // TOOLS_SCHEDC_SCHEDULEINPUT_H
