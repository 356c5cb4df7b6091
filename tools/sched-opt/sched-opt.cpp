//===- sched-opt.cpp - the schedc optimizer driver ------------------------===//
//
// mlir-opt for the sched dialect: parses, verifies, runs passes, prints.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedDialect.h"
#include "passes/GenerateVerifyPipeline.h"
#include "passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  sched::registerSchedDialect(registry);
  sched::registerSchedPasses();
  sched::registerSchedPipelines();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "schedc optimizer driver (sched dialect)\n", registry));
}
