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
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace sched;

namespace {

enum class CellKind : uint8_t {
  F,
  I,
  B,
  W,
  SendF,
  RecvF,
  SendB,
  RecvB,
  Unshard,
  Reshard,
  ReduceGrad,
};

struct CellAction {
  CellKind kind = CellKind::F;
  int64_t stage = 0;
  int64_t microbatch = -1;
};

struct Cell {
  int32_t rank = 0;
  Location loc;
  /// One action, or two for an overlap.
  llvm::SmallVector<CellAction, 2> actions;
};

/// Longest names first, so that "SEND_F" is not read as "S...".
constexpr std::pair<llvm::StringLiteral, CellKind> kCellWords[] = {
    {"REDUCE_GRAD", CellKind::ReduceGrad}, {"UNSHARD", CellKind::Unshard},
    {"RESHARD", CellKind::Reshard},        {"SEND_F", CellKind::SendF},
    {"RECV_F", CellKind::RecvF},           {"SEND_B", CellKind::SendB},
    {"RECV_B", CellKind::RecvB},           {"F", CellKind::F},
    {"I", CellKind::I},                    {"B", CellKind::B},
    {"W", CellKind::W},
};

bool hasMicrobatch(CellKind kind) {
  return kind != CellKind::Unshard && kind != CellKind::Reshard &&
         kind != CellKind::ReduceGrad;
}

bool isTransfer(CellKind kind) {
  return kind == CellKind::SendF || kind == CellKind::RecvF ||
         kind == CellKind::SendB || kind == CellKind::RecvB;
}

/// The largest microbatch index accepted in a cell, and the most stages;
/// bigger ones are typos (the dialect's own bounds).
constexpr int64_t kMaxIndex = 1 << 26;
constexpr int64_t kMaxStages = 1 << 20;

class CsvReader {
public:
  CsvReader(llvm::SourceMgr &sourceMgr, MLIRContext *context,
            const TorchCsvOptions &options)
      : sourceMgr(sourceMgr), context(context), options(options) {}

  OwningOpRef<ModuleOp> read();

private:
  Location locate(unsigned line, unsigned column) {
    const llvm::MemoryBuffer *buffer =
        sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
    return FileLineColLoc::get(context, buffer->getBufferIdentifier(), line,
                               column);
  }
  LogicalResult parseAction(StringRef text, Location loc, CellAction &out);
  LogicalResult parseCell(StringRef text, int32_t rank, Location loc);
  LogicalResult parseLines();
  LogicalResult mapStages();
  void build(OpBuilder &builder, ScheduleOp schedule);
  /// The plain action of a cell action; transfers find their peer from
  /// where the far stage runs.
  Action toAction(const CellAction &cell) const;
  /// Whether the indices of `cell` fit the schedule; reports those that do
  /// not when the caller asked to count them.
  bool inRange(const Cell &cell);

  llvm::SourceMgr &sourceMgr;
  MLIRContext *context;
  const TorchCsvOptions &options;
  std::vector<Cell> cells;
  int32_t numRanks = 0;
  int64_t numStages = 0;
  int64_t numMicrobatches = 0;
  std::vector<int32_t> stageRank;
  std::optional<Location> firstComms;
};

} // namespace

bool sched::torchCsvHasComms(StringRef text) {
  return text.contains("SEND_") || text.contains("RECV_");
}

LogicalResult CsvReader::parseAction(StringRef text, Location loc,
                                     CellAction &out) {
  auto malformed = [&]() {
    return emitError(loc) << "malformed cell '" << text
                          << "': expected {stage}{F|I|B|W|SEND_F|RECV_F|"
                             "SEND_B|RECV_B}{microbatch}, "
                             "{stage}{UNSHARD|RESHARD|REDUCE_GRAD} or "
                             "({a};{b})OVERLAP_F_B";
  };
  StringRef rest = text;
  size_t digits = rest.find_first_not_of("0123456789");
  if (digits == 0 || digits == StringRef::npos)
    return malformed();
  if (rest.take_front(digits).getAsInteger(10, out.stage) ||
      out.stage >= kMaxStages)
    return emitError(loc) << "stage index in '" << text
                          << "' is out of range (at most " << kMaxStages - 1
                          << ")";
  rest = rest.drop_front(digits);
  bool matched = false;
  for (auto [word, kind] : kCellWords) {
    if (!rest.consume_front(word))
      continue;
    out.kind = kind;
    matched = true;
    break;
  }
  if (!matched)
    return malformed();
  if (!hasMicrobatch(out.kind)) {
    if (!rest.empty())
      return malformed();
    return success();
  }
  if (rest.empty() || rest.find_first_not_of("0123456789") != StringRef::npos)
    return malformed();
  if (rest.getAsInteger(10, out.microbatch) || out.microbatch > kMaxIndex)
    return emitError(loc) << "microbatch index in '" << text
                          << "' is out of range (at most " << kMaxIndex
                          << ")";
  return success();
}

LogicalResult CsvReader::parseCell(StringRef text, int32_t rank,
                                   Location loc) {
  Cell cell{rank, loc, {}};
  if (text.consume_front("(")) {
    if (!text.consume_back(")OVERLAP_F_B") || text.count(';') != 1)
      return emitError(loc) << "malformed overlap cell: expected "
                               "({forward};{backward})OVERLAP_F_B";
    auto [first, second] = text.split(';');
    for (StringRef part : {first.trim(), second.trim()}) {
      CellAction action;
      if (failed(parseAction(part, loc, action)))
        return failure();
      cell.actions.push_back(action);
    }
    const bool forwardFirst = cell.actions[0].kind == CellKind::F;
    const CellKind other =
        forwardFirst ? cell.actions[1].kind : cell.actions[0].kind;
    if ((!forwardFirst && cell.actions[1].kind != CellKind::F) ||
        (other != CellKind::B && other != CellKind::I))
      return emitError(loc) << "an OVERLAP_F_B cell must pair one F with "
                               "one B or I";
  } else {
    CellAction action;
    if (failed(parseAction(text, loc, action)))
      return failure();
    cell.actions.push_back(action);
  }
  for (const CellAction &action : cell.actions) {
    if (isTransfer(action.kind) && !firstComms)
      firstComms = loc;
    numStages = std::max(numStages, action.stage + 1);
    numMicrobatches = std::max(numMicrobatches, action.microbatch + 1);
  }
  cells.push_back(std::move(cell));
  return success();
}

LogicalResult CsvReader::parseLines() {
  StringRef text =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer();
  unsigned line = 0;
  int32_t lastNonEmptyRow = -1;
  while (!text.empty()) {
    auto [row, rest] = text.split('\n');
    text = rest;
    ++line;
    row.consume_back("\r");
    const int32_t rank = static_cast<int32_t>(line - 1);
    size_t column = 0;
    while (true) {
      const size_t comma = row.find(',', column);
      StringRef raw = row.slice(column, comma);
      StringRef trimmed = raw.ltrim();
      const size_t start = column + (raw.size() - trimmed.size());
      trimmed = trimmed.rtrim();
      // csv.writer quotes cells only when they need it; accept that.
      if (trimmed.size() >= 2 && trimmed.front() == '"' &&
          trimmed.back() == '"')
        trimmed = trimmed.drop_front().drop_back().trim();
      if (!trimmed.empty()) {
        if (failed(parseCell(trimmed, rank, locate(line, start + 1))))
          return failure();
        lastNonEmptyRow = rank;
      }
      if (comma == StringRef::npos)
        break;
      column = comma + 1;
    }
  }
  numRanks = lastNonEmptyRow + 1;
  if (numRanks == 0)
    return emitError(locate(1, 1)) << "the CSV holds no actions";
  return success();
}

LogicalResult CsvReader::mapStages() {
  if (options.stages) {
    if (*options.stages < 1)
      return emitError(locate(1, 1)) << "--stages must be at least 1";
    numStages = *options.stages;
  }
  if (options.microbatches) {
    if (*options.microbatches < 1)
      return emitError(locate(1, 1)) << "--microbatches must be at least 1";
    numMicrobatches = *options.microbatches;
  }
  numMicrobatches = std::max<int64_t>(numMicrobatches, 1);
  if (numStages > kMaxStages)
    return emitError(locate(1, 1))
           << numStages << " stages are too many (at most " << kMaxStages
           << ")";
  // Each stage lives where its actions are; the first row that names it
  // wins here, and the verifier reports any other.
  stageRank.assign(numStages, -1);
  for (const Cell &cell : cells)
    for (const CellAction &action : cell.actions)
      if (action.stage < numStages && stageRank[action.stage] < 0)
        stageRank[action.stage] = cell.rank;
  for (const Cell &cell : cells)
    for (const CellAction &action : cell.actions) {
      if (!isTransfer(action.kind) || action.stage >= numStages)
        continue;
      const bool towardsLater =
          action.kind == CellKind::SendF || action.kind == CellKind::RecvB;
      const int64_t far = towardsLater ? action.stage + 1 : action.stage - 1;
      if (far < 0 || far >= numStages || stageRank[far] < 0)
        return emitError(cell.loc)
               << "cannot find the peer of this transfer: stage " << far
               << " runs on no rank of the file";
    }
  return success();
}

Action CsvReader::toAction(const CellAction &cell) const {
  static constexpr std::pair<CellKind, ActionKind> kKinds[] = {
      {CellKind::F, ActionKind::Forward},
      {CellKind::I, ActionKind::BackwardInput},
      {CellKind::B, ActionKind::Backward},
      {CellKind::W, ActionKind::BackwardWeight},
      {CellKind::SendF, ActionKind::Send},
      {CellKind::SendB, ActionKind::Send},
      {CellKind::RecvF, ActionKind::Recv},
      {CellKind::RecvB, ActionKind::Recv},
      {CellKind::Unshard, ActionKind::Unshard},
      {CellKind::Reshard, ActionKind::Reshard},
      {CellKind::ReduceGrad, ActionKind::ReduceGrad},
  };
  Action action;
  for (auto [from, to] : kKinds)
    if (from == cell.kind)
      action.kind = to;
  action.stage = static_cast<int32_t>(cell.stage);
  action.microbatch = static_cast<int32_t>(cell.microbatch);
  if (isTransfer(cell.kind)) {
    action.gradient =
        cell.kind == CellKind::SendB || cell.kind == CellKind::RecvB;
    const bool towardsLater =
        cell.kind == CellKind::SendF || cell.kind == CellKind::RecvB;
    action.peer = stageRank[towardsLater ? cell.stage + 1 : cell.stage - 1];
  }
  return action;
}

bool CsvReader::inRange(const Cell &cell) {
  for (const CellAction &action : cell.actions) {
    const bool stageOk = action.stage < numStages;
    const bool mbOk =
        !hasMicrobatch(action.kind) || action.microbatch < numMicrobatches;
    if (stageOk && mbOk)
      continue;
    if (!options.outOfRangeCells)
      return true; // the op verifiers report it at the cell
    ++*options.outOfRangeCells;
    InFlightDiagnostic diag = emitError(cell.loc);
    diag << "[missing] ";
    if (!stageOk)
      diag << "stage " << action.stage << " is out of range: the schedule has "
           << numStages << " stages";
    else
      diag << "microbatch " << action.microbatch
           << " is out of range: the schedule has " << numMicrobatches
           << " microbatches (0.." << numMicrobatches - 1 << ")";
    return false;
  }
  return true;
}

void CsvReader::build(OpBuilder &builder, ScheduleOp schedule) {
  Schedule plain;
  plain.numStages = static_cast<int32_t>(numStages);
  plain.numMicrobatches = static_cast<int32_t>(numMicrobatches);
  plain.ranks.resize(numRanks);
  ProgramLocations locations;
  locations.actions.resize(numRanks);
  for (int32_t r = 0; r < numRanks; ++r) {
    plain.ranks[r].id = r;
    locations.ranks.push_back(locate(r + 1, 1));
  }
  uint32_t bundle = 0;
  for (const Cell &cell : cells) {
    if (!inRange(cell))
      continue;
    const bool overlap = cell.actions.size() > 1;
    bundle += overlap;
    for (const CellAction &cellAction : cell.actions) {
      Action action = toAction(cellAction);
      action.bundle = overlap ? bundle : 0;
      plain.ranks[cell.rank].actions.push_back(action);
      locations.actions[cell.rank].push_back(cell.loc);
    }
  }
  builder.createBlock(&schedule.getBody());
  writeRankPrograms(builder, schedule, plain, &locations);
}

OwningOpRef<ModuleOp> CsvReader::read() {
  if (failed(parseLines()))
    return nullptr;
  if (options.flavour == TorchCsvFlavour::Compute && firstComms) {
    emitError(*firstComms) << "a compute-only CSV (torch-csv) holds a "
                              "SEND/RECV cell; use the torch-csv-comms format";
    return nullptr;
  }
  if (failed(mapStages()))
    return nullptr;
  OpBuilder builder(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(locate(1, 1));
  builder.setInsertionPointToEnd(module->getBody());
  auto schedule = ScheduleOp::create(
      builder, locate(1, 1), builder.getStringAttr(options.name),
      static_cast<uint64_t>(numStages),
      static_cast<uint64_t>(numMicrobatches), /*replicas=*/1, IntegerAttr());
  build(builder, schedule);
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

OwningOpRef<ModuleOp> sched::importTorchCsv(llvm::SourceMgr &sourceMgr,
                                            MLIRContext *context,
                                            const TorchCsvOptions &options) {
  context->getOrLoadDialect<SchedDialect>();
  return CsvReader(sourceMgr, context, options).read();
}
