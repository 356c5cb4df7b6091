//===- pipeline-check.cpp - a downstream user of the installed schedc -----===//
//
// pipeline-check STRATEGY PP VPP MICROBATCHES [MEMORY_LIMIT]
//
// Checks one pipeline two ways, as a compiler that embeds schedc would:
//  1. the C++ API (lib/Api/Api.h): no IR, a verdict, violations, metrics;
//  2. the sched dialect and the sched-generate-verify pipeline in its own
//     MLIRContext and PassManager.
// Exit status: 0 verified, 1 violated, 2 bad arguments.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedDialect.h"
#include "lib/Api/Api.h"
#include "passes/GenerateVerifyPipeline.h"
#include "passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <cstdlib>
#include <iostream>
#include <string>

/// 1. The C++ API: returns the verdict, or "" when the request is bad.
static std::string checkWithApi(const sched::api::PipelineRequest &request,
                                const sched::api::CheckOptions &options) {
  llvm::Expected<sched::api::PipelineResult> result =
      sched::api::runPipeline(request, options);
  if (!result) {
    std::cerr << "api: error: " << llvm::toString(result.takeError()) << "\n";
    return "";
  }
  const sched::api::Report &report = result->report;
  std::cout << "api: " << report.verdict;
  if (report.metrics)
    std::cout << ", makespan " << report.metrics->makespan;
  std::cout << "\n";
  for (const sched::api::Finding &finding : report.violations)
    std::cout << "api: [" << finding.kind << "] rank " << finding.rank
              << ", action " << finding.position << ": " << finding.message
              << "\n";
  return report.verdict;
}

/// 2. The dialect and the named pipeline, registered as an opt tool would.
static bool checkWithPasses(const std::string &strategy, int64_t pp,
                            int64_t vpp, int64_t microbatches,
                            const std::string &memoryLimit) {
  mlir::DialectRegistry registry;
  sched::registerSchedDialect(registry);
  sched::registerSchedPasses();
  sched::registerSchedPipelines();
  mlir::MLIRContext context(registry);
  context.getDiagEngine().registerHandler([](mlir::Diagnostic &diag) {
    std::cout << "passes: " << diag.str() << "\n";
    return mlir::success();
  });
  const std::string source = "sched.pipeline @p pp " + std::to_string(pp) +
                             " vpp " + std::to_string(vpp) + " microbatches " +
                             std::to_string(microbatches) + " {}";
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module)
    return false;
  auto pm = mlir::PassManager::on<mlir::ModuleOp>(&context);
  // The pass manager runs on the module: the pipeline is its content.
  std::string pipeline = "sched-generate-verify{strategy=" + strategy;
  if (!memoryLimit.empty())
    pipeline += " memory-limit=" + memoryLimit;
  pipeline += "}";
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, llvm::errs())))
    return false;
  return mlir::succeeded(pm.run(*module));
}

int main(int argc, char **argv) {
  if (argc < 5 || argc > 6) {
    std::cerr << "usage: pipeline-check STRATEGY PP VPP MICROBATCHES "
                 "[MEMORY_LIMIT]\n";
    return 2;
  }
  sched::api::PipelineRequest request;
  request.strategy = argv[1];
  request.pp = std::atoll(argv[2]);
  request.vpp = std::atoll(argv[3]);
  request.microbatches = std::atoll(argv[4]);
  sched::api::CheckOptions options;
  const std::string memoryLimit = argc == 6 ? argv[5] : "";
  if (!memoryLimit.empty())
    options.memoryLimit = std::atof(memoryLimit.c_str());

  const std::string verdict = checkWithApi(request, options);
  if (verdict.empty())
    return 2;
  const bool passed = checkWithPasses(request.strategy, request.pp, request.vpp,
                                      request.microbatches, memoryLimit);
  std::cout << "passes: " << (passed ? "verified" : "failed") << "\n";
  if (passed != (verdict == "verified")) {
    std::cerr << "the two ways disagree\n";
    return 3;
  }
  return verdict == "verified" ? 0 : 1;
}
