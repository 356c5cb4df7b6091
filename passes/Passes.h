//===- Passes.h - passes of schedc ------------------------------*- C++ -*-===//
//
// Declares the schedc passes and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef PASSES_PASSES_H
#define PASSES_PASSES_H

#include "dialects/Sched/SchedDialect.h"
#include "lib/Limits/MemoryBudgetOption.h"
#include "lib/Limits/PassOptionValue.h"
#include "lib/Limits/ResourceLimits.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace sched {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// registerSchedPasses() registers every schedc pass.
#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace sched

#endif // PASSES_PASSES_H
