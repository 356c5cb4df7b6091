//===- VerifyIR.cpp - the schedule verifier on sched.schedule ops ---------===//

#include "lib/VerifyIR/VerifyIR.h"
#include "lib/ScheduleIR/ScheduleIR.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace sched;

namespace {
/// Maps an ActionRef back to the op it came from.
struct OriginMap {
  ScheduleOp schedule;
  std::vector<RankOp> ranks;
  std::vector<std::vector<Operation *>> actions;

  Location locate(ActionRef ref) {
    if (ref.rank < 0 || static_cast<size_t>(ref.rank) >= ranks.size())
      return schedule.getLoc();
    if (ref.index < 0)
      return ranks[ref.rank].getLoc();
    return actions[ref.rank][ref.index]->getLoc();
  }
};
} // namespace

VerifyResult sched::verifyScheduleOp(ScheduleOp op, VerifyOptions options) {
  OriginMap origins{op, {}, {}};
  FailureOr<Schedule> schedule = readSchedule(op, &origins.actions);
  if (failed(schedule)) {
    VerifyResult result;
    result.verdict = Verdict::Violated;
    return result;
  }
  for (auto rank : op.getBody().front().getOps<RankOp>())
    origins.ranks.push_back(rank);
  if (!options.memoryLimit && op.getMemoryLimit())
    options.memoryLimit = MemoryLimit::fromInteger(*op.getMemoryLimit());
  for (auto head : op.getBody().front().getOps<AuxHeadOp>())
    if (head.getScope() == AuxScope::GlobalBatch)
      options.globalBatchAuxStages.push_back(
          static_cast<int32_t>(head.getStage()));

  VerifyResult result = verifySchedule(*schedule, options);
  llvm::DenseMap<int64_t, Location> heads;
  for (auto head : op.getBody().front().getOps<AuxHeadOp>())
    heads.try_emplace(static_cast<int64_t>(head.getStage()), head.getLoc());
  emitVerifyDiagnostics(
      result, [&](ActionRef ref) { return origins.locate(ref); },
      [&](int32_t stage) -> std::optional<Location> {
        auto it = heads.find(stage);
        if (it == heads.end())
          return std::nullopt;
        return it->second;
      });
  return result;
}

void sched::emitVerifyDiagnostics(
    const VerifyResult &result, llvm::function_ref<Location(ActionRef)> locate,
    llvm::function_ref<std::optional<Location>(int32_t)> locateAuxHead) {
  for (const Violation &violation : result.violations) {
    InFlightDiagnostic diag = emitError(locate(violation.at))
                              << "[" << violationKindName(violation.kind)
                              << "] " << violation.message;
    for (const ViolationNote &note : violation.notes)
      diag.attachNote(locate(note.at)) << note.message;
    if (violation.auxHeadStage < 0 || !locateAuxHead)
      continue;
    if (std::optional<Location> head = locateAuxHead(violation.auxHeadStage))
      diag.attachNote(*head)
          << "aux head at stage " << violation.auxHeadStage << " declared here";
  }
  for (const Violation &unchecked : result.unchecked)
    emitWarning(locate(unchecked.at)) << unchecked.message;
  if (result.verdict == Verdict::Unknown)
    emitWarning(locate({}))
        << "verification inconclusive: " << result.unknownReason;
}

std::string sched::smtlibSection(llvm::StringRef name,
                                 const VerifyResult &result) {
  std::string text = "; schedule @" + name.str() +
                     ": sat iff it is complete, dependency-correct, "
                     "deadlock-free and within its memory\n";
  text += "(echo \"@" + name.str() + "\")\n(push 1)\n";
  text += result.smtlib;
  text += "(pop 1)\n";
  return text;
}
