//===- sched-translate.cpp - the schedc translation driver ----------------===//
//
// mlir-translate for the sched dialect: converts schedules to and from
// other formats.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedOps.h"
#include "lib/Import/TorchCsv.h"
#include "lib/Render/TextGrid.h"
#include "lib/ScheduleIR/ScheduleIR.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;

/// Prints every sched.schedule of the module as a text grid.
static LogicalResult scheduleToTextGrid(Operation *op, raw_ostream &os) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("expected a builtin.module");
  bool any = false;
  for (auto scheduleOp : module.getOps<sched::ScheduleOp>()) {
    any = true;
    FailureOr<sched::Schedule> schedule = sched::readSchedule(scheduleOp);
    if (failed(schedule))
      return failure();
    os << "schedule @" << scheduleOp.getSymName() << "\n";
    if (llvm::Error error = sched::printTextGrid(os, *schedule))
      return scheduleOp.emitError() << llvm::toString(std::move(error));
  }
  if (!any)
    return module.emitError("the module holds no sched.schedule");
  return success();
}

/// Registers a CSV import translation of `flavour`.
static TranslateToMLIRRegistration
registerCsvImport(llvm::StringRef flag, llvm::StringRef description,
                  sched::TorchCsvFlavour flavour) {
  return TranslateToMLIRRegistration(
      flag, description,
      [flavour](llvm::SourceMgr &sourceMgr,
                MLIRContext *context) -> OwningOpRef<Operation *> {
        sched::TorchCsvOptions options;
        options.flavour = flavour;
        return sched::importTorchCsv(sourceMgr, context, options);
      },
      [](DialectRegistry &registry) { sched::registerSchedDialect(registry); });
}

int main(int argc, char **argv) {
  [[maybe_unused]] auto importCompute = registerCsvImport(
      "import-torch-csv",
      "import a compute-only PyTorch pipelining CSV as a sched.schedule",
      sched::TorchCsvFlavour::Compute);
  [[maybe_unused]] auto importComms = registerCsvImport(
      "import-torch-csv-comms",
      "import a PyTorch pipelining CSV with SEND/RECV cells as a "
      "sched.schedule",
      sched::TorchCsvFlavour::ComputeAndComms);
  TranslateFromMLIRRegistration toTextGrid(
      "export-text-grid",
      "print each sched.schedule as a grid (a row per rank, a column per "
      "unit time step)",
      scheduleToTextGrid, [](DialectRegistry &registry) {
        sched::registerSchedDialect(registry);
      });
  return failed(mlirTranslateMain(argc, argv, "schedc translation driver"));
}
