//===- SchedOps.h - operations of the sched dialect -------------*- C++ -*-===//
//
// Declares the generated sched ops and enums.
//
//===----------------------------------------------------------------------===//

#ifndef DIALECTS_SCHED_SCHEDOPS_H
#define DIALECTS_SCHED_SCHEDOPS_H

#include "dialects/Sched/SchedDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"

#include <limits>

#include "dialects/Sched/SchedEnums.h.inc"

namespace sched {
/// The largest rank id a schedule may name (`sched.rank`, group members,
/// transfer peers): the plain schedule and the runtimes index ranks with
/// 32-bit integers.
constexpr int64_t kMaxRankId = std::numeric_limits<int32_t>::max();

class PipelineOp;
class ScheduleOp;
class RankOp;
class OverlapOp;
class P2PGroupOp;
} // namespace sched

#define GET_OP_CLASSES
#include "dialects/Sched/SchedOps.h.inc"

#endif // DIALECTS_SCHED_SCHEDOPS_H
