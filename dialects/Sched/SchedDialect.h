//===- SchedDialect.h - the sched dialect -----------------------*- C++ -*-===//
//
// Declares the sched dialect and its registration entry point.
//
//===----------------------------------------------------------------------===//

#ifndef DIALECTS_SCHED_SCHEDDIALECT_H
#define DIALECTS_SCHED_SCHEDDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Sched/SchedDialect.h.inc"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace sched {

/// Adds the sched dialect to `registry`.
void registerSchedDialect(mlir::DialectRegistry &registry);

} // namespace sched

#endif // DIALECTS_SCHED_SCHEDDIALECT_H
