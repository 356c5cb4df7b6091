//===- Api.cpp - schedc for callers that do not build IR ------------------===//
//
// Glue only: every answer comes from lib/Generate, lib/Lower, lib/Verify,
// lib/Simulate and the CSV reader and writer, as the schedc CLI gets it.
//
//===----------------------------------------------------------------------===//

#include "lib/Api/Api.h"
#include "lib/CostModel/CostModel.h"
#include "lib/Export/TorchCsv.h"
#include "lib/Generate/PlanMemory.h"
#include "lib/Generate/Strategy.h"
#include "lib/Import/JsonPlan.h"
#include "lib/Import/TorchCsv.h"
#include "lib/Limits/ResourceLimits.h"
#include "lib/Lower/InsertTransfers.h"
#include "lib/CostModel/SoftwareStack.h"
#include "lib/PlanWriter/PlanWriter.h"
#include "lib/Planner/Planner.h"
#include "dialects/Sched/SchedDialect.h"
#include "lib/Schedule/CostSpec.h"
#include "lib/Simulate/Simulate.h"
#include "lib/Verify/Verifier.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <limits>
#include <map>

using namespace sched;
using namespace sched::api;

static llvm::Error failWith(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Generating
//===----------------------------------------------------------------------===//

/// Checks that a count is at least 1 and fits the generators' int32.
static llvm::Error checkCount(llvm::StringRef name, int64_t value) {
  if (value < 1)
    return failWith(name + " must be at least 1, got " + llvm::Twine(value));
  if (value > std::numeric_limits<int32_t>::max())
    return failWith(name + " must be at most 2147483647, got " +
                    llvm::Twine(value));
  return llvm::Error::success();
}

llvm::Expected<ScheduleSource> api::generate(const PipelineRequest &request) {
  std::optional<Strategy> strategy = parseStrategy(request.strategy);
  if (!strategy)
    return failWith("unknown strategy '" + request.strategy +
                    "'; expected one of: " + strategyNames());
  if (llvm::Error error = checkCount("pp", request.pp))
    return std::move(error);
  if (llvm::Error error = checkCount("microbatches", request.microbatches))
    return std::move(error);
  const int64_t vpp = request.vpp ? request.vpp : defaultVpp(*strategy);
  if (llvm::Error error = checkCount("vpp", vpp))
    return std::move(error);
  if (request.pp * vpp > std::numeric_limits<int32_t>::max())
    return failWith("pp * vpp must be at most 2147483647");
  PipelineShape shape;
  shape.pp = static_cast<int32_t>(request.pp);
  shape.vpp = static_cast<int32_t>(vpp);
  shape.microbatches = static_cast<int32_t>(request.microbatches);
  if (!request.cost.empty()) {
    llvm::Expected<CostSpec> spec = parseCostSpec(request.cost);
    if (!spec)
      return spec.takeError();
    if (spec->comm)
      return failWith("cost comm is a simulate option: a generated pipeline "
                      "declares stage times only");
    StageCost stage;
    stage.forward = spec->forward;
    stage.backwardInput = spec->backwardInput;
    stage.backwardWeight = spec->backwardWeight;
    shape.stageCosts.assign(shape.numStages(), stage);
  }
  if (llvm::Error error = checkPipelineShape(*strategy, shape))
    return std::move(error);
  // With transfers: the compute part first, then, counted on the generated
  // schedule, its sends and receives.
  const MemoryPath path = request.transfers ? MemoryPath::EmitTorchCsvComms
                                            : MemoryPath::EmitTorchCsv;
  RequestSize size = computeRequestSize(*strategy, shape);
  const std::string what = "generating " + request.strategy;
  const llvm::StringRef raise = "smaller pp, vpp or microbatches";
  if (llvm::Error error =
          checkMemoryBudget(path, size, kDefaultMemoryBudget, what, raise))
    return std::move(error);
  llvm::Expected<Schedule> compute = generateSchedule(*strategy, shape);
  if (!compute)
    return compute.takeError();
  ScheduleSource source;
  source.name = request.strategy;
  if (!request.transfers) {
    source.schedule = std::move(*compute);
    return source;
  }
  size.transfers = countPlanInstructions(*compute).transfers;
  if (llvm::Error error =
          checkMemoryBudget(path, size, kDefaultMemoryBudget, what, raise))
    return std::move(error);
  llvm::Expected<Schedule> lowered = insertTransfers(*compute);
  if (!lowered)
    return lowered.takeError();
  source.schedule = std::move(*lowered);
  return source;
}

//===----------------------------------------------------------------------===//
// Reading PyTorch's forms
//===----------------------------------------------------------------------===//

/// The 0-based cell of the 1-based character `column` of `line`.
static int64_t cellOfColumn(llvm::StringRef line, uint32_t column) {
  return static_cast<int64_t>(
      line.take_front(column > 0 ? column - 1 : 0).count(','));
}

/// The cells of the 1-based characters `columns` of `line`, counting the
/// commas once over the row (column by column it was quadratic in the
/// cells: 18.6 s for a row of 180,000). The reader gives the columns of a
/// row in order; one that goes back counts again from the start.
static std::vector<int64_t> cellsOfColumns(llvm::StringRef line,
                                           llvm::ArrayRef<uint32_t> columns) {
  std::vector<int64_t> cells;
  cells.reserve(columns.size());
  size_t scanned = 0;
  int64_t commas = 0;
  for (uint32_t column : columns) {
    const size_t end =
        std::min<size_t>(column > 0 ? column - 1 : 0, line.size());
    if (end < scanned) {
      scanned = 0;
      commas = 0;
    }
    commas += static_cast<int64_t>(line.slice(scanned, end).count(','));
    scanned = end;
    cells.push_back(commas);
  }
  return cells;
}

/// Where a diagnostic of the CSV reader points: "name:line:column" for a
/// CSV, "rank R, step K" for pipeline_order (line R + 1, cell K).
static std::string placeOf(mlir::Location location,
                           llvm::ArrayRef<llvm::StringRef> lines,
                           bool asPipelineOrder) {
  auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(location);
  if (!loc)
    return "";
  if (!asPipelineOrder)
    return (loc.getFilename().getValue() + ":" + llvm::Twine(loc.getLine()) +
            ":" + llvm::Twine(loc.getColumn()) + ": ")
        .str();
  const unsigned line = loc.getLine();
  if (line == 0 || line > lines.size())
    return "";
  return ("rank " + llvm::Twine(line - 1) + ", step " +
          llvm::Twine(cellOfColumn(lines[line - 1], loc.getColumn())) + ": ")
      .str();
}

namespace {
/// Text for one of MLIR's readers: its lines, a context whose diagnostics
/// are collected with their place (placeOf), and a source manager holding
/// a copy of it.
class CollectedInput {
public:
  CollectedInput(llvm::StringRef text, llvm::StringRef name,
                 bool asPipelineOrder)
      : handler(&context, [this, asPipelineOrder](mlir::Diagnostic &diag) {
          if (!errors.empty())
            errors += "\n";
          errors += placeOf(diag.getLocation(), lines, asPipelineOrder);
          errors += diag.str();
          return mlir::success();
        }) {
    text.split(lines, '\n');
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
  }

  mlir::MLIRContext context;
  llvm::SmallVector<llvm::StringRef> lines;
  /// The diagnostics, one per line.
  std::string errors;
  llvm::SourceMgr sourceMgr;

private:
  mlir::ScopedDiagnosticHandler handler;
};
} // namespace

/// Reads CSV `text`; `asPipelineOrder` words diagnostics by rank and step.
static llvm::Expected<ScheduleSource>
readCsv(llvm::StringRef text, std::optional<int64_t> stages,
        std::optional<int64_t> microbatches, llvm::StringRef name,
        bool asPipelineOrder) {
  CollectedInput input(text, name, asPipelineOrder);
  TorchCsvOptions options;
  options.stages = stages;
  options.microbatches = microbatches;
  options.name = name.str();
  mlir::FailureOr<TorchCsvSchedule> read =
      readTorchCsv(input.sourceMgr, &input.context, options);
  if (mlir::failed(read))
    return failWith(input.errors.empty() ? "malformed schedule" : input.errors);
  ScheduleSource source;
  source.name = name.str();
  source.schedule = std::move(read->schedule);
  for (size_t r = 0; r < read->columns.size(); ++r) {
    llvm::StringRef line = r < input.lines.size() ? input.lines[r] : "";
    source.steps.push_back(cellsOfColumns(line, read->columns[r]));
  }
  return source;
}

llvm::Expected<ScheduleSource>
api::readTorchCsvText(llvm::StringRef text, std::optional<int64_t> stages,
                      std::optional<int64_t> microbatches,
                      llvm::StringRef name) {
  return readCsv(text, stages, microbatches, name, /*asPipelineOrder=*/false);
}

llvm::Expected<ScheduleSource> api::readJsonPlanText(llvm::StringRef text,
                                                     llvm::StringRef name) {
  CollectedInput input(text, name, /*asPipelineOrder=*/false);
  mlir::FailureOr<JsonPlanInput> read =
      readJsonPlan(input.sourceMgr, &input.context);
  if (mlir::failed(read))
    return failWith(input.errors.empty() ? "malformed plan" : input.errors);
  ScheduleSource source;
  source.name = read->plan.name.empty() ? name.str() : read->plan.name;
  source.schedule = std::move(read->plan.schedule);
  source.memoryLimit = read->plan.verdict.memoryLimit;
  source.memoryLimitText = read->plan.verdict.memoryLimitText;
  return source;
}

llvm::Expected<ScheduleSource>
api::readPipelineOrder(const std::vector<std::vector<std::string>> &order,
                       std::optional<int64_t> stages,
                       std::optional<int64_t> microbatches) {
  std::string text;
  for (size_t r = 0; r < order.size(); ++r) {
    const std::vector<std::string> &row = order[r];
    for (size_t k = 0; k < row.size(); ++k) {
      if (row[k].find_first_of(",\n\r") != std::string::npos)
        return failWith("rank " + llvm::Twine(r) + ", step " + llvm::Twine(k) +
                        ": action '" + row[k] +
                        "' holds a comma or a line break");
      if (k)
        text += ",";
      text += row[k];
    }
    text += "\n";
  }
  return readCsv(text, stages, microbatches, "pipeline_order",
                 /*asPipelineOrder=*/true);
}

//===----------------------------------------------------------------------===//
// Checking and simulating
//===----------------------------------------------------------------------===//

/// The cell of action `index` of rank `rank`, or -1.
static int64_t stepOf(const ScheduleSource &source, int32_t rank,
                      int32_t index) {
  if (rank < 0 || index < 0 || static_cast<size_t>(rank) >= source.steps.size())
    return -1;
  const std::vector<int64_t> &steps = source.steps[rank];
  return static_cast<size_t>(index) < steps.size() ? steps[index] : -1;
}

/// The action `ref` names, as in diagnostics, or "".
static std::string describe(const Schedule &schedule, ActionRef ref) {
  if (ref.rank < 0 || ref.index < 0 ||
      static_cast<size_t>(ref.rank) >= schedule.ranks.size())
    return "";
  const RankProgram &rank = schedule.ranks[ref.rank];
  if (static_cast<size_t>(ref.index) >= rank.actions.size())
    return "";
  return describeAction(schedule, rank.actions[ref.index]);
}

static Finding toFinding(const ScheduleSource &source, const Violation &v) {
  const Schedule &schedule = source.schedule;
  Finding finding;
  finding.kind = violationKindName(v.kind);
  finding.message = v.message;
  if (v.at.rank >= 0 && static_cast<size_t>(v.at.rank) < schedule.ranks.size())
    finding.rank = schedule.ranks[v.at.rank].id;
  finding.position = v.at.rank >= 0 ? v.at.index : -1;
  finding.step = stepOf(source, v.at.rank, v.at.index);
  finding.action = describe(schedule, v.at);
  for (const ViolationNote &note : v.notes)
    finding.notes.push_back(note.message);
  return finding;
}

/// Applies `cost` to a copy of `schedule` and simulates it.
static llvm::Expected<Metrics> simulateWith(const Schedule &schedule,
                                            llvm::StringRef cost) {
  Schedule costed = schedule;
  SimulationOptions options;
  if (!cost.empty()) {
    llvm::Expected<CostSpec> spec = parseCostSpec(cost);
    if (!spec)
      return spec.takeError();
    applyCostSpec(costed, *spec);
    options.comm = spec->comm.value_or(0);
    options.declaredTransfers = !spec->comm;
  }
  llvm::Expected<Timeline> timeline = simulate(costed, options);
  if (!timeline)
    return timeline.takeError();
  Metrics metrics;
  metrics.makespan = timeline->makespan;
  metrics.bubbleRatio = timeline->bubbleRatio;
  metrics.peakActivations = timeline->peakActivations;
  return metrics;
}

llvm::Expected<Metrics> api::simulate(const ScheduleSource &source,
                                      llvm::StringRef cost) {
  return simulateWith(source.schedule, cost);
}

llvm::Expected<Report> api::check(const ScheduleSource &source,
                                  const CheckOptions &options) {
  VerifyOptions verify;
  llvm::StringRef p2p = options.p2p;
  if (p2p.empty())
    p2p = source.steps.empty() ? "rendezvous" : "eager";
  if (p2p == "eager")
    verify.p2p = P2PSemantics::Eager;
  else if (p2p == "rendezvous")
    verify.p2p = P2PSemantics::Rendezvous;
  else
    return failWith("unknown p2p semantics '" + p2p +
                    "'; expected eager or rendezvous");
  // A plan's recorded limit, unless the caller gives one (as schedc
  // verify's --memory-limit overrides it).
  const bool given = options.memoryLimit || !options.memoryLimitText.empty();
  const std::optional<double> &value =
      given ? options.memoryLimit : source.memoryLimit;
  const std::string &text =
      given ? options.memoryLimitText : source.memoryLimitText;
  if (value || !text.empty()) {
    llvm::Expected<MemoryLimit> limit = text.empty()
                                            ? MemoryLimit::fromDouble(*value)
                                            : MemoryLimit::parse(text);
    if (!limit)
      return failWith("memory limit " + llvm::toString(limit.takeError()));
    verify.memoryLimit = *limit;
  }
  if (!(options.timeoutSeconds >= 0 && std::isfinite(options.timeoutSeconds)))
    return failWith("timeout must be a finite number of seconds >= 0");
  verify.timeoutSeconds = options.timeoutSeconds;
  if (!options.cost.empty())
    if (llvm::Expected<CostSpec> spec = parseCostSpec(options.cost); !spec)
      return spec.takeError();

  VerifyResult result = verifySchedule(source.schedule, verify);
  Report report;
  report.verdict = verdictName(result.verdict);
  report.unknownReason = result.unknownReason;
  report.peakMemory = result.peakMemory;
  report.memoryUnit = result.memoryInBytes ? "bytes" : "activations";
  for (const Violation &violation : result.violations)
    report.violations.push_back(toFinding(source, violation));
  llvm::Expected<Metrics> metrics = simulateWith(source.schedule, options.cost);
  if (metrics)
    report.metrics = std::move(*metrics);
  else
    report.simulationError = llvm::toString(metrics.takeError());
  return report;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

llvm::Expected<std::string> api::toTorchCsv(const ScheduleSource &source,
                                            bool comms) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (llvm::Error error = writeTorchCsv(os, source.schedule,
                                        comms ? TorchCsvContent::ComputeAndComms
                                              : TorchCsvContent::Compute))
    return std::move(error);
  return text;
}

llvm::Expected<std::vector<std::vector<std::string>>>
api::toPipelineOrder(const ScheduleSource &source, bool comms) {
  llvm::Expected<std::string> csv = toTorchCsv(source, comms);
  if (!csv)
    return csv.takeError();
  std::vector<std::vector<std::string>> order;
  llvm::StringRef rest = *csv;
  while (!rest.empty()) {
    auto [line, next] = rest.split('\n');
    rest = next;
    std::vector<std::string> &cells = order.emplace_back();
    if (line.empty())
      continue;
    llvm::SmallVector<llvm::StringRef> parts;
    line.split(parts, ',');
    for (llvm::StringRef part : parts)
      cells.push_back(part.str());
  }
  return order;
}

llvm::Expected<PipelineResult> api::runPipeline(const PipelineRequest &request,
                                                const CheckOptions &options) {
  llvm::Expected<ScheduleSource> source = generate(request);
  if (!source)
    return source.takeError();
  llvm::Expected<Report> report = check(*source, options);
  if (!report)
    return report.takeError();
  PipelineResult result{std::move(*source), std::move(*report), "", ""};
  llvm::Expected<std::string> plan =
      toTorchCsv(result.schedule, request.transfers);
  if (plan)
    result.plan = std::move(*plan);
  else
    result.planError = llvm::toString(plan.takeError());
  return result;
}

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

/// Whether `text` is a JSON description rather than a name or a path.
static bool isJsonText(llvm::StringRef text) {
  return text.ltrim().starts_with("{");
}

static PlannedCandidate toPlanned(const Candidate &c) {
  PlannedCandidate p;
  p.dp = c.layout.dp;
  p.tp = c.layout.tp;
  p.pp = c.layout.pp;
  p.vpp = c.layout.vpp;
  p.ep = c.layout.ep;
  p.cp = c.layout.cp;
  p.zero = c.layout.zero;
  p.recompute = recomputeName(c.layout.recompute);
  p.microbatchSize = c.layout.microbatchSize;
  p.microbatches = c.layout.microbatches;
  p.strategy = c.scheduleName().str();
  p.verdict = c.verdict;
  p.stepTime = c.stepTime;
  p.mfu = c.mfu;
  p.bubbleRatio = c.bubbleRatio;
  p.tokensPerSecondPerDevice = c.tokensPerSecondPerDevice;
  p.peakMemory = c.memory.peak;
  p.memoryLimit = c.memory.limit;
  return p;
}

/// The training setting of `request` for `model`, as schedc plan reads it.
static llvm::Expected<TrainingSpec> trainingOf(const PlanRequest &request,
                                               const ModelSpec &model) {
  if (request.devices < 1 || request.devices > (int64_t(1) << 24))
    return failWith("devices must be in [1, 2^24], got " +
                    llvm::Twine(request.devices));
  if (request.globalBatchTokens && request.globalBatch)
    return failWith("give global_batch_tokens or global_batch, not both");
  if (request.globalBatchTokens &&
      (*request.globalBatchTokens < 1 ||
       *request.globalBatchTokens > (int64_t(1) << 40)))
    return failWith("global_batch_tokens must be in [1, 2^40]");
  if (request.globalBatch &&
      (*request.globalBatch < 1 || *request.globalBatch > (int64_t(1) << 30)))
    return failWith("global_batch must be in [1, 2^30]");
  if (request.seqLen &&
      (*request.seqLen < 1 || *request.seqLen > (int64_t(1) << 24)))
    return failWith("seq_len must be in [1, 2^24]");
  std::optional<Precision> precision = parsePrecision(request.precision);
  if (!precision)
    return failWith("precision must be bf16, fp8 or fp4, got '" +
                    request.precision + "'");
  TrainingSpec training;
  training.devices = request.devices;
  training.seqLen = request.seqLen     ? *request.seqLen
                    : model.seqLen > 0 ? model.seqLen
                                       : 4096;
  training.precision = *precision;
  if (request.globalBatchTokens)
    training.globalBatchTokens = *request.globalBatchTokens;
  else if (request.globalBatch)
    training.globalBatchTokens = *request.globalBatch * training.seqLen;
  else if (model.globalBatchTokens > 0)
    training.globalBatchTokens = model.globalBatchTokens;
  else
    return failWith("the model names no global batch: give "
                    "global_batch_tokens or global_batch");
  return training;
}

/// The request's layout, ZeRO, recomputation, microbatch size and stack,
/// as `schedc plan`'s flags of the same names set them.
static llvm::Error applyPlanRequest(const PlanRequest &request,
                                    TrainingSpec &training,
                                    PlanOptions &options) {
  if (request.zero && (*request.zero < 0 || *request.zero > 3))
    return failWith("zero must be 0, 1, 2 or 3, got " +
                    llvm::Twine(*request.zero));
  options.zero = request.zero;
  if (request.microbatchSize && *request.microbatchSize < 1)
    return failWith("microbatch_size must be at least 1");
  options.microbatchSize = request.microbatchSize;
  if (!request.recompute.empty()) {
    llvm::Expected<Recompute> recompute = parseRecompute(request.recompute);
    if (!recompute)
      return recompute.takeError();
    options.recompute = *recompute;
  }
  if (!request.layout.empty()) {
    llvm::Expected<Layout> layout = parseLayout(request.layout);
    if (!layout)
      return layout.takeError();
    if (options.recompute)
      layout->recompute = *options.recompute;
    options.layout = *layout;
  }
  if (!request.stack.empty()) {
    llvm::Expected<SoftwareStack> stack = loadSoftwareStack(request.stack);
    if (!stack)
      return stack.takeError();
    stack->apply(training);
    if (options.strategy &&
        !training.runsSchedule(strategyName(*options.strategy)))
      return failWith("stack " + stack->name + " does not run " +
                      strategyName(*options.strategy));
  }
  return llvm::Error::success();
}

/// Writes `chosen` as `schedc plan --write-plan` does: PREFIX.mlir, .json,
/// .svg, .trace, .csv as `request.emit` lists them.
static llvm::Error writeRecommended(const CostModel &costs,
                                    const Candidate &chosen,
                                    const PlanRequest &request,
                                    PlanReport &report) {
  static constexpr std::pair<llvm::StringLiteral, llvm::StringLiteral>
      kForms[] = {{"mlir", ".mlir"},   {"json", ".json"},
                  {"svg", ".svg"},     {"trace", ".trace"},
                  {"torch-csv", ".csv"}};
  llvm::SmallVector<llvm::StringRef> forms;
  llvm::StringRef(request.emit).split(forms, ',', -1, /*KeepEmpty=*/false);
  std::map<std::string, std::unique_ptr<llvm::raw_fd_ostream>> files;
  for (llvm::StringRef form : forms) {
    const auto *known = llvm::find_if(
        kForms, [&](const auto &entry) { return entry.first == form.trim(); });
    if (known == std::end(kForms))
      return failWith("emit: unknown form '" + form.trim() +
                      "'; expected mlir, json, svg, trace or torch-csv");
    const std::string path = request.writePlan + known->second.str();
    std::error_code error;
    auto file = std::make_unique<llvm::raw_fd_ostream>(path, error,
                                                       llvm::sys::fs::OF_None);
    if (error)
      return failWith("cannot write '" + path + "': " + error.message());
    files[known->first.str()] = std::move(file);
  }
  auto stream = [&](llvm::StringRef form) -> llvm::raw_ostream * {
    auto it = files.find(form.str());
    return it == files.end() ? nullptr : it->second.get();
  };
  mlir::MLIRContext context;
  context.getOrLoadDialect<SchedDialect>();
  // The passes' diagnostics become the error's text.
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    diagnostics += (diagnostics.empty() ? "" : "; ") + d.str();
    return mlir::success();
  });
  PlanOutputs outputs{stream("mlir"),  stream("json"),      stream("svg"),
                      stream("trace"), stream("torch-csv"), &report.refused};
  if (llvm::Error error = writePlan(context, costs, chosen, outputs)) {
    const std::string why = llvm::toString(std::move(error));
    return failWith("write_plan: " + (diagnostics.empty() ? why : diagnostics));
  }
  for (const auto &[form, suffix] : kForms) {
    auto it = files.find(form.str());
    if (it == files.end())
      continue;
    it->second->close();
    if (it->second->has_error())
      return failWith("cannot write '" + request.writePlan + suffix.str() +
                      "'");
    const bool refused = llvm::any_of(report.refused, [&](const std::string &r) {
      return llvm::StringRef(r).starts_with("--emit " + form.str());
    });
    if (!refused)
      report.written.push_back(request.writePlan + suffix.str());
  }
  return llvm::Error::success();
}

llvm::Expected<PlanReport> api::plan(const PlanRequest &request) {
  llvm::Expected<ModelSpec> model = isJsonText(request.model)
                                        ? parseModelSpec(request.model)
                                        : loadModelSpec(request.model);
  if (!model)
    return model.takeError();
  llvm::Expected<ClusterSpec> cluster = isJsonText(request.cluster)
                                            ? parseClusterSpec(request.cluster)
                                            : loadClusterSpec(request.cluster);
  if (!cluster)
    return cluster.takeError();
  llvm::Expected<TrainingSpec> training = trainingOf(request, *model);
  if (!training)
    return training.takeError();
  if (request.top < 1)
    return failWith("top must be at least 1");
  PlanOptions options;
  options.top = request.top;
  if (!request.strategy.empty()) {
    std::optional<Strategy> strategy = parseStrategy(request.strategy);
    if (!strategy)
      return failWith("unknown strategy '" + request.strategy +
                      "'; expected one of: " + strategyNames());
    options.strategy = *strategy;
  }
  if (llvm::Error error = applyPlanRequest(request, *training, options))
    return std::move(error);
  CostModel costs(*model, *cluster, *training);
  llvm::Expected<PlanResult> result = sched::plan(costs, options);
  if (!result)
    return result.takeError();
  PlanReport report;
  if (!request.writePlan.empty() && result->recommended >= 0)
    if (llvm::Error error =
            writeRecommended(costs, result->ranked[result->recommended],
                             request, report))
      return std::move(error);
  for (const Candidate &candidate : result->ranked)
    report.ranked.push_back(toPlanned(candidate));
  report.recommended = result->recommended;
  report.reason = result->reason;
  if (result->bestWithoutPipeline)
    report.bestWithoutPipeline = toPlanned(*result->bestWithoutPipeline);
  if (result->bestWithPipeline)
    report.bestWithPipeline = toPlanned(*result->bestWithPipeline);
  report.considered = static_cast<int64_t>(result->considered);
  return report;
}
