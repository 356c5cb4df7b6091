//===- Version.cpp - the project's version, as the tools print it ---------===//

#include "lib/Version/Version.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"

#ifndef SCHEDC_VERSION
#error                                                                         \
    "SCHEDC_VERSION must be defined by the build (lib/Version/CMakeLists.txt)"
#endif

llvm::StringRef sched::projectVersion() { return SCHEDC_VERSION; }

void sched::printToolVersion(llvm::raw_ostream &os, llvm::StringRef tool) {
  os << tool << " " << projectVersion() << " (LLVM " << LLVM_VERSION_STRING
     << ")\n";
}

void sched::installVersionPrinter(llvm::StringRef tool) {
  llvm::cl::SetVersionPrinter(
      [tool](llvm::raw_ostream &os) { printToolVersion(os, tool); });
}
