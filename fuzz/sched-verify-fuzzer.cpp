//===- sched-verify-fuzzer.cpp - fuzzes the schedule verifier -------------===//
//
// Parses arbitrary bytes as a module and runs the verifier (graph path and
// Z3, with a small solver budget) on every sched.schedule in it, under
// rendezvous or eager semantics by the parity of the input's size. Besides
// crashes, the graph path and Z3 disagreeing is a finding: the verifier then
// says unknown for a reason other than the solver giving up.
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzInput.h"
#include "lib/Limits/NestingDepth.h"
#include "lib/VerifyIR/VerifyIR.h"

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
  VerifyOptions options;
  options.p2p = size % 2 ? P2PSemantics::Eager : P2PSemantics::Rendezvous;
  options.timeoutSeconds = 1;
  for (ScheduleOp schedule : module->getOps<ScheduleOp>()) {
    VerifyResult result = verifyScheduleOp(schedule, options);
    if (result.verdict == Verdict::Unknown &&
        !llvm::StringRef(result.unknownReason)
             .starts_with("Z3 could not decide")) {
      llvm::errs() << "graph path and Z3 disagree: " << result.unknownReason
                   << "\n";
      std::abort();
    }
  }
  return 0;
}
