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

namespace sched {

/// Verifies `op`. The schedule's memory_limit applies when `options` sets
/// none, and its global-batch aux heads add their dependencies. Each
/// violation becomes an error at the op it names; an unknown verdict a
/// warning at the schedule.
VerifyResult verifyScheduleOp(ScheduleOp op, VerifyOptions options);

} // namespace sched

#endif // LIB_VERIFYIR_VERIFYIR_H
