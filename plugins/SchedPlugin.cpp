//===- SchedPlugin.cpp - the sched dialect and passes as mlir-opt plugins -===//
//
// One shared object with both plugin entry points, for a stock mlir-opt:
//   mlir-opt --load-dialect-plugin=SchedPlugin.so \
//            --load-pass-plugin=SchedPlugin.so ...
// The dialect and the passes live in one object so that the passes and the
// registered dialect share one SchedDialect (one TypeID).
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedDialect.h"
#include "passes/GenerateVerifyPipeline.h"
#include "passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

/// Adds the sched dialect to the tool's registry.
extern "C" mlir::DialectPluginLibraryInfo LLVM_ATTRIBUTE_WEAK
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Sched", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            sched::registerSchedDialect(*registry);
          }};
}

/// Registers every sched pass and the sched-generate-verify pipeline.
extern "C" mlir::PassPluginLibraryInfo LLVM_ATTRIBUTE_WEAK
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "SchedPasses", LLVM_VERSION_STRING, []() {
            sched::registerSchedPasses();
            sched::registerSchedPipelines();
          }};
}
