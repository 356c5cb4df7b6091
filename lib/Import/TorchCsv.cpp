//===- TorchCsv.cpp - import PyTorch pipelining CSV schedules -------------===//
//
// Cell grammar: {stage}{F|I|B|W|SEND_F|RECV_F|SEND_B|RECV_B}{microbatch},
// {stage}{UNSHARD|RESHARD|REDUCE_GRAD}, and ({a};{b})OVERLAP_F_B.
//
//===----------------------------------------------------------------------===//

#include "lib/Import/TorchCsv.h"
#include "dialects/Sched/SchedOps.h"
#include "lib/ScheduleIR/ScheduleIR.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>

using namespace mlir;
using namespace sched;

namespace {

/// A cell word: what it does, and for a transfer which way it goes.
struct CellWord {
  llvm::StringLiteral word;
  ActionKind kind;
  bool gradient;
};

/// Longest names first, so that "SEND_F" is not read as "S...".
constexpr CellWord kCellWords[] = {
    {"REDUCE_GRAD", ActionKind::ReduceGrad, false},
    {"UNSHARD", ActionKind::Unshard, false},
    {"RESHARD", ActionKind::Reshard, false},
    {"SEND_F", ActionKind::Send, false},
    {"RECV_F", ActionKind::Recv, false},
    {"SEND_B", ActionKind::Send, true},
    {"RECV_B", ActionKind::Recv, true},
    {"F", ActionKind::Forward, false},
    {"I", ActionKind::BackwardInput, false},
    {"B", ActionKind::Backward, false},
    {"W", ActionKind::BackwardWeight, false},
};

bool hasMicrobatch(ActionKind kind) {
  return kind != ActionKind::Unshard && kind != ActionKind::Reshard &&
         kind != ActionKind::ReduceGrad;
}

bool isTransfer(ActionKind kind) {
  return kind == ActionKind::Send || kind == ActionKind::Recv;
}

/// The stage on the far side of a transfer: a forward send goes to stage
/// + 1, a backward send to stage - 1; a receive mirrors it.
int64_t farStage(const Action &transfer) {
  const bool towardsLater =
      (transfer.kind == ActionKind::Send) != transfer.gradient;
  return towardsLater ? int64_t{transfer.stage} + 1
                      : int64_t{transfer.stage} - 1;
}

/// Consumes the decimal digits at the front of `text` into `value`, which
/// stops growing at `bound` (any value >= `bound` is too big alike).
/// Returns how many digits there were.
size_t consumeIndex(StringRef &text, int64_t bound, int64_t &value) {
  size_t digits = 0;
  value = 0;
  for (; digits < text.size() && llvm::isDigit(text[digits]); ++digits)
    value = std::min(bound, value * 10 + (text[digits] - '0'));
  text = text.drop_front(digits);
  return digits;
}

/// The most stages and microbatches (the dialect's own bounds); bigger
/// indices are typos.
constexpr int64_t kMaxStages = 1 << 20;
constexpr int64_t kMaxMicrobatches = 1 << 26;

/// The most ranks (rows) a CSV may name. Every rank costs the verifier
/// some 400 bytes even without actions, so a file of blank lines would
/// otherwise turn a few megabytes into gigabytes; no pipeline comes near.
constexpr int64_t kMaxRanks = 1 << 20;

/// Where a stage runs: the first row that computes it, else the first row
/// that names it at all.
struct StageHome {
  int32_t computeRank = -1;
  int32_t anyRank = -1;
  int32_t rank() const { return computeRank >= 0 ? computeRank : anyRank; }
};

class CsvReader {
public:
  CsvReader(llvm::SourceMgr &sourceMgr, MLIRContext *context,
            const TorchCsvOptions &options)
      : options(options),
        text(sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer()),
        result(context, sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
                            ->getBufferIdentifier()) {
    result.name = options.name;
  }

  FailureOr<TorchCsvSchedule> read();

private:
  /// The cell being read.
  Location here() const { return result.locate(line, column); }
  LogicalResult parseAction(StringRef cell, Action &out);
  LogicalResult parseCell(StringRef cell);
  LogicalResult parseLines();
  LogicalResult checkCounts();
  /// Leaves out the cells outside the counts, each reported as a violation.
  void dropOutOfRange();
  void resolvePeers();

  const TorchCsvOptions &options;
  StringRef text;
  TorchCsvSchedule result;
  /// Line and column of the cell being read, both 1-based.
  unsigned line = 0;
  unsigned column = 0;
  /// Cells, empty ones included, on the line being read.
  size_t rowCells = 0;
  int64_t numStages = 0;
  int64_t numMicrobatches = 0;
  uint32_t lastBundle = 0;
  std::optional<Location> firstComms;
  llvm::DenseMap<int32_t, StageHome> stageHomes;
};

} // namespace

TorchCsvSchedule::TorchCsvSchedule(MLIRContext *context, StringRef file)
    : file(StringAttr::get(context, file)) {}

Location TorchCsvSchedule::locate(unsigned line, unsigned column) const {
  return FileLineColLoc::get(file, line, column);
}

Location TorchCsvSchedule::locateAction(int32_t rank, int32_t index) const {
  if (rank < 0 || static_cast<size_t>(rank) >= columns.size())
    return locate(1, 1);
  const unsigned line = static_cast<unsigned>(rank) + 1;
  if (index < 0 || static_cast<size_t>(index) >= columns[rank].size())
    return locate(line, 1);
  return locate(line, columns[rank][index]);
}

bool sched::torchCsvHasComms(StringRef text) {
  return text.contains("SEND_") || text.contains("RECV_");
}

LogicalResult CsvReader::parseAction(StringRef cell, Action &out) {
  auto malformed = [&]() {
    return emitError(here()) << "malformed cell '" << cell
                             << "': expected {stage}{F|I|B|W|SEND_F|RECV_F|"
                                "SEND_B|RECV_B}{microbatch}, "
                                "{stage}{UNSHARD|RESHARD|REDUCE_GRAD} or "
                                "({a};{b})OVERLAP_F_B";
  };
  StringRef rest = cell;
  int64_t stage = 0;
  const size_t stageDigits = consumeIndex(rest, kMaxStages, stage);
  if (stageDigits == 0 || rest.empty())
    return malformed();
  if (stage >= kMaxStages)
    return emitError(here())
           << "stage index in '" << cell << "' is out of range (at most "
           << kMaxStages - 1 << ")";
  const CellWord *word = llvm::find_if(
      kCellWords, [&](const CellWord &w) { return rest.starts_with(w.word); });
  if (word == std::end(kCellWords))
    return malformed();
  rest = rest.drop_front(word->word.size());
  out = Action();
  out.kind = word->kind;
  out.gradient = word->gradient;
  out.stage = static_cast<int32_t>(stage);
  if (!hasMicrobatch(out.kind)) {
    if (!rest.empty())
      return malformed();
    return success();
  }
  int64_t microbatch = 0;
  if (consumeIndex(rest, kMaxMicrobatches, microbatch) == 0 || !rest.empty())
    return malformed();
  if (microbatch >= kMaxMicrobatches)
    return emitError(here())
           << "microbatch index in '" << cell << "' is out of range (at most "
           << kMaxMicrobatches - 1 << ")";
  out.microbatch = static_cast<int32_t>(microbatch);
  return success();
}

LogicalResult CsvReader::parseCell(StringRef cell) {
  llvm::SmallVector<Action, 2> actions;
  if (cell.consume_front("(")) {
    if (!cell.consume_back(")OVERLAP_F_B") || cell.count(';') != 1)
      return emitError(here()) << "malformed overlap cell: expected "
                                  "({forward};{backward})OVERLAP_F_B";
    auto [first, second] = cell.split(';');
    for (StringRef part : {first.trim(), second.trim()})
      if (failed(parseAction(part, actions.emplace_back())))
        return failure();
    const bool forwardFirst = actions[0].kind == ActionKind::Forward;
    const ActionKind other = actions[forwardFirst ? 1 : 0].kind;
    if ((!forwardFirst && actions[1].kind != ActionKind::Forward) ||
        (other != ActionKind::Backward && other != ActionKind::BackwardInput))
      return emitError(here()) << "an OVERLAP_F_B cell must pair one F with "
                                  "one B or I";
    ++lastBundle;
    for (Action &action : actions)
      action.bundle = lastBundle;
  } else if (failed(parseAction(cell, actions.emplace_back()))) {
    return failure();
  }

  if (line > kMaxRanks)
    return emitError(here()) << "row " << line << " is past the most ranks a "
                             << "CSV may name (" << kMaxRanks
                             << ", a row each); a pipeline has far fewer";
  const int32_t rank = static_cast<int32_t>(line - 1);
  Schedule &schedule = result.schedule;
  if (schedule.ranks.size() <= static_cast<size_t>(rank)) {
    schedule.ranks.resize(rank + 1);
    result.columns.resize(rank + 1);
    // Most cells hold one action: no regrowth, no slack.
    schedule.ranks[rank].actions.reserve(rowCells);
    result.columns[rank].reserve(rowCells);
  }
  for (const Action &action : actions) {
    if (isTransfer(action.kind) && !firstComms)
      firstComms = here();
    numStages = std::max<int64_t>(numStages, int64_t{action.stage} + 1);
    numMicrobatches =
        std::max<int64_t>(numMicrobatches, int64_t{action.microbatch} + 1);
    StageHome &home = stageHomes[action.stage];
    if (home.anyRank < 0)
      home.anyRank = rank;
    if (home.computeRank < 0 && isCompute(action.kind))
      home.computeRank = rank;
    schedule.ranks[rank].actions.push_back(action);
    result.columns[rank].push_back(column);
  }
  return success();
}

LogicalResult CsvReader::parseLines() {
  StringRef rest = text;
  while (!rest.empty()) {
    auto [row, next] = rest.split('\n');
    rest = next;
    ++line;
    row.consume_back("\r");
    rowCells = row.count(',') + 1;
    size_t start = 0;
    while (true) {
      const size_t comma = row.find(',', start);
      StringRef raw = row.slice(start, comma);
      StringRef cell = raw.ltrim();
      column = static_cast<unsigned>(start + (raw.size() - cell.size()) + 1);
      cell = cell.rtrim();
      // csv.writer quotes cells only when they need it; accept that.
      if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"')
        cell = cell.drop_front().drop_back().trim();
      if (!cell.empty() && failed(parseCell(cell)))
        return failure();
      if (comma == StringRef::npos)
        break;
      start = comma + 1;
    }
  }
  if (result.schedule.ranks.empty())
    return emitError(result.locate(1, 1)) << "the CSV holds no actions";
  for (size_t r = 0; r < result.schedule.ranks.size(); ++r)
    result.schedule.ranks[r].id = static_cast<int64_t>(r);
  return success();
}

LogicalResult CsvReader::checkCounts() {
  const Location file = result.locate(1, 1);
  if (options.stages) {
    if (*options.stages < 1)
      return emitError(file) << "--stages must be at least 1";
    numStages = *options.stages;
  }
  if (options.microbatches) {
    if (*options.microbatches < 1)
      return emitError(file) << "--microbatches must be at least 1";
    numMicrobatches = *options.microbatches;
  }
  numMicrobatches = std::max<int64_t>(numMicrobatches, 1);
  if (numStages > kMaxStages)
    return emitError(file) << numStages << " stages are too many (at most "
                           << kMaxStages << ")";
  if (numMicrobatches > kMaxMicrobatches)
    return emitError(file) << numMicrobatches
                           << " microbatches are too many (at most "
                           << kMaxMicrobatches << ")";
  result.schedule.numStages = static_cast<int32_t>(numStages);
  result.schedule.numMicrobatches = static_cast<int32_t>(numMicrobatches);
  return success();
}

void CsvReader::dropOutOfRange() {
  for (size_t r = 0; r < result.schedule.ranks.size(); ++r) {
    std::vector<Action> &actions = result.schedule.ranks[r].actions;
    std::vector<uint32_t> &columns = result.columns[r];
    size_t kept = 0;
    // A cell is the run of actions that share a column.
    for (size_t begin = 0, end; begin < actions.size(); begin = end) {
      end = begin + 1;
      while (end < actions.size() && columns[end] == columns[begin])
        ++end;
      auto outside = std::find_if(
          actions.begin() + begin, actions.begin() + end, [&](const Action &a) {
            return a.stage >= numStages ||
                   (hasMicrobatch(a.kind) && a.microbatch >= numMicrobatches);
          });
      if (outside == actions.begin() + end) {
        for (size_t i = begin; i < end; ++i, ++kept) {
          actions[kept] = actions[i];
          columns[kept] = columns[i];
        }
        continue;
      }
      ++*options.outOfRangeCells;
      if (options.outOfRangeIndices)
        options.outOfRangeIndices->emplace_back(
            outside->stage,
            hasMicrobatch(outside->kind) ? outside->microbatch : -1);
      InFlightDiagnostic diag = emitError(result.locateAction(
          static_cast<int32_t>(r), static_cast<int32_t>(begin)));
      diag << "[missing] ";
      if (outside->stage >= numStages)
        diag << "stage " << outside->stage
             << " is out of range: the schedule has " << numStages << " stages";
      else
        diag << "microbatch " << outside->microbatch
             << " is out of range: the schedule has " << numMicrobatches
             << " microbatches (0.." << numMicrobatches - 1 << ")";
    }
    actions.resize(kept);
    columns.resize(kept);
  }
}

void CsvReader::resolvePeers() {
  for (RankProgram &rank : result.schedule.ranks)
    for (Action &action : rank.actions) {
      if (!isTransfer(action.kind))
        continue;
      const int64_t far = farStage(action);
      auto home = stageHomes.find(static_cast<int32_t>(far));
      action.peer = far >= 0 && far < numStages && home != stageHomes.end()
                        ? home->second.rank()
                        : -1;
    }
}

FailureOr<TorchCsvSchedule> CsvReader::read() {
  if (failed(parseLines()))
    return failure();
  if (options.flavour == TorchCsvFlavour::Compute && firstComms) {
    emitError(*firstComms) << "a compute-only CSV (torch-csv) holds a "
                              "SEND/RECV cell; use the torch-csv-comms format";
    return failure();
  }
  if (failed(checkCounts()))
    return failure();
  if (options.outOfRangeCells)
    dropOutOfRange();
  resolvePeers();
  stageHomes.clear();
  return std::move(result);
}

FailureOr<TorchCsvSchedule>
sched::readTorchCsv(llvm::SourceMgr &sourceMgr, MLIRContext *context,
                    const TorchCsvOptions &options) {
  return CsvReader(sourceMgr, context, options).read();
}

/// The sched ops cannot name a missing peer: reports the first transfer
/// without one.
static LogicalResult checkPeers(const TorchCsvSchedule &csv) {
  const Schedule &schedule = csv.schedule;
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &action = actions[i];
      if (!isTransfer(action.kind) || action.peer >= 0)
        continue;
      return emitError(csv.locateAction(static_cast<int32_t>(r),
                                        static_cast<int32_t>(i)))
             << "cannot find the peer of this transfer: stage "
             << farStage(action) << " runs on no rank of the file";
    }
  }
  return success();
}

RequestSize sched::torchCsvImportSize(const Schedule &schedule) {
  RequestSize size;
  for (const RankProgram &rank : schedule.ranks) {
    size.actions += static_cast<int64_t>(rank.actions.size());
    // A CSV bundles nothing but the two actions of an overlap cell.
    for (size_t i = 0; i < rank.actions.size(); ++i)
      if (rank.actions[i].bundle != 0 &&
          (i == 0 || rank.actions[i - 1].bundle != rank.actions[i].bundle))
        ++size.overlaps;
  }
  // The IR uniques attributes per microbatch index used, and every index
  // used is some action's: one cell naming microbatch 2^24 costs one.
  size.microbatches = std::min<int64_t>(schedule.numMicrobatches, size.actions);
  return size;
}

OwningOpRef<ModuleOp> sched::importTorchCsv(llvm::SourceMgr &sourceMgr,
                                            MLIRContext *context,
                                            const TorchCsvOptions &options) {
  context->getOrLoadDialect<SchedDialect>();
  FailureOr<TorchCsvSchedule> csv = readTorchCsv(sourceMgr, context, options);
  if (failed(csv) || failed(checkPeers(*csv)))
    return nullptr;
  const Schedule &plain = csv->schedule;
  // The plain form follows the file; its IR costs several times as much.
  if (llvm::Error error = checkMemoryBudget(
          MemoryPath::Import, torchCsvImportSize(plain), options.memoryBudget,
          "importing the PyTorch CSV", options.raiseBudget)) {
    emitError(csv->locate(1, 1)) << llvm::toString(std::move(error));
    return nullptr;
  }
  ProgramLocations locations;
  for (size_t r = 0; r < plain.ranks.size(); ++r) {
    const auto rank = static_cast<int32_t>(r);
    locations.ranks.push_back(csv->locateAction(rank, -1));
    std::vector<Location> &actions = locations.actions.emplace_back();
    for (size_t i = 0; i < plain.ranks[r].actions.size(); ++i)
      actions.push_back(csv->locateAction(rank, static_cast<int32_t>(i)));
  }
  const Location file = csv->locate(1, 1);
  OpBuilder builder(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(file);
  builder.setInsertionPointToEnd(module->getBody());
  auto schedule =
      ScheduleOp::create(builder, file, builder.getStringAttr(csv->name),
                         static_cast<uint64_t>(plain.numStages),
                         static_cast<uint64_t>(plain.numMicrobatches),
                         /*replicas=*/1, IntegerAttr(), /*whole_step=*/false);
  builder.createBlock(&schedule.getBody());
  writeRankPrograms(builder, schedule, plain, &locations);
  if (failed(verify(*module)))
    return nullptr;
  return module;
}
