//===- sched-pass-options-fuzzer.cpp - fuzzes the passes' options ---------===//
//
// Feeds arbitrary bytes to the textual options of every sched pass and of
// the sched-generate-verify pipeline, as sched-opt and mlir-opt with the
// plugin read them (`--pass-pipeline='builtin.module(P{...})'`): the first
// byte picks the pass, the rest is its option string. A pipeline that
// parses runs on a two-stage pipeline (lowered first where the pass takes
// a schedule). Bad options must end in one error, never in a crash, an
// assertion, or a run the option sized past the budget (issue 31: a
// negative memory-budget switched the check off).
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "passes/GenerateVerifyPipeline.h"
#include "passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

using namespace sched;

namespace {
/// A pass, and whether it reads a lowered schedule (then the pipeline runs
/// sched-lower-1f1b before it).
struct FuzzedPass {
  const char *name;
  bool onSchedule;
};

constexpr FuzzedPass kPasses[] = {
    {"sched-lower-gpipe", false},
    {"sched-lower-1f1b", false},
    {"sched-lower-interleaved-1f1b", false},
    {"sched-lower-looped-bfs", false},
    {"sched-lower-zb-h1", false},
    {"sched-lower-zb-h2", false},
    {"sched-lower-interleaved-zb", false},
    {"sched-lower-zb-v", false},
    {"sched-lower-v-half", false},
    {"sched-lower-v-min", false},
    {"sched-lower-dualpipe-v", false},
    {"sched-lower-dualpipe", false},
    {"sched-lower-no-pp", false},
    {"sched-lower-combined-1f1b", false},
    {"sched-synthesize", false},
    {"sched-legalize-aux-loss", false},
    {"sched-generate-verify", false},
    {"sched-verify", true},
    {"sched-insert-p2p", true},
    {"sched-assign-buffers", true},
    {"sched-insert-collectives", true},
    {"sched-simulate", true},
};

constexpr llvm::StringLiteral kModule =
    "sched.pipeline @p pp 2 microbatches 4 {}\n";

bool registerOnce() {
  registerSchedPasses();
  registerSchedPipelines();
  return true;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const bool registered = registerOnce();
  (void)registered;
  if (size == 0)
    return 0;
  const FuzzedPass &pass = kPasses[data[0] % std::size(kPasses)];
  llvm::StringRef options(reinterpret_cast<const char *>(data + 1), size - 1);
  std::string pipeline = "builtin.module(";
  if (pass.onSchedule)
    pipeline += "sched-lower-1f1b,";
  pipeline += pass.name;
  pipeline += "{";
  pipeline += options.str();
  pipeline += "})";

  FuzzInput input(reinterpret_cast<const uint8_t *>(kModule.data()),
                  kModule.size(), "pipeline.mlir");
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(input.sourceMgr, &input.context);
  if (!module)
    abort(); // The fixed module always parses.
  mlir::PassManager pm(&input.context);
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, errorStream)))
    return 0;
  (void)pm.run(*module);
  return 0;
}
