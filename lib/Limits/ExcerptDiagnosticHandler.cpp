//===- ExcerptDiagnosticHandler.cpp - clipped error excerpts --------------===//

#include "lib/Limits/ExcerptDiagnosticHandler.h"
#include "lib/Limits/DiagnosticExcerpt.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

using namespace sched;

ExcerptDiagnosticHandler::ExcerptDiagnosticHandler(llvm::SourceMgr &sourceMgr,
                                                   mlir::MLIRContext *context,
                                                   llvm::raw_ostream &os)
    : mlir::ScopedDiagnosticHandler(context), sourceMgr(sourceMgr), os(os) {
  setHandler([this](mlir::Diagnostic &diag) {
    print(diag);
    return mlir::success();
  });
}

static llvm::StringRef severityName(mlir::DiagnosticSeverity severity) {
  switch (severity) {
  case mlir::DiagnosticSeverity::Error:
    return "error";
  case mlir::DiagnosticSeverity::Warning:
    return "warning";
  case mlir::DiagnosticSeverity::Note:
    return "note";
  case mlir::DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

/// The first file:line:col location in `loc` (inside a fused or named
/// location too).
static mlir::FileLineColLoc findFileLineCol(mlir::Location loc) {
  mlir::FileLineColLoc found;
  loc->walk([&](mlir::Location inner) {
    if (auto fileLoc = llvm::dyn_cast<mlir::FileLineColLoc>(inner)) {
      found = fileLoc;
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return found;
}

void ExcerptDiagnosticHandler::print(const mlir::Diagnostic &diag) {
  mlir::FileLineColLoc fileLoc = findFileLineCol(diag.getLocation());
  if (fileLoc)
    os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine() << ":"
       << fileLoc.getColumn() << ": ";
  else if (!llvm::isa<mlir::UnknownLoc>(diag.getLocation()))
    os << diag.getLocation() << ": ";
  os << severityName(diag.getSeverity()) << ": " << diag.str() << "\n";
  if (fileLoc)
    printExcerpt(fileLoc);
  for (const mlir::Diagnostic &note : diag.getNotes())
    print(note);
  os.flush();
}

void ExcerptDiagnosticHandler::printExcerpt(mlir::FileLineColLoc loc) {
  for (unsigned id = 1; id <= sourceMgr.getNumBuffers(); ++id) {
    const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(id);
    if (buffer->getBufferIdentifier() != loc.getFilename().getValue())
      continue;
    llvm::SMLoc at = sourceMgr.FindLocForLineAndColumn(id, loc.getLine(), 1);
    if (!at.isValid())
      return;
    llvm::StringRef rest(at.getPointer(),
                         buffer->getBufferEnd() - at.getPointer());
    llvm::StringRef line =
        rest.take_until([](char c) { return c == '\n' || c == '\r'; });
    size_t caret = 0;
    std::string excerpt =
        clipExcerpt(line, loc.getColumn() > 0 ? loc.getColumn() - 1 : 0, caret);
    os << excerpt << "\n" << std::string(caret, ' ') << "^\n";
    return;
  }
}
