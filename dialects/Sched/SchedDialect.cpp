//===- SchedDialect.cpp - the sched dialect -------------------------------===//
//
// Registers the sched dialect and its ops.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedDialect.h"
#include "dialects/Sched/SchedOps.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace sched;

#include "dialects/Sched/SchedDialect.cpp.inc"

void SchedDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Sched/SchedOps.cpp.inc"
      >();
}

void sched::registerSchedDialect(DialectRegistry &registry) {
  registry.insert<SchedDialect>();
}
