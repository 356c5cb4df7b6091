//===- schedc.cpp - the schedc command-line interface ---------------------===//
//
// schedc generates, verifies, simulates and plans pipeline schedules. Each
// subcommand lives in its own file; this one parses and dispatches.
//
//===----------------------------------------------------------------------===//

#include "tools/schedc/Commands.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace sched;

int sched::usageError(const llvm::Twine &message) {
  llvm::errs() << "schedc: error: " << message << "\n";
  return ExitUsage;
}

void sched::installDiagnosticPrinter(mlir::MLIRContext &context) {
  context.printOpOnDiagnostic(false);
  context.getDiagEngine().registerHandler([](mlir::Diagnostic &diag) {
    llvm::raw_ostream &os = llvm::errs();
    os << "schedc: ";
    switch (diag.getSeverity()) {
    case mlir::DiagnosticSeverity::Error:
      os << "error: ";
      break;
    case mlir::DiagnosticSeverity::Warning:
      os << "warning: ";
      break;
    default:
      os << "note: ";
      break;
    }
    os << diag << "\n";
    for (const mlir::Diagnostic &note : diag.getNotes())
      os << "schedc: note: " << note << "\n";
    return mlir::success();
  });
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (!llvm::cl::ParseCommandLineOptions(
          argc, argv,
          "schedc: generate, verify and simulate pipeline-parallel training "
          "schedules\n\n"
          "  schedc generate --strategy 1f1b --pp 4 --microbatches 8\n"
          "  schedc verify schedule.csv --memory-limit 4\n\n"
          "Run 'schedc <subcommand> --help' for the options of each.\n",
          &errorStream)) {
    // Some llvm::cl errors (a malformed value) are printed directly to
    // stderr; the others arrive here.
    llvm::StringRef message = llvm::StringRef(errors).trim();
    if (message.empty())
      return ExitUsage;
    message.consume_front(argv[0]);
    message.consume_front(": ");
    return usageError(message.split('\n').first);
  }
  if (generateCommand)
    return runGenerate();
  if (verifyCommand)
    return runVerify();
  if (simulateCommand)
    return runSimulate();
  return usageError("no subcommand given; try 'schedc --help'");
}
