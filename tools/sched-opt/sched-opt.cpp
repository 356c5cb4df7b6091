//===- sched-opt.cpp - the schedc optimizer driver ------------------------===//
//
// mlir-opt for the sched dialect: parses, verifies, runs passes, prints.
// It reads the input itself, to refuse input that nests deeper than MLIR's
// recursive parser can take before the parser exhausts the stack
// (lib/Limits/NestingDepth.h), and says an error MLIR reports while it
// builds the pass pipeline on one line (lib/Limits/PassPipelineError.h).
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedDialect.h"
#include "lib/Limits/DiagnosticExcerpt.h"
#include "lib/Limits/NestingDepth.h"
#include "lib/Limits/PassPipelineError.h"
#include "lib/Version/Version.h"
#include "passes/GenerateVerifyPipeline.h"
#include "passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

/// --list-passes with every description past the longest pass name.
/// MLIR's printRegisteredPasses aligns descriptions by the widest pass
/// *option* only, so a long name ran into its description
/// ("--sched-lower-interleaved-combined-1f1b-   Lower ..."). The option
/// that takes the pass names prints the same list for a width we choose:
/// the widest of its own and the longest name's (a pass entry pads its
/// name to the width less 10: 6 of indent, "--" and "-  ").
static void printPassList() {
  const auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("sched-verify");
  if (it == options.end()) {
    mlir::printRegisteredPasses();
    return;
  }
  llvm::cl::Option &passes = *it->second;
  llvm::SmallVector<llvm::StringRef> names;
  passes.getExtraOptionNames(names);
  size_t width = passes.getOptionWidth();
  for (llvm::StringRef name : names)
    width = std::max(width, name.size() + 12);
  passes.printOptionInfo(width);
}

/// The option names of the registered pass `name`, from a default
/// instance's textual form; none for a pipeline or an unknown name.
static std::vector<std::string> registeredPassOptionNames(llvm::StringRef name) {
  const mlir::PassInfo *info = mlir::PassInfo::lookup(name);
  if (!info)
    return {};
  mlir::OpPassManager pm;
  if (mlir::failed(info->addToPipeline(
          pm, "", [](const llvm::Twine &) { return mlir::failure(); })) ||
      pm.size() != 1)
    return {};
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.begin()->printAsTextualPipeline(os);
  return sched::passOptionNames(text);
}

/// Builds the pipeline as `parsed` does (--pass-pipeline or the pass
/// flags), with each error MLIR reports on one line
/// (lib/Limits/PassPipelineError.h): MLIR's pipeline parser adds a blank
/// line and a "failed to add" line per element to the cause, and says an
/// unknown option without the pass or the options it has.
static mlir::LogicalResult
setUpPipeline(const mlir::MlirOptMainConfig &parsed, mlir::PassManager &pm) {
  mlir::MLIRContext *context = pm.getContext();
  std::vector<std::string> errors;
  mlir::LogicalResult result = mlir::success();
  {
    mlir::ScopedDiagnosticHandler capture(context, [&](mlir::Diagnostic &diag) {
      if (diag.getSeverity() != mlir::DiagnosticSeverity::Error)
        return mlir::failure();
      errors.push_back(diag.str());
      return mlir::success();
    });
    result = parsed.setupPassPipeline(pm);
  }
  for (const std::string &error : errors)
    mlir::emitError(mlir::UnknownLoc::get(context))
        << sched::passPipelineErrorLine(error, registeredPassOptionNames);
  return result;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  sched::installVersionPrinter("sched-opt");
  mlir::DialectRegistry registry;
  sched::registerSchedDialect(registry);
  sched::registerSchedPasses();
  sched::registerSchedPipelines();
  // An error on a module or a schedule must not print it whole.
  mlir::registerMLIRContextCLOptions();
  sched::printNoOpOnDiagnosticByDefault();
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "schedc optimizer driver (sched dialect)\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  const mlir::MlirOptMainConfig parsed = config;
  config.setPassPipelineSetupFn(
      [parsed](mlir::PassManager &pm) { return setUpPipeline(parsed, pm); });
  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects: ";
    llvm::interleave(registry.getDialectNames(), llvm::outs(), ",");
    llvm::outs() << "\n";
    return 0;
  }
  if (config.shouldListPasses()) {
    printPassList();
    return 0;
  }

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  llvm::SourceMgr depthCheck;
  depthCheck.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(input->getMemBufferRef()),
      llvm::SMLoc());
  if (sched::reportTooDeepNesting(depthCheck))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  // A full disk shows when the last bytes leave the buffer.
  output->os().close();
  if (std::error_code writeError = output->os().error()) {
    output->os().clear_error();
    llvm::errs() << "sched-opt: error: cannot write '" << outputFilename
                 << "': " << writeError.message() << "\n";
    return 1;
  }
  output->keep();
  return 0;
}
