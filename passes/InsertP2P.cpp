//===- InsertP2P.cpp - the sched-insert-p2p pass --------------------------===//
//
// Reads each compute-only sched.schedule, lets lib/Lower place its
// transfers and adds them to the rank programs in place, so that the
// computations keep their locations (a CSV cell, a line of a hand-written
// file) for later diagnostics.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/PlanMemory.h"
#include "lib/Lower/InsertTransfers.h"
#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace sched {
#define GEN_PASS_DEF_INSERTP2P
#include "passes/Passes.h.inc"
} // namespace sched

using namespace mlir;
using namespace sched;

/// The op that holds the place of `origin` in its rank: the overlap around
/// it, or itself.
static Operation *rankLevelOp(Operation *origin) {
  Operation *parent = origin->getParentOp();
  return isa<OverlapOp>(parent) ? parent : origin;
}

static void createTransfer(OpBuilder &builder, Location loc,
                           const Schedule &schedule, const Action &action) {
  const Direction direction =
      action.gradient ? Direction::Backward : Direction::Forward;
  const uint64_t stage = action.stage;
  const uint64_t mb = action.microbatch;
  const uint64_t peer = schedule.ranks[action.peer].id;
  IntegerAttr bytes;
  if (action.bytes >= 0)
    bytes = builder.getI64IntegerAttr(action.bytes);
  if (action.kind == ActionKind::Send)
    SendOp::create(builder, loc, direction, stage, mb, peer,
                   FlatSymbolRefAttr(), bytes);
  else
    RecvOp::create(builder, loc, direction, stage, mb, peer,
                   FlatSymbolRefAttr(), bytes);
}

/// Adds the transfers of `lowered` (rank `r`) between the ops of the
/// compute-only program they were computed from.
static void addTransfers(RankOp rank, const Schedule &lowered, size_t r,
                         llvm::ArrayRef<Operation *> origins) {
  OpBuilder builder(rank.getContext());
  Block &body = rank.getBody().front();
  builder.setInsertionPointToStart(&body);
  const std::vector<Action> &actions = lowered.ranks[r].actions;
  size_t nextOrigin = 0;
  uint32_t openBundle = 0;
  OpBuilder::InsertPoint afterGroup;
  for (size_t i = 0; i < actions.size(); ++i) {
    const Action &action = actions[i];
    if (isCompute(action.kind)) {
      builder.setInsertionPointAfter(rankLevelOp(origins[nextOrigin++]));
      openBundle = 0;
      continue;
    }
    // A send sits by its producer, a receive by its consumer.
    Location loc = rank.getLoc();
    if (action.kind == ActionKind::Send && nextOrigin > 0)
      loc = origins[nextOrigin - 1]->getLoc();
    else if (action.kind == ActionKind::Recv && nextOrigin < origins.size())
      loc = origins[nextOrigin]->getLoc();
    if (action.bundle == 0) {
      if (openBundle != 0)
        builder.restoreInsertionPoint(afterGroup);
      openBundle = 0;
      createTransfer(builder, loc, lowered, action);
      continue;
    }
    if (action.bundle != openBundle) {
      if (openBundle != 0)
        builder.restoreInsertionPoint(afterGroup);
      auto group = P2PGroupOp::create(builder, loc);
      afterGroup = builder.saveInsertionPoint();
      builder.createBlock(&group.getBody());
      openBundle = action.bundle;
    }
    createTransfer(builder, loc, lowered, action);
  }
}

/// The actions of `scheduleOp` (every op of a rank program but the bundles
/// around some of them), its overlaps and microbatches.
static RequestSize countActions(ScheduleOp scheduleOp) {
  RequestSize size;
  size.microbatches = static_cast<int64_t>(scheduleOp.getMicrobatches());
  scheduleOp->walk([&](Operation *op) {
    if (isa<OverlapOp>(op))
      ++size.overlaps;
    if (op->getNumRegions() == 0 &&
        isa<RankOp, OverlapOp, P2PGroupOp>(op->getParentOp()))
      ++size.actions;
  });
  return size;
}

namespace {
struct InsertP2PPass : sched::impl::InsertP2PBase<InsertP2PPass> {
  using InsertP2PBase::InsertP2PBase;

  void runOnOperation() override {
    llvm::Expected<int64_t> bytes = memoryBudgetBytes(memoryBudget);
    if (!bytes) {
      // At no location, as the lowerings' (lib/ScheduleIR/ScheduleIR.cpp).
      mlir::emitError(mlir::UnknownLoc::get(&getContext()))
          << "sched-insert-p2p: " << llvm::toString(bytes.takeError());
      return signalPassFailure();
    }
    budget = *bytes;
    if (std::optional<std::string> error = flagOptionError("group", group)) {
      mlir::emitError(mlir::UnknownLoc::get(&getContext()))
          << "sched-insert-p2p: " << *error;
      return signalPassFailure();
    }
    InsertTransfersOptions options;
    options.group = group;
    for (auto scheduleOp : getOperation().getOps<ScheduleOp>())
      if (failed(insertInto(scheduleOp, options)))
        return signalPassFailure();
  }

  /// The memory-budget option in bytes, read when the pass starts.
  int64_t budget = kDefaultMemoryBudget;

  /// Refuses a request of `size` over the budget.
  LogicalResult checkBudget(ScheduleOp scheduleOp, const RequestSize &size) {
    llvm::Error error = checkMemoryBudget(MemoryPath::InsertTransfers, size,
                                          budget, "inserting transfers",
                                          "the pass option memory-budget=SIZE");
    if (!error)
      return success();
    // At its location only: the note MLIR attaches to an error on an op
    // would print the schedule refused as too big.
    return mlir::emitError(scheduleOp.getLoc())
           << "cannot insert transfers: " << llvm::toString(std::move(error));
  }

  LogicalResult insertInto(ScheduleOp scheduleOp,
                           const InsertTransfersOptions &options) {
    // The compute ops before they are read, the transfers counted on what
    // was read before they are inserted, and their groups before their ops
    // are written.
    RequestSize size = countActions(scheduleOp);
    if (failed(checkBudget(scheduleOp, size)))
      return failure();
    std::vector<std::vector<Operation *>> origins;
    FailureOr<Schedule> compute = readSchedule(scheduleOp, &origins);
    if (failed(compute))
      return failure();
    size.transfers = countPlanInstructions(*compute).transfers;
    if (failed(checkBudget(scheduleOp, size)))
      return failure();
    llvm::Expected<Schedule> lowered = insertTransfers(*compute, options);
    if (!lowered) {
      LogicalResult result = failure();
      llvm::handleAllErrors(
          lowered.takeError(), [&](const InsertTransfersError &error) {
            Operation *at = scheduleOp;
            if (error.rank >= 0 && error.index >= 0)
              at = origins[error.rank][error.index];
            at->emitError() << "cannot insert transfers: " << error.message;
          });
      return result;
    }
    size.transferGroups = countTransferGroups(*lowered);
    if (failed(checkBudget(scheduleOp, size)))
      return failure();
    size_t r = 0;
    for (auto rank : scheduleOp.getBody().front().getOps<RankOp>()) {
      addTransfers(rank, *lowered, r, origins[r]);
      ++r;
    }
    return success();
  }
};
} // namespace
