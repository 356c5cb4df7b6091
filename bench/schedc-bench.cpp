//===- schedc-bench.cpp - generation and verification benchmarks ----------===//
//
// Measures, for schedules of 10^3..10^6 actions:
//  - generation: the plain generator, and generation plus building the
//    sched.schedule IR (what sched-lower-* does);
//  - verification end to end: parsing the MLIR text, reading it into the
//    plain form, the graph path, and Z3 (witness check and, up to a size,
//    unaided search), each timed separately.
// Every figure is the median of several runs in this process; the machine
// is noisy, so compare ratios within one run.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedOps.h"
#include "lib/Generate/Strategy.h"
#include "lib/ScheduleIR/ScheduleIR.h"
#include "lib/VerifyIR/VerifyIR.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <functional>

using namespace mlir;
using namespace sched;

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

/// The median time of `runs` calls of `body`.
double timeIt(int runs, const std::function<void()> &body) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    auto begin = Clock::now();
    body();
    times.push_back(seconds(begin));
  }
  return median(times);
}

PipelineShape shapeFor(int32_t pp, int32_t vpp, int64_t actions) {
  PipelineShape shape;
  shape.pp = pp;
  shape.vpp = vpp;
  shape.microbatches = static_cast<int32_t>(
      std::max<int64_t>(1, actions / (2 * static_cast<int64_t>(pp) * vpp)));
  return shape;
}

/// The MLIR text of a generated schedule.
std::string scheduleText(MLIRContext &context, Strategy strategy,
                         const PipelineShape &shape) {
  OpBuilder builder(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(builder.getUnknownLoc());
  builder.setInsertionPointToEnd(module->getBody());
  auto pipeline = PipelineOp::create(
      builder, builder.getUnknownLoc(), builder.getStringAttr("bench"),
      static_cast<uint64_t>(shape.pp), static_cast<uint64_t>(shape.vpp),
      static_cast<uint64_t>(shape.microbatches), Placement::Loop,
      IntegerAttr());
  builder.createBlock(&pipeline.getBody());
  if (failed(lowerPipeline(pipeline, strategy)))
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

void benchGeneration(MLIRContext &context) {
  llvm::outs() << "\n## Generation (median of 3)\n\n"
               << "| strategy | pp x vpp x M | actions | generate (s) | "
                  "generate + build IR (s) |\n|---|---|---|---|---|\n";
  struct Case {
    Strategy strategy;
    int32_t pp, vpp;
    int64_t actions;
  };
  const Case cases[] = {
      {Strategy::OneFOneB, 16, 1, 1'000},
      {Strategy::OneFOneB, 16, 1, 10'000},
      {Strategy::OneFOneB, 16, 1, 100'000},
      {Strategy::OneFOneB, 16, 1, 1'000'000},
      {Strategy::Interleaved1F1B, 32, 2, 65'536},
      {Strategy::ZBH1, 16, 1, 1'000'000},
  };
  for (const Case &c : cases) {
    PipelineShape shape = shapeFor(c.pp, c.vpp, c.actions);
    size_t actions = 0;
    double generate = timeIt(3, [&] {
      llvm::Expected<Schedule> s = generateSchedule(c.strategy, shape);
      actions = s ? s->numActions() : 0;
      if (!s)
        llvm::consumeError(s.takeError());
    });
    double build = timeIt(3, [&] {
      OpBuilder builder(&context);
      OwningOpRef<ModuleOp> module =
          ModuleOp::create(builder.getUnknownLoc());
      builder.setInsertionPointToEnd(module->getBody());
      auto pipeline = PipelineOp::create(
          builder, builder.getUnknownLoc(), builder.getStringAttr("bench"),
          static_cast<uint64_t>(shape.pp), static_cast<uint64_t>(shape.vpp),
          static_cast<uint64_t>(shape.microbatches), Placement::Loop,
          IntegerAttr());
      builder.createBlock(&pipeline.getBody());
      (void)lowerPipeline(pipeline, c.strategy);
    });
    llvm::outs() << llvm::formatv("| {0} | {1} x {2} x {3} | {4} | {5:F4} | "
                                  "{6:F4} |\n",
                                  strategyName(c.strategy), shape.pp,
                                  shape.vpp, shape.microbatches, actions,
                                  generate, build);
  }
}

void benchVerify(MLIRContext &context) {
  llvm::outs() << "\n## Verification end to end (median of 3; 1F1B, pp 16, "
                  "rendezvous)\n\n"
               << "| actions | parse (s) | read (s) | graph path (s) | Z3 "
                  "witness (s) | Z3 vars / constraints | total (s) | Z3 "
                  "search (s) |\n|---|---|---|---|---|---|---|---|\n";
  for (int64_t target : {1'000, 10'000, 100'000, 200'000, 1'000'000}) {
    PipelineShape shape = shapeFor(16, 1, target);
    const std::string text = scheduleText(context, Strategy::OneFOneB, shape);
    std::vector<double> parse, read, graph, z3, total, search;
    size_t actions = 0, vars = 0, constraints = 0;
    const int runs = target >= 1'000'000 ? 1 : 3;
    for (int run = 0; run < runs; ++run) {
      auto begin = Clock::now();
      OwningOpRef<ModuleOp> module =
          parseSourceString<ModuleOp>(text, &context);
      parse.push_back(seconds(begin));
      auto op = *module->getOps<ScheduleOp>().begin();
      auto readBegin = Clock::now();
      FailureOr<Schedule> schedule = readSchedule(op);
      read.push_back(seconds(readBegin));
      actions = schedule->numActions();
      VerifyOptions options;
      VerifyResult result = verifySchedule(*schedule, options);
      if (result.verdict != Verdict::Verified)
        llvm::errs() << "bench: expected verified, got "
                     << verdictName(result.verdict) << "\n";
      graph.push_back(result.graphSeconds);
      z3.push_back(result.z3Seconds);
      vars = result.z3Variables;
      constraints = result.z3Constraints;
      total.push_back(seconds(begin));
      if (target <= 10'000) {
        options.proofMode = ProofMode::Search;
        search.push_back(verifySchedule(*schedule, options).z3Seconds);
      }
    }
    std::string searchCell =
        search.empty() ? std::string("-")
                       : llvm::formatv("{0:F3}", median(search)).str();
    llvm::outs() << llvm::formatv(
        "| {0} | {1:F3} | {2:F3} | {3:F3} | {4:F3} | {5} / {6} | {7:F3} | "
        "{8} |\n",
        actions, median(parse), median(read), median(graph), median(z3),
        vars, constraints, median(total), searchCell);
  }
}

} // namespace

int main() {
  MLIRContext context;
  context.getOrLoadDialect<SchedDialect>();
  llvm::outs() << "# schedc benchmarks\n";
  benchGeneration(context);
  benchVerify(context);
  return 0;
}
