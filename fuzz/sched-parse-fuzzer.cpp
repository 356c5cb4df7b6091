//===- sched-parse-fuzzer.cpp - fuzzes the IR parser and op verifiers -----===//
//
// Parses arbitrary bytes as a module with the sched dialect registered, which
// runs the custom parsers and, after a successful parse, every op verifier.
// A module that verifies is printed and parsed again: the printer must
// write what the parser reads back, or that is a finding too.
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzInput.h"
#include "lib/Limits/NestingDepth.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;
using namespace sched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The tools refuse input nested past the depth MLIR's recursive
  // parser takes before it reaches the parser (test/tools/nesting-depth.test).
  if (findTooDeepNesting(
          llvm::StringRef(reinterpret_cast<const char *>(data), size)))
    return 0;
  FuzzInput input(data, size, "fuzz.mlir");
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(input.sourceMgr, &input.context);
  if (!module)
    return 0;
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  if (!parseSourceString<ModuleOp>(printed, &input.context)) {
    llvm::errs() << "printed module does not parse back:\n" << printed;
    std::abort();
  }
  return 0;
}
