//===- Version.h - the project's version, as the tools print it -*- C++ -*-===//
//
// `--version` of sched-opt, sched-translate and schedc, and the version the
// mlir-opt plugin reports: the project's version from CMake's
// `project(schedc VERSION ...)`, with the LLVM it was built against.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_VERSION_VERSION_H
#define LIB_VERSION_VERSION_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace sched {

/// The project's version, "0.1.0".
llvm::StringRef projectVersion();

/// Prints `tool`'s version line: "schedc 0.1.0 (LLVM 22.1.0)".
void printToolVersion(llvm::raw_ostream &os, llvm::StringRef tool);

/// Makes `--version` print printToolVersion's line for `tool` instead of
/// LLVM's. `tool` must outlive the command line's parsing.
void installVersionPrinter(llvm::StringRef tool);

} // namespace sched

#endif // LIB_VERSION_VERSION_H
