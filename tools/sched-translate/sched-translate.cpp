//===- sched-translate.cpp - the schedc translation driver ----------------===//
//
// mlir-translate for the sched dialect: converts schedules to and from
// other formats.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedOps.h"
#include "lib/Export/TorchCsv.h"
#include "lib/Import/TorchCsv.h"
#include "lib/Lower/InsertTransfers.h"
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

/// Writes the one sched.schedule of the module as PyTorch CSV. With comms,
/// a schedule without transfers gets them as sched-insert-p2p would.
static LogicalResult scheduleToTorchCsv(Operation *op, raw_ostream &os,
                                        sched::TorchCsvContent content) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("expected a builtin.module");
  auto schedules = module.getOps<sched::ScheduleOp>();
  if (schedules.empty() || std::next(schedules.begin()) != schedules.end())
    return module.emitError("a PyTorch CSV holds one schedule; the module "
                            "must hold exactly one sched.schedule");
  sched::ScheduleOp scheduleOp = *schedules.begin();
  FailureOr<sched::Schedule> schedule = sched::readSchedule(scheduleOp);
  if (failed(schedule))
    return failure();
  const bool hasTransfers = llvm::any_of(
      schedule->ranks, [](const sched::RankProgram &rank) {
        return llvm::any_of(rank.actions, [](const sched::Action &action) {
          return action.kind == sched::ActionKind::Send ||
                 action.kind == sched::ActionKind::Recv;
        });
      });
  if (content == sched::TorchCsvContent::ComputeAndComms && !hasTransfers) {
    llvm::Expected<sched::Schedule> lowered =
        sched::insertTransfers(*schedule);
    if (!lowered)
      return scheduleOp.emitError()
             << "cannot insert transfers: "
             << llvm::toString(lowered.takeError());
    *schedule = std::move(*lowered);
  }
  if (llvm::Error error = sched::writeTorchCsv(os, *schedule, content))
    return scheduleOp.emitError() << llvm::toString(std::move(error));
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
  TranslateFromMLIRRegistration toTorchCsv(
      "export-torch-csv",
      "write the sched.schedule as a compute-only PyTorch pipelining CSV",
      [](Operation *op, raw_ostream &os) {
        return scheduleToTorchCsv(op, os, sched::TorchCsvContent::Compute);
      },
      [](DialectRegistry &registry) { sched::registerSchedDialect(registry); });
  TranslateFromMLIRRegistration toTorchCsvComms(
      "export-torch-csv-comms",
      "write the sched.schedule as a PyTorch pipelining CSV with a SEND/RECV "
      "cell per transfer (inserted first when the schedule has none)",
      [](Operation *op, raw_ostream &os) {
        return scheduleToTorchCsv(op, os,
                                  sched::TorchCsvContent::ComputeAndComms);
      },
      [](DialectRegistry &registry) { sched::registerSchedDialect(registry); });
  return failed(mlirTranslateMain(argc, argv, "schedc translation driver"));
}
