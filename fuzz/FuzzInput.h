//===- FuzzInput.h - one fuzzer input as a parsed source --------*- C++ -*-===//
//
// What every fuzz target starts from: a context with the sched dialect and
// no threads, and the input as the main buffer of a SourceMgr whose
// diagnostics are rendered the way the tools render them.
//
//===----------------------------------------------------------------------===//

#ifndef FUZZ_FUZZINPUT_H
#define FUZZ_FUZZINPUT_H

#include "dialects/Sched/SchedDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

namespace sched {

/// A fuzzer input held as the buffer `name` of `sourceMgr`. Diagnostics go
/// nowhere unless SCHEDC_FUZZ_VERBOSE is set (handy when replaying a
/// reproducer); rendering them still runs, source line and all.
class FuzzInput {
public:
  FuzzInput(const uint8_t *data, size_t size, llvm::StringRef name)
      : context(mlir::MLIRContext::Threading::DISABLED),
        diagnostics(sourceMgr, &context, diagnosticStream()) {
    context.getOrLoadDialect<SchedDialect>();
    llvm::StringRef text(reinterpret_cast<const char *>(data), size);
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
  }

  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;

private:
  static llvm::raw_ostream &diagnosticStream() {
    return std::getenv("SCHEDC_FUZZ_VERBOSE") ? llvm::errs() : llvm::nulls();
  }

  mlir::SourceMgrDiagnosticHandler diagnostics;
};

} // namespace sched

#endif // FUZZ_FUZZINPUT_H
