//===- JsonPlan.h - export JSON runtime plans -------------------*- C++ -*-===//
//
// Writes a runtime plan as the versioned JSON of docs/runtime-plan.md
// (schema: docs/runtime-plan.schema.json): the schedule's shape, process
// groups and mesh, the verdict it was emitted under, and per rank an
// ordered instruction list.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_EXPORT_JSONPLAN_H
#define LIB_EXPORT_JSONPLAN_H

#include "lib/Schedule/RuntimePlan.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace sched {

/// Writes `plan` as JSON, one instruction per line. The output is a
/// function of the plan alone: import then export gives the same text.
/// Fails when the plan cannot be said in JSON (a group or peer index out
/// of range).
llvm::Error writeJsonPlan(llvm::raw_ostream &os, const RuntimePlan &plan);

} // namespace sched

#endif // LIB_EXPORT_JSONPLAN_H
