//===- GenerateVerifyPipeline.cpp - the sched-generate-verify pipeline ----===//
//
// One named pipeline for compilers that embed schedc: lower each
// sched.pipeline with a strategy, insert transfers and collectives, prove
// the result, and simulate it.
//
//===----------------------------------------------------------------------===//

#include "passes/GenerateVerifyPipeline.h"
#include "lib/Generate/Strategy.h"
#include "lib/Limits/PassPipelineError.h"
#include "lib/Verify/MemoryLimit.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace sched;

/// The lowering pass of `strategy`.
static std::unique_ptr<mlir::Pass> createLowering(Strategy strategy,
                                                  int64_t budget) {
  switch (strategy) {
  case Strategy::GPipe:
    return createLowerGPipe({budget});
  case Strategy::OneFOneB:
    return createLowerOneFOneB({budget});
  case Strategy::Interleaved1F1B:
    return createLowerInterleavedOneFOneB({budget});
  case Strategy::LoopedBFS:
    return createLowerLoopedBFS({budget});
  case Strategy::ZBH1:
    return createLowerZBH1({budget});
  case Strategy::ZBH2:
    return createLowerZBH2({budget});
  case Strategy::InterleavedZB:
    return createLowerInterleavedZB({budget});
  case Strategy::ZBV:
    return createLowerZBV({budget});
  case Strategy::VHalf:
    return createLowerVHalf({budget});
  case Strategy::VMin:
    return createLowerVMin({budget});
  case Strategy::DualPipeV:
    return createLowerDualPipeV({budget});
  case Strategy::DualPipe:
    return createLowerDualPipe({budget});
  case Strategy::NoPipeline:
    return createLowerNoPP({budget});
  case Strategy::Combined1F1B:
    return createLowerCombinedOneFOneB({budget});
  case Strategy::InterleavedCombined1F1B:
    return createLowerInterleavedCombinedOneFOneB({budget});
  }
  return nullptr;
}

mlir::LogicalResult sched::buildGenerateVerifyPipeline(
    mlir::OpPassManager &pm, const GenerateVerifyOptions &options,
    llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)> errorHandler) {
  std::optional<Strategy> strategy = parseStrategy(options.strategy);
  if (!strategy)
    return errorHandler("sched-generate-verify: unknown strategy '" +
                        options.strategy +
                        "'; expected one of: " + strategyNames());
  if (options.p2p != "eager" && options.p2p != "rendezvous")
    return errorHandler("sched-generate-verify: unknown p2p semantics '" +
                        options.p2p + "'; expected eager or rendezvous");
  llvm::Expected<int64_t> budget = memoryBudgetBytes(options.memoryBudget);
  if (!budget)
    return errorHandler("sched-generate-verify: " +
                        llvm::toString(budget.takeError()));
  pm.addPass(createLowering(*strategy, *budget));
  pm.addPass(createInsertP2P({*budget, /*group=*/true}));
  pm.addPass(createInsertCollectives());
  VerifySchedulesOptions verify;
  verify.p2p = options.p2p;
  if (options.memoryLimit >= 0) {
    llvm::Expected<MemoryLimit> limit =
        MemoryLimit::fromDouble(options.memoryLimit);
    if (!limit)
      return errorHandler("sched-generate-verify: memory-limit " +
                          llvm::toString(limit.takeError()));
    verify.memoryLimit = limit->str();
  }
  pm.addPass(createVerifySchedules(verify));
  SimulateSchedulesOptions simulate;
  simulate.cost = options.cost;
  pm.addPass(createSimulateSchedules(simulate));
  return mlir::success();
}

/// The help of the `strategy` option. llvm::cl::desc keeps a StringRef,
/// so the text must outlive every option built with it (a temporary here
/// printed freed memory in --help).
static llvm::StringRef strategyOptionHelp() {
  static const std::string help = "Pipeline strategy: " + strategyNames();
  return help;
}

namespace {
/// The textual options of sched-generate-verify.
struct GenerateVerifyPipelineOptions
    : mlir::PassPipelineOptions<GenerateVerifyPipelineOptions> {
  Option<std::string> strategy{
      *this, "strategy",
      llvm::cl::desc(strategyOptionHelp()),
      llvm::cl::init("1f1b")};
  Option<std::string> p2p{
      *this, "p2p",
      llvm::cl::desc("Point-to-point semantics: eager or rendezvous"),
      llvm::cl::init("rendezvous")};
  Option<PassOptionValue<double>> memoryLimit{
      *this, "memory-limit",
      llvm::cl::desc("Device memory (bytes, or activation units without "
                     "sizes); negative: the schedule's memory_limit"),
      llvm::cl::init(-1)};
  Option<std::string> cost{
      *this, "cost",
      llvm::cl::desc("Stage times for the simulation (f=1,b=2); empty: the "
                     "declared ones"),
      llvm::cl::init("")};
  Option<MemoryBudgetOption> memoryBudget{
      *this, "memory-budget",
      llvm::cl::desc("Working memory lowering may use: bytes, or a number "
                     "with a K, M, G or T suffix (default 2G)"),
      llvm::cl::init(kDefaultMemoryBudget)};

  GenerateVerifyOptions toOptions() const {
    GenerateVerifyOptions options;
    options.strategy = strategy;
    options.p2p = p2p;
    options.memoryLimit = memoryLimit;
    options.cost = cost;
    options.memoryBudget = memoryBudget;
    return options;
  }
};
} // namespace

void sched::registerSchedPipelines() {
  mlir::registerPassPipeline(
      "sched-generate-verify",
      "Lower each sched.pipeline with a strategy, insert transfers and "
      "collectives, verify and simulate",
      [](mlir::OpPassManager &pm, llvm::StringRef text,
         llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)>
             errorHandler) {
        GenerateVerifyPipelineOptions options;
        std::string unknown;
        llvm::raw_string_ostream unknownStream(unknown);
        if (mlir::failed(options.parseFromString(text, unknownStream))) {
          std::string names;
          llvm::raw_string_ostream namesStream(names);
          GenerateVerifyPipelineOptions().print(namesStream);
          return errorHandler(
              "sched-generate-verify: " +
              describePassOptionError(unknown, passOptionNames(names)));
        }
        if (!options.memoryLimit.parsed())
          return errorHandler("sched-generate-verify: memory-limit must be "
                              "a number (negative: the schedule's "
                              "memory_limit), got " +
                              options.memoryLimit.describe());
        return buildGenerateVerifyPipeline(pm, options.toOptions(),
                                           errorHandler);
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(GenerateVerifyPipelineOptions());
      });
}
