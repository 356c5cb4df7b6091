//===- schedc-bench.cpp - generation and verification benchmarks ----------===//
//
// Measures, for schedules of 10^3..10^6 actions:
//  - memory per action: the peak resident memory each path of a request
//    adds (generation, IR, the emit forms, transfer insertion, import),
//    each run in a child process, over its actions; lib/Limits estimates
//    requests with these figures;
//  - generation: the plain generator, and generation plus building the
//    sched.schedule IR (what sched-lower-* does);
//  - verification end to end: parsing the MLIR text and reading it into the
//    plain form (or reading the PyTorch CSV of a lowered schedule straight
//    into it), the graph path, and Z3 (witness check and, up to a size,
//    unaided search), each timed separately;
//  - the schedc CLI on PyTorch CSV files (verify, simulate, and the IR
//    import of sched-translate), each run in a child process under
//    peak-rss: wall time and peak RSS as the kernel counts them;
//  - the memory estimates against the measured peaks: --emit json for
//    every strategy at pp 4, 8 and 32, --emit mlir and torch-csv, the
//    planner at the largest batch; and the JSON plan reader's memory
//    against its document.
// Every figure is the median of several runs; the machine is noisy, so
// compare ratios within one run.
//
//===----------------------------------------------------------------------===//

#include "bench/common/ProcessTimes.h"
#include "bench/peak-rss/PeakRssRun.h"
#include "dialects/Sched/SchedOps.h"
#include "lib/Api/Api.h"
#include "lib/Export/TorchCsv.h"
#include "lib/Generate/PlanMemory.h"
#include "lib/Generate/Strategy.h"
#include "lib/Import/TorchCsv.h"
#include "lib/Limits/ResourceLimits.h"
#include "lib/Lower/InsertTransfers.h"
#include "lib/Render/TextGrid.h"
#include "lib/ScheduleIR/ScheduleIR.h"
#include "lib/VerifyIR/VerifyIR.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>

#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;
using namespace sched;

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
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

/// A module holding the generated schedule of `strategy` for `shape`, built
/// as sched-lower-* builds it.
OwningOpRef<ModuleOp> lowerToModule(MLIRContext &context, Strategy strategy,
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
  if (failed(lowerPipeline(pipeline, strategy, INT64_MAX)))
    return nullptr;
  return module;
}

/// The MLIR text of a generated schedule.
std::string scheduleText(MLIRContext &context, Strategy strategy,
                         const PipelineShape &shape) {
  OwningOpRef<ModuleOp> module = lowerToModule(context, strategy, shape);
  if (!module)
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
      {Strategy::InterleavedZB, 32, 2, 65'536},
      {Strategy::ZBV, 16, 2, 102'400},
      {Strategy::DualPipeV, 16, 2, 102'400},
      // 3,200 microbatches: even, as DualPipe needs.
      {Strategy::DualPipe, 16, 1, 102'400},
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
    double build =
        timeIt(3, [&] { (void)lowerToModule(context, c.strategy, shape); });
    llvm::outs() << llvm::formatv("| {0} | {1} x {2} x {3} | {4} | {5:F4} | "
                                  "{6:F4} |\n",
                                  strategyName(c.strategy), shape.pp, shape.vpp,
                                  shape.microbatches, actions, generate, build);
  }
}

/// The PyTorch CSV, with a SEND/RECV cell per transfer, of the 1F1B of
/// `shape` with transfers inserted (what schedc generate --emit
/// torch-csv-comms writes).
llvm::Expected<std::string> loweredOneFOneBCsv(const PipelineShape &shape) {
  llvm::Expected<Schedule> compute =
      generateSchedule(Strategy::OneFOneB, shape);
  if (!compute)
    return compute.takeError();
  llvm::Expected<Schedule> lowered = insertTransfers(*compute);
  if (!lowered)
    return lowered.takeError();
  std::string csv;
  llvm::raw_string_ostream os(csv);
  if (llvm::Error error =
          writeTorchCsv(os, *lowered, TorchCsvContent::ComputeAndComms))
    return std::move(error);
  return csv;
}

/// One row of the verification table: `text` is MLIR or PyTorch CSV.
struct VerifyCase {
  std::string label;
  std::string text;
  bool csv = false;
  P2PSemantics p2p = P2PSemantics::Rendezvous;
};

void benchVerifyCase(MLIRContext &context, const VerifyCase &c, int runs,
                     bool search) {
  std::vector<double> parse, read, graph, z3, total, searchTimes;
  size_t actions = 0, vars = 0, constraints = 0;
  for (int run = 0; run < runs; ++run) {
    auto begin = Clock::now();
    // A CSV reads straight into the plain form, as schedc verify does;
    // MLIR is parsed, then read.
    FailureOr<Schedule> schedule = failure();
    if (c.csv) {
      llvm::SourceMgr sourceMgr;
      sourceMgr.AddNewSourceBuffer(
          llvm::MemoryBuffer::getMemBuffer(c.text, "bench.csv"), llvm::SMLoc());
      TorchCsvOptions options;
      options.flavour = TorchCsvFlavour::ComputeAndComms;
      FailureOr<TorchCsvSchedule> csv =
          readTorchCsv(sourceMgr, &context, options);
      if (succeeded(csv))
        schedule = std::move(csv->schedule);
      parse.push_back(seconds(begin));
      read.push_back(0);
    } else {
      OwningOpRef<ModuleOp> module =
          parseSourceString<ModuleOp>(c.text, &context);
      parse.push_back(seconds(begin));
      auto readBegin = Clock::now();
      schedule = readSchedule(*module->getOps<ScheduleOp>().begin());
      read.push_back(seconds(readBegin));
    }
    if (failed(schedule)) {
      llvm::errs() << "bench: cannot read " << c.label << "\n";
      return;
    }
    actions = schedule->numActions();
    VerifyOptions options;
    options.p2p = c.p2p;
    VerifyResult result = verifySchedule(*schedule, options);
    if (result.verdict != Verdict::Verified)
      llvm::errs() << "bench: expected verified, got "
                   << verdictName(result.verdict) << "\n";
    graph.push_back(result.graphSeconds);
    z3.push_back(result.z3Seconds);
    vars = result.z3Variables;
    constraints = result.z3Constraints;
    total.push_back(seconds(begin));
    if (search) {
      options.proofMode = ProofMode::Search;
      searchTimes.push_back(verifySchedule(*schedule, options).z3Seconds);
    }
  }
  std::string searchCell =
      searchTimes.empty() ? std::string("-")
                          : llvm::formatv("{0:F3}", median(searchTimes)).str();
  llvm::outs() << llvm::formatv(
      "| {0} | {1} | {2:F3} | {3:F3} | {4:F3} | {5:F3} | {6} / {7} | "
      "{8:F3} | {9} |\n",
      c.label, actions, median(parse), median(read), median(graph), median(z3),
      vars, constraints, median(total), searchCell);
}

void benchVerify(MLIRContext &context) {
  llvm::outs() << "\n## Verification end to end (median of 3; 1F1B, pp 16)"
                  "\n\n"
               << "| schedule | actions | parse/import (s) | read (s) | "
                  "graph path (s) | Z3 witness (s) | Z3 vars / constraints "
                  "| total (s) | Z3 search (s) |\n"
                  "|---|---|---|---|---|---|---|---|---|\n";
  for (int64_t target : {1'000, 10'000, 100'000, 200'000, 1'000'000}) {
    PipelineShape shape = shapeFor(16, 1, target);
    VerifyCase c{"compute-only MLIR, rendezvous",
                 scheduleText(context, Strategy::OneFOneB, shape)};
    benchVerifyCase(context, c, target >= 1'000'000 ? 1 : 3, target <= 10'000);
  }
  // Lowered schedules: a send and a receive for almost every compute.
  for (int64_t target : {1'000, 10'000, 100'000, 200'000}) {
    llvm::Expected<std::string> csv =
        loweredOneFOneBCsv(shapeFor(16, 1, target * 35 / 100));
    if (!csv) {
      llvm::errs() << "bench: " << llvm::toString(csv.takeError()) << "\n";
      return;
    }
    VerifyCase c{"lowered PyTorch CSV, eager", std::move(*csv), /*csv=*/true,
                 P2PSemantics::Eager};
    benchVerifyCase(context, c, 3, target <= 10'000);
  }
}

//===----------------------------------------------------------------------===//
// Memory per action
//===----------------------------------------------------------------------===//

/// A field of /proc/self/status in bytes (VmRSS, VmHWM), or -1.
int64_t statusBytes(llvm::StringRef field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    llvm::StringRef rest(line);
    if (!rest.consume_front(field) || !rest.consume_front(":"))
      continue;
    int64_t kib = 0;
    if (rest.trim().consumeInteger(10, kib))
      return -1;
    return kib * 1024;
  }
  return -1;
}

/// `count` run in a child process, its result passed back (-1 when none
/// comes). A child of its own keeps every path's peak apart from memory the
/// allocator kept from earlier paths, and a large schedule counted here
/// would leave freed heap pages resident for the measured children to
/// reuse.
int64_t childCount(const std::function<int64_t()> &count) {
  int fds[2];
  if (pipe(fds) != 0)
    return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    const int64_t value = count();
    ssize_t written = write(fds[1], &value, sizeof value);
    _exit(written == sizeof value ? 0 : 1);
  }
  close(fds[1]);
  int64_t value = -1;
  if (read(fds[0], &value, sizeof value) != sizeof value)
    value = -1;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return value;
}

/// Runs `body` in a child process and returns the peak resident memory it
/// added to what the child held when it started (after `prepare`), in
/// bytes, or -1. `body` returns what it must keep alive until the peak is
/// read.
int64_t childPeakBytes(const std::function<void(MLIRContext &)> &prepare,
                       const std::function<void(MLIRContext &)> &body) {
  return childCount([&]() -> int64_t {
    // Never torn down: the child exits once the peak is read, and what
    // `body` kept (in the caller's variables) lives in this context.
    MLIRContext &context = *new MLIRContext(MLIRContext::Threading::DISABLED);
    context.getOrLoadDialect<SchedDialect>();
    prepare(context);
    // Hands what `prepare` freed back to the system, so that `body` cannot
    // reuse it unseen, then resets VmHWM to the current resident size (Linux
    // clear_refs).
    malloc_trim(0);
    std::ofstream("/proc/self/clear_refs") << "5";
    const int64_t before = statusBytes("VmRSS");
    body(context);
    if (before < 0)
      return -1;
    return statusBytes("VmHWM") - before;
  });
}

/// The memory table at about `target` actions per strategy (2 million by
/// default; another size shows where the peaks step).
void benchMemory(int64_t target) {
  llvm::outs()
      << "\n## Memory per action (peak resident bytes a path adds, over its "
         "compute actions; each in a child process)\n\n"
      << "| strategy | pp x vpp x M | actions | transfers | p2p groups | "
         "generate | lower (IR) | emit mlir | emit text | emit torch-csv | "
         "emit torch-csv-comms | insert-p2p pass | import CSV |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  struct Case {
    Strategy strategy;
    int32_t pp, vpp;
  };
  const Case cases[] = {
      {Strategy::OneFOneB, 8, 1},
      {Strategy::ZBH2, 8, 1},
      {Strategy::Interleaved1F1B, 8, 2},
      {Strategy::ZBV, 8, 2},
      {Strategy::DualPipeV, 8, 2},
      {Strategy::DualPipe, 8, 1},
      // One rank: a microbatch per two actions.
      {Strategy::NoPipeline, 1, 1},
      {Strategy::Combined1F1B, 1, 1},
  };
  // The path of each column.
  static constexpr MemoryPath kPaths[] = {
      MemoryPath::Generate,        MemoryPath::Lower,
      MemoryPath::EmitMlir,        MemoryPath::EmitText,
      MemoryPath::EmitTorchCsv,    MemoryPath::EmitTorchCsvComms,
      MemoryPath::InsertTransfers, MemoryPath::Import};
  int64_t worst[8] = {};
  double lowest[8], highest[8];
  // Per strategy: its label and the estimate over the peak of each path.
  std::vector<std::pair<std::string, std::vector<double>>> ratios;
  std::fill(std::begin(lowest), std::end(lowest), 1e300);
  std::fill(std::begin(highest), std::end(highest), 0.0);
  for (const Case &c : cases) {
    PipelineShape shape = shapeFor(c.pp, c.vpp, target);
    // Even, as DualPipe needs.
    shape.microbatches &= ~1;
    // What lib/Limits estimates requests by. Counting by generating here
    // would leave freed heap pages resident for the children to reuse.
    RequestSize size = computeRequestSize(c.strategy, shape);
    const int64_t actions = size.actions;
    // The sends and receives transfer insertion adds (torch-csv-comms and
    // insert-p2p), counted as they count them.
    size.transfers = childCount([&] {
      return countPlanInstructions(
                 cantFail(generateSchedule(c.strategy, shape)))
          .transfers;
    });
    // The p2p groups insert-p2p writes; the CSV has none.
    const int64_t groups = childCount([&] {
      return countTransferGroups(cantFail(
          insertTransfers(cantFail(generateSchedule(c.strategy, shape)))));
    });
    auto nothing = [](MLIRContext &) {};
    auto emit = [&](auto write) {
      return [&, write](MLIRContext &) {
        Schedule schedule = cantFail(generateSchedule(c.strategy, shape));
        llvm::raw_null_ostream os;
        cantFail(write(os, schedule));
      };
    };
    OwningOpRef<ModuleOp> lowered;
    std::string csv;
    const int64_t peaks[] = {
        childPeakBytes(nothing,
                       [&](MLIRContext &) {
                         Schedule schedule =
                             cantFail(generateSchedule(c.strategy, shape));
                         (void)schedule;
                       }),
        childPeakBytes(nothing,
                       [&](MLIRContext &context) {
                         lowered = lowerToModule(context, c.strategy, shape);
                       }),
        childPeakBytes(nothing,
                       [&](MLIRContext &context) {
                         lowered = lowerToModule(context, c.strategy, shape);
                         llvm::raw_null_ostream os;
                         lowered->print(os, OpPrintingFlags().assumeVerified());
                       }),
        childPeakBytes(
            nothing, emit([](llvm::raw_ostream &os, const Schedule &schedule) {
              return printTextGrid(os, schedule);
            })),
        c.strategy == Strategy::DualPipe
            ? -1
            : childPeakBytes(nothing, emit([](llvm::raw_ostream &os,
                                              const Schedule &schedule) {
                               return writeTorchCsv(os, schedule,
                                                    TorchCsvContent::Compute);
                             })),
        c.strategy == Strategy::DualPipe
            ? -1
            : childPeakBytes(nothing, emit([](llvm::raw_ostream &os,
                                              const Schedule &schedule) {
                               return writeTorchCsv(
                                   os, cantFail(insertTransfers(schedule)),
                                   TorchCsvContent::ComputeAndComms);
                             })),
        childPeakBytes(
            [&](MLIRContext &context) {
              lowered = lowerToModule(context, c.strategy, shape);
            },
            [&](MLIRContext &context) {
              PassManager pm(&context);
              pm.addPass(createInsertP2P());
              (void)pm.run(*lowered);
            }),
        c.strategy == Strategy::DualPipe
            ? -1
            : childPeakBytes(
                  [&](MLIRContext &) {
                    llvm::raw_string_ostream os(csv);
                    cantFail(writeTorchCsv(
                        os, cantFail(generateSchedule(c.strategy, shape)),
                        TorchCsvContent::Compute));
                  },
                  [&](MLIRContext &context) {
                    llvm::SourceMgr sourceMgr;
                    sourceMgr.AddNewSourceBuffer(
                        llvm::MemoryBuffer::getMemBuffer(csv, "bench.csv"),
                        llvm::SMLoc());
                    lowered = importTorchCsv(sourceMgr, &context, {});
                  }),
    };
    const std::string label =
        llvm::formatv("{0} | {1} x {2} x {3}", strategyName(c.strategy),
                      shape.pp, shape.vpp, shape.microbatches);
    llvm::outs() << llvm::formatv("| {0} | {1} | {2} | {3} |", label, actions,
                                  size.transfers, groups);
    std::vector<double> &ratio =
        ratios.emplace_back(label, std::vector<double>()).second;
    for (size_t k = 0; k < std::size(peaks); ++k) {
      ratio.push_back(-1);
      if (peaks[k] < 0) {
        llvm::outs() << " - |";
        continue;
      }
      const int64_t perAction = (peaks[k] + actions - 1) / actions;
      worst[k] = std::max(worst[k], perAction);
      llvm::outs() << " " << perAction << " |";
      // lib/Limits' estimate against the peak. The import reads a
      // compute-only CSV: no transfers.
      RequestSize pathSize = size;
      if (kPaths[k] == MemoryPath::Import)
        pathSize.transfers = 0;
      if (kPaths[k] == MemoryPath::InsertTransfers)
        pathSize.transferGroups = groups;
      ratio.back() = double(estimateMemory(kPaths[k], pathSize)) / peaks[k];
      lowest[k] = std::min(lowest[k], ratio.back());
      highest[k] = std::max(highest[k], ratio.back());
    }
    llvm::outs() << "\n";
  }
  llvm::outs() << "| largest | | | | |";
  for (int64_t w : worst)
    llvm::outs() << " " << w << " |";
  llvm::outs() << "\n| estimate / measured | | | | |";
  for (size_t k = 0; k < std::size(kPaths); ++k)
    llvm::outs() << llvm::formatv(" {0:F2}-{1:F2}{2} |", lowest[k], highest[k],
                                  lowest[k] < 1 || highest[k] > 1.5 ? " NO"
                                                                    : "");
  // Each strategy's estimate over its peak, path by path: flagged outside 1
  // to 1.5.
  llvm::outs() << "\n\n### Estimate / measured peak, per strategy\n\n"
               << "| strategy | pp x vpp x M | generate | lower (IR) | emit "
                  "mlir | emit text | emit torch-csv | emit torch-csv-comms | "
                  "insert-p2p pass | import CSV |\n"
                  "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto &[label, row] : ratios) {
    llvm::outs() << "| " << label << " |";
    for (double r : row)
      llvm::outs() << (r < 0 ? std::string(" - |")
                             : llvm::formatv(" {0:F2}{1} |", r,
                                             r < 1 || r > 1.5 ? " NO" : "")
                                   .str());
    llvm::outs() << "\n";
  }
  llvm::outs() << "\nlib/Limits estimates with (bytes per action): ";
  const std::pair<llvm::StringLiteral, MemoryPath> used[] = {
      {"generate", MemoryPath::Generate},
      {"lower", MemoryPath::Lower},
      {"emit mlir", MemoryPath::EmitMlir},
      {"emit text", MemoryPath::EmitText},
      {"emit torch-csv", MemoryPath::EmitTorchCsv},
      {"emit torch-csv-comms", MemoryPath::EmitTorchCsvComms},
      {"insert-p2p", MemoryPath::InsertTransfers},
      {"import", MemoryPath::Import},
  };
  // Each figure of lib/Limits, path by path.
  const std::pair<llvm::StringLiteral, int64_t (*)(MemoryPath)> figures[] = {
      {"", bytesPerAction},
      {"\n(per overlap, more: ", bytesPerOverlap},
      {"; per microbatch: ", bytesPerMicrobatch},
      {"; per send or receive added: ", bytesPerTransfer},
      {"; per p2p group: ", bytesPerTransferGroup},
  };
  for (const auto &[before, figure] : figures) {
    llvm::outs() << before;
    llvm::interleaveComma(used, llvm::outs(), [&](const auto &entry) {
      llvm::outs() << entry.first << " " << figure(entry.second);
    });
  }
  llvm::outs() << ")\n";
}

//===----------------------------------------------------------------------===//
// The CLI on PyTorch CSV files
//===----------------------------------------------------------------------===//

/// One CSV file the CLI rows read.
struct CliCase {
  std::string label;
  std::string text;
  size_t actions;
  size_t ranks;
  /// The file of the CSV-path target (issue 8): `schedc verify` on it in
  /// under 0.2 s and 64 MB.
  bool target = false;
};

/// A rank per stage, one microbatch: rank r computes rF0 and rB0.
CliCase manyRanks(size_t ranks) {
  CliCase c{llvm::formatv("{0} ranks x 2 cells", ranks).str(), "", 2 * ranks,
            ranks};
  llvm::raw_string_ostream os(c.text);
  for (size_t r = 0; r < ranks; ++r)
    os << r << "F0," << r << "B0\n";
  return c;
}

void benchCli(llvm::StringRef binDir) {
  llvm::outs() << "\n## The CLI on PyTorch CSV (child processes, median of "
                  "3)\n\n"
               << "| file | actions | ranks | MB | command | exit | wall "
                  "(s) | peak RSS (MiB) |\n"
                  "|---|---|---|---|---|---|---|---|\n";
  std::vector<CliCase> cases;
  // The process floor: shared libraries and a two-cell schedule.
  cases.push_back({"2 cells", "0F0,0B0\n", 2, 1});
  // What `schedc generate --strategy 1f1b --pp 32 --microbatches M --emit
  // torch-csv-comms` writes: 192,512 actions for M = 1,024, about 10^6 for
  // M = 5,320.
  for (int32_t microbatches : {1'024, 5'320}) {
    PipelineShape shape;
    shape.pp = 32;
    shape.microbatches = microbatches;
    llvm::Expected<std::string> text = loweredOneFOneBCsv(shape);
    if (!text) {
      llvm::errs() << "bench: " << llvm::toString(text.takeError()) << "\n";
      return;
    }
    const size_t cells = llvm::count(*text, ',') + llvm::count(*text, '\n');
    cases.push_back(
        {llvm::formatv("lowered 1F1B, pp 32, M {0}", microbatches).str(),
         std::move(*text), cells, 32, microbatches == 1'024});
  }
  cases.push_back(manyRanks(50'000));

  const std::string schedc = (binDir + "/schedc").str();
  const std::string translate = (binDir + "/sched-translate").str();
  std::string targetLine;
  for (const CliCase &c : cases) {
    llvm::SmallString<128> path;
    int fd = -1;
    if (llvm::sys::fs::createTemporaryFile("schedc-bench", "csv", fd, path)) {
      llvm::errs() << "bench: cannot create a temporary file\n";
      return;
    }
    {
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      os << c.text;
    }
    const std::string file = path.str().str();
    const std::vector<std::vector<std::string>> commands = {
        {schedc, "verify", file},
        {schedc, "simulate", file},
        {translate, "--import-torch-csv-comms", file, "-o", "/dev/null"},
    };
    for (const std::vector<std::string> &command : commands) {
      std::vector<double> times, peaks;
      int status = 0;
      for (int run = 0; run < 3; ++run) {
        std::optional<ChildRun> child = runChild(binDir, command);
        if (!child) {
          llvm::errs() << "bench: cannot run " << command[0] << "\n";
          return;
        }
        times.push_back(child->seconds);
        peaks.push_back(child->peakMiB);
        status = child->status;
      }
      llvm::outs() << llvm::formatv(
          "| {0} | {1} | {2} | {3:F1} | {4} {5} | {6} | {7:F3} | {8:F0} "
          "|\n",
          c.label, c.actions, c.ranks, c.text.size() / 1e6,
          llvm::sys::path::filename(command[0]), command[1], status,
          median(times), median(peaks));
      if (c.target && command[1] == "verify")
        targetLine = llvm::formatv(
            "\nTarget: schedc verify on the {0}-action lowered 1F1B in "
            "under 0.2 s and 64 MB: {1} ({2:F3} s, {3:F0} MB)\n",
            c.actions,
            status == 0 && median(times) < 0.2 &&
                    median(peaks) * 1024 * 1024 < 64e6
                ? "met"
                : "NOT MET",
            median(times), median(peaks) * 1024 * 1024 / 1e6);
    }
    llvm::sys::fs::remove(path);
  }
  llvm::outs() << targetLine;
}

//===----------------------------------------------------------------------===//
// Scaling in ranks and cells
//===----------------------------------------------------------------------===//

/// Writes `text` to a new temporary file with extension `suffix`; "" when
/// it cannot.
std::string temporaryFile(llvm::StringRef suffix, llvm::StringRef text) {
  llvm::SmallString<128> path;
  int fd = -1;
  if (llvm::sys::fs::createTemporaryFile("schedc-bench", suffix, fd, path))
    return "";
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << text;
  return path.str().str();
}

/// The paths issue 20 found quadratic, each at n and 4n (a linear path
/// takes about 4 times as long at 4n, a quadratic one 16 times): DualPipeV's
/// generator in pp, sched-insert-collectives and the SVG in ranks (child
/// processes under peak-rss), and the CSV reader of the Python module in
/// cells per row (lib/Api, in this process).
void benchScaling(llvm::StringRef binDir) {
  llvm::outs() << "\n## Scaling in ranks and cells (median of 3)\n\n"
               << "| path | n | wall at n (s) | wall at 4n (s) | 4n / n | peak "
                  "at 4n (MiB) |\n|---|---|---|---|---|---|\n";
  const std::string schedc = (binDir + "/schedc").str();
  const std::string opt = (binDir + "/sched-opt").str();
  auto measure = [&](const std::vector<std::string> &command) {
    std::vector<double> times, peaks;
    for (int run = 0; run < 3; ++run)
      if (std::optional<ChildRun> child = runChild(binDir, command)) {
        times.push_back(child->seconds);
        peaks.push_back(child->peakMiB);
      }
    return std::pair<double, double>{times.empty() ? -1 : median(times),
                                     peaks.empty() ? -1 : median(peaks)};
  };
  auto row =
      [&](llvm::StringRef label, int64_t n,
          const std::function<std::vector<std::string>(int64_t)> &command) {
        auto [small, smallPeak] = measure(command(n));
        auto [large, peak] = measure(command(4 * n));
        (void)smallPeak;
        llvm::outs() << llvm::formatv(
            "| {0} | {1} | {2:F3} | {3:F3} | {4:F1} | "
            "{5:F0} |\n",
            label, n, small, large, small > 0 ? large / small : 0.0, peak);
      };
  row("dualpipe-v generate, M 2 (pp)", 4096, [&](int64_t pp) {
    return std::vector<std::string>{
        schedc,           "generate", "--strategy",
        "dualpipe-v",     "--pp",     std::to_string(pp),
        "--microbatches", "2",        "--emit",
        "mlir",           "-o",       "/dev/null"};
  });
  std::vector<std::string> files;
  auto ranksFile = [&](int64_t ranks, llvm::StringRef suffix) {
    std::string csv;
    llvm::raw_string_ostream os(csv);
    for (int64_t r = 0; r < ranks; ++r)
      os << r << "F0," << r << "B0\n";
    if (suffix == "csv") {
      files.push_back(temporaryFile("csv", csv));
      return files.back();
    }
    // The IR of the same schedule, for the passes.
    MLIRContext context;
    context.getOrLoadDialect<SchedDialect>();
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(csv, "ranks.csv"), llvm::SMLoc());
    OwningOpRef<ModuleOp> module = importTorchCsv(sourceMgr, &context, {});
    std::string text;
    llvm::raw_string_ostream ir(text);
    module->print(ir);
    files.push_back(temporaryFile("mlir", text));
    return files.back();
  };
  row("sched-insert-collectives (ranks)", 8192, [&](int64_t ranks) {
    return std::vector<std::string>{opt, ranksFile(ranks, "mlir"),
                                    "--sched-insert-collectives", "-o",
                                    "/dev/null"};
  });
  const std::string svg = temporaryFile("svg", "");
  row("schedc show, SVG (ranks)", 32768, [&](int64_t ranks) {
    return std::vector<std::string>{schedc, "show", ranksFile(ranks, "csv"),
                                    "-o", svg};
  });
  files.push_back(svg);
  // The Python module's CSV reader, in this process.
  auto readRow = [](int64_t cells) {
    std::string row;
    for (int64_t m = 0; m < cells / 2; ++m)
      row += (m ? ",0F" : "0F") + std::to_string(m);
    for (int64_t m = 0; m < cells / 2; ++m)
      row += ",0B" + std::to_string(m);
    row += "\n";
    return timeIt(3, [&] {
      cantFail(
          api::readTorchCsvText(row, std::nullopt, std::nullopt, "bench.csv"));
    });
  };
  const int64_t cells = 45'000;
  const double small = readRow(cells), large = readRow(4 * cells);
  llvm::outs() << llvm::formatv("| Python CSV reader, one row (cells) | {0} | "
                                "{1:F3} | {2:F3} | {3:F1} | |\n",
                                cells, small, large, large / small);
  for (const std::string &file : files)
    llvm::sys::fs::remove(file);
}

//===----------------------------------------------------------------------===//
// Memory estimates against measured peaks
//===----------------------------------------------------------------------===//

/// The growth of a command's peak over the process floor, in bytes, or -1.
double peakGrowth(llvm::StringRef binDir,
                  const std::vector<std::string> &command, double floorMiB) {
  std::optional<ChildRun> run = runChild(binDir, command);
  if (!run || run->status != 0)
    return -1;
  return (run->peakMiB - floorMiB) * 1024 * 1024;
}

/// One row: the estimate against the measured peak growth. Within 1.5x
/// either way counts; an estimate under the peak says so.
void estimateRow(llvm::StringRef label, double estimate, double measured,
                 int &outside) {
  const double ratio = measured > 0 ? estimate / measured : 0;
  const bool within = ratio >= 1 / 1.5 && ratio <= 1.5;
  outside += !within;
  llvm::outs() << llvm::formatv("| {0} | {1:F1} | {2:F1} | {3:F2} | {4} |\n",
                                label, estimate / (1 << 20),
                                measured / (1 << 20), ratio,
                                !within     ? "NO"
                                : ratio < 1 ? "yes (under)"
                                            : "yes");
}

/// Each estimate lib/ makes before it allocates, against the peak resident
/// memory the command then adds over the process floor (a two-microbatch
/// plan; for the other forms, the same form at 2 x pp microbatches), each
/// in a child process under peak-rss: `schedc generate --emit json` for
/// every strategy at pp 2, 4, 8 and 32 with about 300,000 plan instructions
/// (lib/Generate/PlanMemory.h), and `--emit mlir` and `--emit torch-csv`
/// at about 2 million actions (bytesPerAction).
void benchEstimates(llvm::StringRef binDir) {
  llvm::outs() << "\n## Memory estimates against the measured peak (growth "
                  "over the process floor)\n\n"
               << "| command | estimate (MiB) | measured (MiB) | estimate / "
                  "measured | within 1.5x |\n|---|---|---|---|---|\n";
  const std::string schedc = (binDir + "/schedc").str();
  std::optional<ChildRun> floorRun = runChild(
      binDir, {schedc, "generate", "--strategy", "1f1b", "--pp", "2",
               "--microbatches", "2", "--emit", "json", "-o", "/dev/null"});
  if (!floorRun) {
    llvm::errs() << "bench: cannot run schedc\n";
    return;
  }
  const double floorMiB = floorRun->peakMiB;
  int outside = 0, rows = 0;
  auto generate = [&](Strategy strategy, const PipelineShape &shape,
                      llvm::StringRef emit) {
    return std::vector<std::string>{schedc,
                                    "generate",
                                    "--strategy",
                                    strategyName(strategy).str(),
                                    "--pp",
                                    std::to_string(shape.pp),
                                    "--vpp",
                                    std::to_string(shape.vpp),
                                    "--microbatches",
                                    std::to_string(shape.microbatches),
                                    "--emit",
                                    emit.str(),
                                    "-o",
                                    "/dev/null",
                                    "--memory-budget",
                                    "64G"};
  };
  for (Strategy strategy : allStrategies()) {
    // Two ranks have their own figure per strategy; interleaved combined
    // 1F1B runs on one rank or more.
    const bool oneRank =
        strategy == Strategy::NoPipeline || strategy == Strategy::Combined1F1B;
    std::vector<int32_t> pps =
        oneRank ? std::vector<int32_t>{1} : std::vector<int32_t>{2, 4, 8, 32};
    if (strategy == Strategy::InterleavedCombined1F1B)
      pps.insert(pps.begin(), 1);
    for (int32_t pp : pps) {
      PipelineShape shape;
      shape.pp = pp;
      shape.vpp = strategy == Strategy::Interleaved1F1B ||
                          strategy == Strategy::LoopedBFS ||
                          strategy == Strategy::InterleavedCombined1F1B
                      ? 2
                      : defaultVpp(strategy);
      // Instructions per microbatch, from a small schedule of the shape.
      shape.microbatches = 4 * pp;
      Schedule small = cantFail(generateSchedule(strategy, shape));
      const double perMicrobatch =
          double(countPlanInstructions(small).total()) / shape.microbatches;
      shape.microbatches =
          std::max<int32_t>(2, int32_t(300'000 / perMicrobatch) & ~1);
      Schedule plain = cantFail(generateSchedule(strategy, shape));
      const double estimate =
          double(estimatePlanMemory(strategy, countPlanInstructions(plain)));
      estimateRow(
          llvm::formatv("generate --emit json {0}, pp {1} x vpp {2} "
                        "x M {3}",
                        strategyName(strategy), shape.pp, shape.vpp,
                        shape.microbatches)
              .str(),
          estimate,
          peakGrowth(binDir, generate(strategy, shape, "json"), floorMiB),
          outside);
      ++rows;
    }
  }
  // --emit mlir for 1f1b and the overlaps of dualpipe-v; --emit text and
  // --emit torch-csv for the strategies with the fewest (zb-h1, zb-v) and
  // the most (dualpipe-v) bytes per action; --emit torch-csv-comms for
  // those with the most (1f1b), fewest (zb-h2) and no (no-pp) transfers
  // per compute action.
  struct FormRow {
    llvm::StringRef emit;
    MemoryPath path;
    Strategy strategy;
    int32_t pp = 8;
  };
  for (const FormRow &form :
       {FormRow{"mlir", MemoryPath::EmitMlir, Strategy::OneFOneB},
        FormRow{"mlir", MemoryPath::EmitMlir, Strategy::DualPipeV},
        FormRow{"text", MemoryPath::EmitText, Strategy::OneFOneB},
        FormRow{"text", MemoryPath::EmitText, Strategy::ZBH1},
        FormRow{"text", MemoryPath::EmitText, Strategy::DualPipeV},
        FormRow{"torch-csv", MemoryPath::EmitTorchCsv, Strategy::OneFOneB},
        FormRow{"torch-csv", MemoryPath::EmitTorchCsv, Strategy::ZBV},
        FormRow{"torch-csv", MemoryPath::EmitTorchCsv, Strategy::DualPipeV},
        FormRow{"torch-csv-comms", MemoryPath::EmitTorchCsvComms,
                Strategy::OneFOneB},
        FormRow{"torch-csv-comms", MemoryPath::EmitTorchCsvComms,
                Strategy::ZBH2},
        FormRow{"torch-csv-comms", MemoryPath::EmitTorchCsvComms,
                Strategy::NoPipeline, 1}}) {
    PipelineShape shape;
    shape.pp = form.pp;
    shape.vpp = defaultVpp(form.strategy);
    // 2 million actions for 1f1b at pp 8, and as many for no-pp.
    shape.microbatches = 1'000'000 / form.pp;
    RequestSize size = computeRequestSize(form.strategy, shape);
    // The transfers are counted on the generated schedule, as schedc
    // counts them.
    if (form.path == MemoryPath::EmitTorchCsvComms)
      size.transfers = childCount([&] {
        return countPlanInstructions(
                   cantFail(generateSchedule(form.strategy, shape)))
            .transfers;
      });
    const double estimate = double(estimateMemory(form.path, size));
    // The floor of this form: --emit torch-csv loads no Z3 and starts at
    // about 7 MiB, not --emit json's 27 (which made its estimate look twice
    // the growth).
    PipelineShape smallShape = shape;
    smallShape.microbatches = 2 * shape.pp;
    std::optional<ChildRun> formFloor =
        runChild(binDir, generate(form.strategy, smallShape, form.emit));
    estimateRow(
        llvm::formatv("generate --emit {0} {1}, pp {2} x vpp {3} x M {4}",
                      form.emit, strategyName(form.strategy), shape.pp,
                      shape.vpp, shape.microbatches)
            .str(),
        estimate,
        formFloor
            ? peakGrowth(binDir, generate(form.strategy, shape, form.emit),
                         formFloor->peakMiB)
            : -1,
        outside);
    ++rows;
  }
  llvm::outs() << llvm::formatv("\n{0} of {1} estimates within 1.5x of the "
                                "measured peak (process floor {2:F0} MiB).\n",
                                rows - outside, rows, floorMiB);
  // The planner makes no estimate: it caps each candidate's schedule at
  // 2^21 compute actions and its order cache at 2^22 (docs/limits.md), and
  // promises the default budget at the largest batch descriptions accept.
  std::optional<ChildRun> plan =
      runChild(binDir, {schedc, "plan", "--model", "llama3-8b", "--cluster",
                        "h100-ib", "--devices", "64", "--global-batch-tokens",
                        "1099511627776", "--top", "1"});
  if (plan)
    llvm::outs() << llvm::formatv(
        "schedc plan at 2^40 tokens (llama3-8b, 64 devices): {0:F2} s, peak "
        "{1:F0} MiB, exit {2}; {3} the budget of {4}.\n",
        plan->seconds, plan->peakMiB, plan->status,
        plan->peakMiB * 1024 * 1024 <= double(kDefaultMemoryBudget)
            ? "within"
            : "NOT within",
        formatMemorySize(kDefaultMemoryBudget));
}

/// A JSON plan of one rank with `groups` process groups, and as many
/// collective declarations when `declarations` is set (the last of them
/// wrong, so that reading stops there rather than in the verifier).
std::string manyGroupsPlan(int64_t groups, bool declarations) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << R"({"format": "schedc-runtime-plan", "version": 1, "stages": 1, )"
     << R"("microbatches": 1, "groups": [)";
  for (int64_t g = 0; g < groups; ++g)
    os << (g ? ", " : "") << R"({"name": "g)" << g << R"(", "members": [[0]]})";
  os << "]";
  if (declarations) {
    os << R"(, "collectives": [)";
    for (int64_t g = 0; g < groups; ++g)
      os << (g ? ", " : "") << R"({"kind": ")"
         << (g + 1 < groups ? "all_reduce" : "bogus") << R"(", "group": "g)"
         << g << R"(", "bytes": 1, "when": "step"})";
    os << "]";
  }
  os << R"(, "ranks": [{"rank": 0, "instructions": [)"
     << R"({"op": "forward", "stage": 0, "microbatch": 0}, )"
     << R"({"op": "backward", "stage": 0, "microbatch": 0}, )"
     << R"({"op": "optimizer_step"}]}]})";
  return text;
}

/// The JSON plan reader's memory against its document: each element of the
/// root's arrays is parsed on its own (lib/Import/PlanArrays.h), so the
/// peak follows the bytes of the plan, not llvm::json's 5.5 KB per object
/// (the 600,000 objects and arrays of 200,000 groups would have taken
/// 3.3 GiB; the reader refused them).
void benchJsonReader(llvm::StringRef binDir) {
  llvm::outs() << "\n## The JSON plan reader against its document (child "
                  "processes)\n\n"
               << "| plan | MB | command | exit | peak growth (MiB) | bytes "
                  "per document byte |\n|---|---|---|---|---|---|\n";
  const std::string schedc = (binDir + "/schedc").str();
  std::optional<ChildRun> floorRun =
      runChild(binDir, {schedc, "verify", "--format", "json", "/dev/null"});
  const double floorMiB = floorRun ? floorRun->peakMiB : 0;
  std::string instructions;
  {
    llvm::raw_string_ostream os(instructions);
    os << R"({"format": "schedc-runtime-plan", "version": 1, "stages": 1, )"
       << R"("microbatches": 200000, "ranks": [{"rank": 0, "instructions": [)";
    for (const char *op : {"forward", "backward"})
      for (int m = 0; m < 200'000; ++m)
        os << (m || llvm::StringRef(op) == "backward" ? ", " : "")
           << R"({"op": ")" << op << R"(", "stage": 0, "microbatch": )" << m
           << "}";
    os << R"(, {"op": "optimizer_step"}]}]})";
  }
  const std::pair<std::string, std::string> plans[] = {
      {"200,000 groups", manyGroupsPlan(200'000, false)},
      {"200,000 groups and declarations (the last wrong)",
       manyGroupsPlan(200'000, true)},
      {"400,000 instructions", instructions},
  };
  for (const auto &[label, text] : plans) {
    const std::string file = temporaryFile("json", text);
    std::optional<ChildRun> run = runChild(binDir, {schedc, "verify", file});
    llvm::sys::fs::remove(file);
    if (!run)
      continue;
    const double growth = (run->peakMiB - floorMiB) * 1024 * 1024;
    llvm::outs() << llvm::formatv(
        "| {0} | {1:F1} | schedc verify | {2} | {3:F1} | {4:F1} |\n", label,
        text.size() / 1e6, run->status, growth / (1 << 20),
        growth / double(text.size()));
  }
}

} // namespace

/// `schedc-bench memory [ACTIONS]` runs the memory table only (at about
/// ACTIONS actions per strategy, 2 million by default), `schedc-bench cli` the
/// CLI table only, `schedc-bench scaling` the scaling table only,
/// `schedc-bench estimates` the estimates against measured peaks only.
int main(int argc, char **argv) {
  const llvm::StringRef only = argc > 1 ? argv[1] : "";
  // schedc and sched-translate sit next to this binary.
  const std::string self = llvm::sys::fs::getMainExecutable(
      argc > 0 ? argv[0] : "", reinterpret_cast<void *>(&median));
  llvm::outs() << "# schedc benchmarks\n";
  if (only == "cli") {
    benchCli(llvm::sys::path::parent_path(self));
    return 0;
  }
  if (only == "scaling") {
    benchScaling(llvm::sys::path::parent_path(self));
    return 0;
  }
  if (only == "estimates") {
    benchEstimates(llvm::sys::path::parent_path(self));
    benchJsonReader(llvm::sys::path::parent_path(self));
    return 0;
  }
  // Before this process starts threads: the memory bench forks.
  int64_t target = 2'000'000;
  if (only == "memory" && argc > 2 &&
      (llvm::StringRef(argv[2]).getAsInteger(10, target) || target < 1000)) {
    llvm::errs() << "schedc-bench: memory ACTIONS: a count of at least 1000\n";
    return 2;
  }
  benchMemory(target);
  if (only == "memory")
    return 0;
  MLIRContext context;
  context.getOrLoadDialect<SchedDialect>();
  benchGeneration(context);
  benchVerify(context);
  benchCli(llvm::sys::path::parent_path(self));
  benchScaling(llvm::sys::path::parent_path(self));
  benchEstimates(llvm::sys::path::parent_path(self));
  benchJsonReader(llvm::sys::path::parent_path(self));
  return 0;
}
