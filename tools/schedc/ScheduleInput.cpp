//===- ScheduleInput.cpp - reading schedule files for schedc --------------===//

#include "tools/schedc/ScheduleInput.h"
#include "dialects/Sched/SchedOps.h"
#include "lib/Limits/NestingDepth.h"
#include "tools/schedc/Commands.h"

#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace sched;

ScheduleInput::ScheduleInput() {
  context.getOrLoadDialect<SchedDialect>();
  context.printOpOnDiagnostic(false);
  diagnostics = std::make_unique<ExcerptDiagnosticHandler>(sourceMgr, &context);
}

int ScheduleInput::read(llvm::StringRef path, llvm::StringRef formatName,
                        TorchCsvOptions csvOptions) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (!buffer)
    return usageError("cannot read '" + path +
                      "': " + buffer.getError().message());
  const bool comms = torchCsvHasComms((*buffer)->getBuffer());
  if (formatName == "mlir") {
    format = InputFormat::Mlir;
  } else if (formatName == "torch-csv") {
    format = InputFormat::TorchCsv;
  } else if (formatName == "torch-csv-comms") {
    format = InputFormat::TorchCsvComms;
  } else if (formatName == "json") {
    format = InputFormat::JsonPlan;
  } else if (!formatName.empty()) {
    return usageError("unknown --format '" + formatName +
                      "'; expected mlir, torch-csv, torch-csv-comms or json");
  } else if (path.ends_with(".csv")) {
    format = comms ? InputFormat::TorchCsvComms : InputFormat::TorchCsv;
  } else if (path.ends_with(".mlir")) {
    format = InputFormat::Mlir;
  } else if (path.ends_with(".json")) {
    format = InputFormat::JsonPlan;
  } else {
    return usageError("cannot tell the format of '" + path +
                      "' from its extension; pass --format");
  }
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  if (format == InputFormat::JsonPlan) {
    FailureOr<JsonPlanInput> read = readJsonPlan(sourceMgr, &context);
    if (failed(read))
      return ExitUsage;
    plan = std::move(*read);
    return ExitOk;
  }
  if (format != InputFormat::Mlir) {
    csvOptions.flavour = format == InputFormat::TorchCsv
                             ? TorchCsvFlavour::Compute
                             : TorchCsvFlavour::ComputeAndComms;
    FailureOr<TorchCsvSchedule> read =
        readTorchCsv(sourceMgr, &context, csvOptions);
    if (failed(read))
      return ExitUsage;
    csv = std::move(*read);
    return ExitOk;
  }
  if (reportTooDeepNesting(sourceMgr))
    return ExitUsage;
  module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return ExitUsage;
  if (module->getOps<ScheduleOp>().empty())
    return usageError("'" + path +
                      "' holds no sched.schedule (lower a sched.pipeline "
                      "first: schedc generate, or sched-opt "
                      "--sched-lower-<strategy>)");
  return ExitOk;
}
