//===- SchedDialect.cpp - the sched dialect -------------------------------===//
//
// Registers the sched dialect and its ops.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedDialect.h"
#include "dialects/Sched/SchedOps.h"
#include "mlir/IR/DialectRegistry.h"

#include "llvm/ADT/STLExtras.h"

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

/// Whether `name` is one of the stream attributes of an action.
static bool isStreamAttr(llvm::StringRef name) {
  return name == "sched.stream" || name == "sched.wait_event" ||
         name == "sched.record_event";
}

LogicalResult SchedDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  const llvm::StringRef name = attr.getName().getValue();
  if (!isStreamAttr(name))
    return success();
  auto text = dyn_cast<StringAttr>(attr.getValue());
  if (!text || text.getValue().empty())
    return op->emitOpError() << name << " must be a non-empty string, got "
                             << attr.getValue();
  Operation *parent = op->getParentOp();
  const bool inBundle = isa_and_nonnull<OverlapOp, P2PGroupOp>(parent);
  if (op->getDialect() != this || isa<RankOp, OverlapOp, P2PGroupOp>(op) ||
      !(isa_and_nonnull<RankOp>(parent) || inBundle))
    return op->emitOpError() << name << " belongs on an action of a "
                             << "sched.rank";
  if (name != "sched.stream" || !inBundle)
    return success();
  // A p2p group is one launch (an NCCL group call), an overlap one piece
  // of work: their members share a stream.
  for (Operation &member : parent->getRegion(0).front())
    if (member.getAttr(name) != attr.getValue())
      return op->emitOpError()
             << "runs on stream " << attr.getValue() << ", but another member "
             << "of its " << parent->getName() << " runs on "
             << (member.getAttr(name) ? member.getAttr(name)
                                      : StringAttr::get(op->getContext(),
                                                        "default"))
             << ": the members of a p2p group or an overlap run on one stream";
  return success();
}
