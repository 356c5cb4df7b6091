//===- VerifyIR.h - the schedule verifier on sched.schedule ops -*- C++ -*-===//
//
// Runs the verifier on a sched.schedule and reports each violation as an
// MLIR diagnostic at the offending op, with notes.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_VERIFYIR_VERIFYIR_H
#define LIB_VERIFYIR_VERIFYIR_H

#include "dialects/Sched/SchedOps.h"
#include "lib/Verify/Verifier.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace sched {

/// Verifies `op`. The schedule's memory_limit applies when `options` sets
/// none, and its global-batch aux heads add their dependencies. Each
/// violation becomes an error at the op it names; an unknown verdict a
/// warning at the schedule.
VerifyResult verifyScheduleOp(ScheduleOp op, VerifyOptions options);

/// The SMT-LIB 2 section of schedule `name` in a file that holds several:
/// its encoding (VerifyResult::smtlib) in a (push)/(pop) scope, after an
/// (echo) of its name, so that a stock `z3 FILE` prints each schedule's
/// name and then sat (verified) or unsat (violated).
std::string smtlibSection(llvm::StringRef name, const VerifyResult &result);

/// Reports `result` as diagnostics: each violation an error at
/// `locate(violation.at)` with its notes at theirs, each unchecked action
/// a warning at its own, an unknown verdict a warning at `locate({})` (the
/// schedule as a whole). Schedules read
/// without IR (a PyTorch CSV) locate their actions at their cells. A
/// violation about an aux-loss head gets a note at
/// `locateAuxHead(stage)`, when given and it knows the head.
void emitVerifyDiagnostics(
    const VerifyResult &result,
    llvm::function_ref<mlir::Location(ActionRef)> locate,
    llvm::function_ref<std::optional<mlir::Location>(int32_t)> locateAuxHead =
        nullptr);

} // namespace sched

#endif // LIB_VERIFYIR_VERIFYIR_H
