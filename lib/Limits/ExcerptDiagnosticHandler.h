//===- ExcerptDiagnosticHandler.h - clipped error excerpts ------*- C++ -*-===//
//
// Prints diagnostics as mlir::SourceMgrDiagnosticHandler does (file:line:
// col: error: message, the source line, a caret), but quotes at most one
// screen line of the source around the column (lib/Limits/
// DiagnosticExcerpt.h): a minified 29 MB plan put its whole line, 29.8 MB,
// on stderr with each error.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_LIMITS_EXCERPTDIAGNOSTICHANDLER_H
#define LIB_LIMITS_EXCERPTDIAGNOSTICHANDLER_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace sched {

/// Handles every diagnostic of `context` while it lives (it takes over from
/// the handlers registered before it), excerpts from `sourceMgr`'s buffers.
class ExcerptDiagnosticHandler : public mlir::ScopedDiagnosticHandler {
public:
  ExcerptDiagnosticHandler(llvm::SourceMgr &sourceMgr,
                           mlir::MLIRContext *context,
                           llvm::raw_ostream &os = llvm::errs());

private:
  void print(const mlir::Diagnostic &diag);
  /// The clipped line and caret of `loc`, when it is in a buffer of the
  /// source manager.
  void printExcerpt(mlir::FileLineColLoc loc);

  llvm::SourceMgr &sourceMgr;
  llvm::raw_ostream &os;
};

} // namespace sched

#endif // LIB_LIMITS_EXCERPTDIAGNOSTICHANDLER_H
