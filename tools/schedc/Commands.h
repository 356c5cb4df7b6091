//===- Commands.h - the subcommands of schedc -------------------*- C++ -*-===//
//
// Each subcommand lives in its own file and registers an llvm::cl
// subcommand; schedc.cpp dispatches to the one given.
//
//===----------------------------------------------------------------------===//

#ifndef TOOLS_SCHEDC_COMMANDS_H
#define TOOLS_SCHEDC_COMMANDS_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir {
class MLIRContext;
} // namespace mlir

#include "lib/Schedule/Schedule.h"
#include "lib/Simulate/Simulate.h"

namespace sched {

/// Exit statuses shared by all subcommands.
enum ExitStatus : int {
  ExitOk = 0,
  /// The input is wrong: a schedule violates a property.
  ExitViolated = 1,
  /// Bad flags, unreadable or malformed input, impossible configuration.
  ExitUsage = 2,
  /// The verifier could not decide in time.
  ExitUnknown = 3,
};

/// The category of every schedc option; `--help` shows only these (and
/// llvm::cl's generic --help and --version), not the options LLVM's
/// libraries register.
extern llvm::cl::OptionCategory schedcOptions;

/// Prints "schedc: error: <message>" and returns ExitUsage.
int usageError(const llvm::Twine &message);

/// Closes `file` and keeps it, or, when writing it failed (a full disk,
/// /dev/full), reports that as a usage error and returns ExitUsage.
int keepOutput(llvm::ToolOutputFile &file);

/// Routes MLIR diagnostics of `context` to stderr as one line each.
void installDiagnosticPrinter(mlir::MLIRContext &context);

extern llvm::cl::SubCommand verifyCommand;
/// Runs `schedc verify` with the parsed options.
int runVerify();

extern llvm::cl::SubCommand generateCommand;
/// Runs `schedc generate` with the parsed options.
int runGenerate();

extern llvm::cl::SubCommand synthesizeCommand;
/// Runs `schedc synthesize` with the parsed options.
int runSynthesize();

extern llvm::cl::SubCommand planCommand;
/// Runs `schedc plan` with the parsed options.
int runPlan();

extern llvm::cl::SubCommand simulateCommand;
/// Runs `schedc simulate` with the parsed options.
int runSimulate();

extern llvm::cl::SubCommand showCommand;
/// Runs `schedc show` with the parsed options.
int runShow();

/// Simulates `schedule` with `options` and draws it as `form` ("svg" or
/// "trace") on `os`. Returns ExitOk, or the exit status with `error` set
/// (the schedule cannot run: ExitViolated; its numbers do not fit:
/// ExitUsage).
int writePicture(llvm::StringRef form, llvm::StringRef name,
                 const Schedule &schedule, SimulationOptions options,
                 llvm::raw_ostream &os, std::string &error);

} // namespace sched

#endif // TOOLS_SCHEDC_COMMANDS_H
