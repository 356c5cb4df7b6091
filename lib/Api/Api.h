//===- Api.h - schedc for callers that do not build IR ----------*- C++ -*-===//
//
// A small facade over the generators, the transfer insertion, the verifier
// and the simulator: describe a pipeline (or hand over a PyTorch CSV), get
// back the verdict, the violations, the metrics and the runtime plan. No
// MLIR context, pass manager or IR is needed by the caller; the Python
// module `schedc` is a thin binding of this header.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_API_API_H
#define LIB_API_API_H

#include "lib/Schedule/Schedule.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace sched::api {

/// A pipeline to generate: the flags of `schedc generate`.
struct PipelineRequest {
  /// A strategy name (1f1b, gpipe, zb-h1, interleaved-1f1b, ...).
  std::string strategy = "1f1b";
  int64_t pp = 1;
  /// Stages per rank; 0 takes the strategy's default (2 for V shapes).
  int64_t vpp = 0;
  int64_t microbatches = 1;
  /// Per-stage times, the same for every stage (`f=1,b=2`); empty: unit.
  std::string cost;
  /// Add the sends and receives (a runnable plan); false: compute only.
  bool transfers = true;
};

/// How a schedule is checked.
struct CheckOptions {
  /// "eager" (PyTorch's runtime) or "rendezvous" (NCCL); empty: eager for
  /// a schedule read from a CSV or pipeline_order (PyTorch runs those),
  /// rendezvous for a generated one (the default of plans we emit).
  std::string p2p;
  /// Device memory, in activation units when stages declare no sizes.
  std::optional<double> memoryLimit;
  /// The same limit as a decimal, read exactly as `schedc verify
  /// --memory-limit` reads it (2^53 + 1, 7.99999999999999999); it takes
  /// precedence over `memoryLimit` when set.
  std::string memoryLimitText;
  /// Solver budget in seconds (0: none); running out gives "unknown".
  double timeoutSeconds = 0;
  /// Stage times for the simulation (`f=1,b=2`, `comm=T`); empty: keep.
  std::string cost;
};

/// A schedule together with where its actions came from. A schedule read
/// from a CSV, or from PyTorch's `pipeline_order`, remembers the cell of
/// every action, so that violations name the time step the caller wrote.
struct ScheduleSource {
  Schedule schedule;
  /// Per rank and action: the 0-based cell (time step) of the action in
  /// its row; empty when the schedule was generated.
  std::vector<std::vector<int64_t>> steps;
  /// The name the schedule goes by in messages.
  std::string name = "schedule";
  /// A JSON runtime plan's recorded memory limit (its verdict's
  /// `memory_limit`, and its text as written), which check() applies
  /// unless its options give one; none otherwise.
  std::optional<double> memoryLimit;
  std::string memoryLimitText;
};

/// One violation of the verifier's contract (docs/verifier.md).
struct Finding {
  /// missing, duplicate, placement, dependency, transfer, deadlock,
  /// collective or memory.
  std::string kind;
  /// Rank id, or -1 for the schedule as a whole.
  int64_t rank = -1;
  /// Index of the action in the rank's program, or -1 for the whole rank.
  int64_t position = -1;
  /// The cell (time step) of the action in a CSV row or pipeline_order
  /// list, or -1 when the schedule was not read from one.
  int64_t step = -1;
  /// The action, as in diagnostics: "F(stage 1, mb 3)".
  std::string action;
  std::string message;
  /// The why: the verifier's notes (the cycle of waits of a deadlock, the
  /// live set at a memory peak), one message each.
  std::vector<std::string> notes;
};

/// What the list simulation measured (the remark of sched-simulate).
struct Metrics {
  double makespan = 0;
  std::vector<double> bubbleRatio;
  std::vector<double> peakActivations;
};

/// The outcome of check().
struct Report {
  /// verified, violated or unknown.
  std::string verdict;
  std::vector<Finding> violations;
  /// Why the verdict is unknown, when it is.
  std::string unknownReason;
  /// Per rank: the verifier's highest memory, in `memoryUnit`.
  std::vector<double> peakMemory;
  /// "bytes" or "activations".
  std::string memoryUnit;
  /// The simulation, when the schedule runs to the end; else why not.
  std::optional<Metrics> metrics;
  std::string simulationError;

  bool verified() const { return verdict == "verified"; }
};

/// Generates the schedule `request` describes. Fails, with the message
/// `schedc generate` gives, on an unknown strategy, a shape the strategy
/// does not take, a bad cost or a request over the working-memory budget.
llvm::Expected<ScheduleSource> generate(const PipelineRequest &request);

/// Reads a PyTorch pipelining CSV (compute only, or with SEND/RECV cells)
/// from `text`. Malformed text fails with every diagnostic as
/// "<name>:<line>:<column>: <message>" lines. Cells whose stage or
/// microbatch lies past `stages` / `microbatches` (when given) fail too.
llvm::Expected<ScheduleSource>
readTorchCsvText(llvm::StringRef text, std::optional<int64_t> stages = {},
                 std::optional<int64_t> microbatches = {},
                 llvm::StringRef name = "schedule.csv");

/// Reads a JSON runtime plan (docs/runtime-plan.md, versions 1 to 4) from
/// `text`, with whatever the format says beyond the CSV: streams and
/// events, communicators, p2p groups, shape exchanges, collectives.
/// Malformed text fails with the reader's diagnostics as
/// "<name>:<line>:<column>: <message>" lines.
llvm::Expected<ScheduleSource>
readJsonPlanText(llvm::StringRef text, llvm::StringRef name = "plan.json");

/// Reads PyTorch's in-memory form (`pipeline_order` of
/// torch.distributed.pipelining schedules): per rank, in rank order, the
/// action of each time step as its CSV text ("0F1", "1SEND_F0"), empty
/// for an idle step.
llvm::Expected<ScheduleSource>
readPipelineOrder(const std::vector<std::vector<std::string>> &order,
                  std::optional<int64_t> stages = {},
                  std::optional<int64_t> microbatches = {});

/// Verifies `source` under `options` and simulates it. Fails only on bad
/// options (an unknown p2p semantics, a negative limit, a bad cost).
llvm::Expected<Report> check(const ScheduleSource &source,
                             const CheckOptions &options);

/// Simulates `source`: fails, naming the stuck ranks, when it cannot run
/// to the end.
llvm::Expected<Metrics> simulate(const ScheduleSource &source,
                                 llvm::StringRef cost = "");

/// The PyTorch pipelining CSV of `source`: with a SEND/RECV cell per
/// transfer when `comms`, else compute only.
llvm::Expected<std::string> toTorchCsv(const ScheduleSource &source,
                                       bool comms);

/// Row k holds the cells of rank id k in program order (PyTorch's
/// pipeline_order form), as toTorchCsv writes them.
llvm::Expected<std::vector<std::vector<std::string>>>
toPipelineOrder(const ScheduleSource &source, bool comms);

/// A training run to plan: the inputs of `schedc plan` (docs/planner.md).
struct PlanRequest {
  /// A model preset (llama3-8b, deepseek-v3, ...), a .json file, or the
  /// JSON text of a description (starting with '{').
  std::string model;
  /// A cluster preset (h100-ib, gb200-nvl72, ...), a .json file, or JSON.
  std::string cluster;
  int64_t devices = 0;
  /// Tokens or sequences per step (one of them; default: the model's).
  std::optional<int64_t> globalBatchTokens;
  std::optional<int64_t> globalBatch;
  /// Sequence length (default: the model's, else 4096).
  std::optional<int64_t> seqLen;
  /// bf16, fp8 or fp4 (NVFP4).
  std::string precision = "bf16";
  /// Only this pipeline strategy, when set.
  std::string strategy;
  /// Candidates reported.
  int top = 10;
  /// Evaluate this layout instead of searching ("dp=64,tp=8,pp=16,vpp=2",
  /// as `schedc plan --layout`), when set.
  std::string layout;
  /// ZeRO stage, recomputation ("none", "selective", "full", "block:N",
  /// modules...) and sequences per microbatch; searched when unset.
  std::optional<int> zero;
  std::string recompute;
  std::optional<int64_t> microbatchSize;
  /// The software stack (megatron-core, torchtitan, ... or a .json file),
  /// as `schedc plan --stack`, when set.
  std::string stack;
  /// Write the recommendation as `schedc plan --write-plan PREFIX` does, in
  /// the forms of `emit` (mlir, json, svg, trace, torch-csv), when set.
  std::string writePlan;
  std::string emit = "mlir,json,svg";
};

/// One layout and schedule the planner evaluated.
struct PlannedCandidate {
  int64_t dp = 1, tp = 1, pp = 1, vpp = 1, ep = 1, cp = 1;
  int zero = 1;
  std::string recompute;
  int64_t microbatchSize = 1;
  int64_t microbatches = 0;
  std::string strategy;
  /// "verified", "violated: ..." or "unknown: ..."; empty when not proved.
  std::string verdict;
  double stepTime = 0;
  double mfu = 0;
  double bubbleRatio = 0;
  double tokensPerSecondPerDevice = 0;
  /// Bytes at the peak of the most loaded device, and the device's limit.
  double peakMemory = 0;
  double memoryLimit = 0;
};

/// What plan() found.
struct PlanReport {
  /// Fitting candidates, best first.
  std::vector<PlannedCandidate> ranked;
  /// Index into `ranked` of the recommendation (-1: none fits), and why.
  int recommended = -1;
  std::string reason;
  std::optional<PlannedCandidate> bestWithoutPipeline;
  std::optional<PlannedCandidate> bestWithPipeline;
  /// Candidates the search considered.
  int64_t considered = 0;
  /// The files `writePlan` wrote, and the forms it refused with why
  /// ("--emit torch-csv: ...").
  std::vector<std::string> written;
  std::vector<std::string> refused;
};

/// Plans `request` as `schedc plan` does. Fails, with the CLI's message,
/// on an unknown preset, a malformed description or impossible counts.
llvm::Expected<PlanReport> plan(const PlanRequest &request);

/// Generates, checks and writes the plan of `request` in one call.
struct PipelineResult {
  ScheduleSource schedule;
  Report report;
  /// The PyTorch CSV of the schedule (with transfers when generated so),
  /// or why it has none (DualPipe's two replicas have no CSV form).
  std::string plan;
  std::string planError;
};
llvm::Expected<PipelineResult> runPipeline(const PipelineRequest &request,
                                           const CheckOptions &options);

} // namespace sched::api

#endif // LIB_API_API_H
