//===- TorchCsv.cpp - export PyTorch pipelining CSV schedules -------------===//
//
// The inverse of lib/Import/TorchCsv.cpp, with PyTorch's spellings: a
// send's stage is the sending stage, a receive's the receiving one, and an
// overlap is `({forward};{backward})OVERLAP_F_B`.
//
//===----------------------------------------------------------------------===//

#include "lib/Export/TorchCsv.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>

using namespace sched;

/// More rows than this for a handful of ranks is a typo in a rank id.
static constexpr int64_t kMaxRows = 1 << 20;

static llvm::StringRef transferWord(const Action &action) {
  if (action.kind == ActionKind::Send)
    return action.gradient ? "SEND_B" : "SEND_F";
  return action.gradient ? "RECV_B" : "RECV_F";
}

std::string sched::torchCsvCell(const Action &action) {
  const std::string stage = std::to_string(action.stage);
  switch (action.kind) {
  case ActionKind::Forward:
  case ActionKind::Backward:
  case ActionKind::BackwardInput:
  case ActionKind::BackwardWeight:
    return actionLabel(action, /*withStage=*/true);
  case ActionKind::Send:
  case ActionKind::Recv:
    return stage + transferWord(action).str() +
           std::to_string(action.microbatch);
  case ActionKind::Unshard:
    return stage + "UNSHARD";
  case ActionKind::Reshard:
    return stage + "RESHARD";
  case ActionKind::ReduceGrad:
    return stage + "REDUCE_GRAD";
  default:
    return "";
  }
}

/// The cell of an overlap bundle: the forward first, as PyTorch writes it.
static llvm::Expected<std::string> overlapCell(llvm::ArrayRef<Action> members,
                                               int64_t rankId) {
  const Action *forward = nullptr;
  const Action *backward = nullptr;
  for (const Action &member : members) {
    if (member.kind == ActionKind::Forward && !forward)
      forward = &member;
    else if ((member.kind == ActionKind::Backward ||
              member.kind == ActionKind::BackwardInput) &&
             !backward)
      backward = &member;
    else
      forward = backward = nullptr;
  }
  if (members.size() != 2 || !forward || !backward)
    return llvm::createStringError(
        llvm::formatv("rank {0} holds an overlap that is not one F with one "
                      "B or I, which the CSV cannot say",
                      rankId)
            .str());
  return "(" + torchCsvCell(*forward) + ";" + torchCsvCell(*backward) +
         ")OVERLAP_F_B";
}

/// Calls `cell` with each cell of one rank program's row, in order, or
/// fails at the first action the CSV cannot say.
static llvm::Error forEachCell(const RankProgram &program,
                               TorchCsvContent content,
                               llvm::function_ref<void(llvm::StringRef)> cell) {
  llvm::ArrayRef<Action> actions = program.actions;
  for (size_t i = 0; i < actions.size();) {
    const Action &action = actions[i];
    if (action.kind == ActionKind::Send || action.kind == ActionKind::Recv) {
      if (content == TorchCsvContent::ComputeAndComms && action.shape)
        return llvm::createStringError(
            llvm::formatv("rank {0} holds a shape exchange at action {1}; "
                          "the PyTorch CSV has no cell for it (PyTorch's "
                          "pipelining runtime fixes each stage's shapes at "
                          "set-up and exchanges none)",
                          program.id, i)
                .str());
      if (content == TorchCsvContent::ComputeAndComms)
        cell(torchCsvCell(action));
      ++i;
      continue;
    }
    size_t end = i + 1;
    if (action.bundle != 0 && isCompute(action.kind))
      while (end < actions.size() && actions[end].bundle == action.bundle)
        ++end;
    if (end - i > 1) {
      llvm::Expected<std::string> overlap =
          overlapCell(actions.slice(i, end - i), program.id);
      if (!overlap)
        return overlap.takeError();
      cell(*overlap);
      i = end;
      continue;
    }
    std::string text = torchCsvCell(action);
    if (text.empty())
      return llvm::createStringError(
          llvm::formatv("rank {0} holds a collective or optimizer step at "
                        "action {1}; the PyTorch CSV has no cell for it",
                        program.id, i)
              .str());
    cell(text);
    i = end;
  }
  return llvm::Error::success();
}

/// Writes the row of one rank program, its cells comma-separated, once
/// every cell is known to have a CSV form: straight to `os`, cell by cell
/// (a row built whole held the longest row's text, up to twice over).
static llvm::Error writeRow(llvm::raw_ostream &os, const RankProgram &program,
                            TorchCsvContent content) {
  if (llvm::Error error = forEachCell(program, content, [](llvm::StringRef) {}))
    return error;
  bool first = true;
  return forEachCell(program, content, [&](llvm::StringRef cell) {
    if (!first)
      os << ',';
    os << cell;
    first = false;
  });
}

/// The CSV has no streams and no events: PyTorch's pipelining runtime
/// issues a rank's actions one by one, in row order. A rank on one stream
/// of any name says nothing the row does not; two streams or an event
/// would be dropped silently, so they are refused.
static llvm::Error checkOneStream(const Schedule &schedule) {
  for (const RankProgram &program : schedule.ranks)
    for (const Action &action : program.actions) {
      if (action.waitEvent >= 0 || action.recordEvent >= 0)
        return llvm::createStringError(
            llvm::formatv(
                "rank {0} orders its streams with event '{1}'; the "
                "PyTorch CSV has no streams or events (its runtime "
                "issues a rank's actions in row order): write a "
                "JSON runtime plan instead",
                program.id,
                schedule.events[action.waitEvent >= 0 ? action.waitEvent
                                                      : action.recordEvent])
                .str());
      if (action.stream != program.actions.front().stream)
        return llvm::createStringError(
            llvm::formatv("rank {0} runs actions on streams {1} and {2}; the "
                          "PyTorch CSV has no streams or events (its runtime "
                          "issues a rank's actions in row order): write a "
                          "JSON runtime plan instead",
                          program.id,
                          schedule.streamName(program.actions.front().stream),
                          schedule.streamName(action.stream))
                .str());
    }
  return llvm::Error::success();
}

llvm::Error sched::writeTorchCsv(llvm::raw_ostream &os,
                                 const Schedule &schedule,
                                 TorchCsvContent content) {
  if (schedule.replicas != 1)
    return llvm::createStringError(
        llvm::formatv("a schedule of {0} pipeline replicas has no PyTorch "
                      "CSV form: PyTorch's pipelining runs one chain of "
                      "stages, where stage s feeds stage s + 1",
                      schedule.replicas)
            .str());
  if (llvm::Error error = checkOneStream(schedule))
    return error;
  std::map<int64_t, const RankProgram *> rows;
  for (const RankProgram &program : schedule.ranks) {
    if (program.id < 0 || program.id >= kMaxRows)
      return llvm::createStringError(
          llvm::formatv("rank id {0} cannot be a CSV row (row k is rank k; "
                        "ids from 0 to {1})",
                        program.id, kMaxRows - 1)
              .str());
    rows[program.id] = &program;
  }
  int64_t nextRow = 0;
  for (auto [id, program] : rows) {
    for (; nextRow < id; ++nextRow)
      os << "\n";
    if (llvm::Error error = writeRow(os, *program, content))
      return error;
    os << "\n";
    nextRow = id + 1;
  }
  return llvm::Error::success();
}
