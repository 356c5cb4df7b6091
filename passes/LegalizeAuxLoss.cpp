//===- LegalizeAuxLoss.cpp - the sched-legalize-aux-loss pass -------------===//
//
// Makes a schedule keep its global-batch aux-loss heads: reports the
// conflicts (mode=error), rewrites the compute order around the heads
// (mode=reorder, lib/AuxLoss; transfers are placed again by lib/Lower), or
// turns the heads into DeepSeek's auxiliary-loss-free bias balancing
// (mode=aux-free).
//
//===----------------------------------------------------------------------===//

#include "lib/AuxLoss/AuxLossOrder.h"
#include "lib/Lower/InsertTransfers.h"
#include "lib/ScheduleIR/ScheduleIR.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/EquivalenceClasses.h"

#include <map>
#include <tuple>

namespace sched {
#define GEN_PASS_DEF_LEGALIZEAUXLOSS
#include "passes/Passes.h.inc"
} // namespace sched

using namespace mlir;
using namespace sched;

namespace {

/// What an action is, without its place: (kind, gradient, stage, mb).
using ActionKey = std::tuple<int, bool, int32_t, int32_t>;

ActionKey keyOf(const Action &a) {
  return {static_cast<int>(a.kind), a.gradient, a.stage, a.microbatch};
}

SmallVector<AuxHeadOp> globalBatchHeads(ScheduleOp schedule) {
  SmallVector<AuxHeadOp> heads;
  for (auto head : schedule.getBody().front().getOps<AuxHeadOp>())
    if (head.getScope() == AuxScope::GlobalBatch)
      heads.push_back(head);
  return heads;
}

/// The top-level op of a rank that holds `op`: the overlap or p2p group
/// around it, or itself.
Operation *rankLevelOp(Operation *op) {
  Operation *parent = op->getParentOp();
  return isa<OverlapOp, P2PGroupOp>(parent) ? parent : op;
}

struct LegalizeAuxLossPass
    : sched::impl::LegalizeAuxLossBase<LegalizeAuxLossPass> {
  using LegalizeAuxLossBase::LegalizeAuxLossBase;

  void runOnOperation() override {
    if (mode != "error" && mode != "reorder" && mode != "aux-free") {
      mlir::emitError(getOperation().getLoc())
          << "sched-legalize-aux-loss: mode must be error, reorder or "
             "aux-free, got '"
          << std::string(mode) << "'";
      return signalPassFailure();
    }
    if (!biasBytes.parsed() || biasBytes < 0) {
      mlir::emitError(getOperation().getLoc())
          << "sched-legalize-aux-loss: bias-bytes must be an integer of at "
             "least 0, got "
          << biasBytes.describe();
      return signalPassFailure();
    }
    bool ok = true;
    for (auto schedule : getOperation().getOps<ScheduleOp>()) {
      if (mode == "error")
        ok &= succeeded(reportConflicts(schedule));
      else if (mode == "reorder")
        ok &= succeeded(reorder(schedule));
      else
        ok &= succeeded(makeAuxFree(schedule));
    }
    if (!ok)
      signalPassFailure();
  }

  //===--------------------------------------------------------------------===//
  // mode=error
  //===--------------------------------------------------------------------===//

  LogicalResult reportConflicts(ScheduleOp op) {
    SmallVector<AuxHeadOp> heads = globalBatchHeads(op);
    if (heads.empty())
      return success();
    FailureOr<Schedule> schedule = readSchedule(op);
    if (failed(schedule))
      return failure();
    bool ok = true;
    for (AuxHeadOp head : heads) {
      std::optional<AuxLossConflict> conflict = findAuxLossConflict(
          *schedule, static_cast<int32_t>(head.getStage()));
      if (!conflict)
        continue;
      ok = false;
      head.emitError() << describeAuxLossConflict(*conflict) << " on rank "
                       << schedule->ranks[conflict->rank].id
                       << "; fix: sched-legalize-aux-loss mode=reorder (all "
                          "forwards, then all backwards at and below the "
                          "head; more activation memory), mode=aux-free "
                          "(bias balancing, no gradient dependency), or a "
                          "scope local to the microbatch (microbatch or "
                          "sequence)";
    }
    return success(ok);
  }

  //===--------------------------------------------------------------------===//
  // mode=reorder
  //===--------------------------------------------------------------------===//

  LogicalResult reorder(ScheduleOp op) {
    SmallVector<AuxHeadOp> heads = globalBatchHeads(op);
    if (heads.empty())
      return success();
    std::vector<std::vector<Operation *>> origins;
    FailureOr<Schedule> schedule = readSchedule(op, &origins);
    if (failed(schedule))
      return failure();
    std::vector<int32_t> stages;
    bool conflicts = false;
    for (AuxHeadOp head : heads) {
      stages.push_back(static_cast<int32_t>(head.getStage()));
      conflicts |= findAuxLossConflict(*schedule, stages.back()).has_value();
    }
    // A schedule that keeps its heads keeps its order too.
    if (!conflicts)
      return success();

    // Compute only: the transfers are placed again around the new order,
    // with the bytes they carried.
    Schedule compute = *schedule;
    std::map<ActionKey, int64_t> transferBytes;
    std::map<ActionKey, Location> locations;
    bool hadTransfers = false, hadGroups = false;
    for (size_t r = 0; r < compute.ranks.size(); ++r) {
      std::vector<Action> kept;
      const std::vector<Action> &actions = compute.ranks[r].actions;
      for (size_t i = 0; i < actions.size(); ++i) {
        const Action &a = actions[i];
        locations.try_emplace(keyOf(a), origins[r][i]->getLoc());
        if (isCompute(a.kind)) {
          kept.push_back(a);
          continue;
        }
        if (a.kind != ActionKind::Send && a.kind != ActionKind::Recv)
          return origins[r][i]->emitError()
                 << "sched-legalize-aux-loss mode=reorder moves compute and "
                    "transfers, but this schedule already holds "
                 << describeAction(compute, a)
                 << "; run it before sched-insert-collectives";
        hadTransfers = true;
        hadGroups |= a.bundle != 0;
        transferBytes[keyOf(a)] = a.bytes;
      }
      compute.ranks[r].actions = std::move(kept);
    }
    llvm::Expected<Schedule> reordered =
        reorderForGlobalBatchHeads(compute, stages);
    if (!reordered)
      return op.emitError() << "cannot reorder around the aux heads: "
                            << llvm::toString(reordered.takeError());
    Schedule result = std::move(*reordered);
    if (hadTransfers) {
      InsertTransfersOptions options;
      options.group = hadGroups;
      llvm::Expected<Schedule> lowered = insertTransfers(result, options);
      if (!lowered)
        return op.emitError() << "cannot place the transfers of the "
                                 "reordered schedule: "
                              << llvm::toString(lowered.takeError());
      result = std::move(*lowered);
      for (RankProgram &program : result.ranks)
        for (Action &a : program.actions)
          if (auto it = transferBytes.find(keyOf(a));
              it != transferBytes.end())
            a.bytes = it->second;
    }
    rewriteRanks(op, result, locations);
    return success();
  }

  /// Replaces the rank programs of `op` by those of `result`; every action
  /// keeps the location of the op it was read from.
  void rewriteRanks(ScheduleOp op, const Schedule &result,
                    const std::map<ActionKey, Location> &locations) {
    ProgramLocations where;
    SmallVector<RankOp> oldRanks(op.getBody().front().getOps<RankOp>());
    for (size_t r = 0; r < result.ranks.size(); ++r) {
      where.ranks.push_back(oldRanks[r].getLoc());
      std::vector<Location> &actions = where.actions.emplace_back();
      for (const Action &a : result.ranks[r].actions) {
        auto it = locations.find(keyOf(a));
        actions.push_back(it != locations.end() ? it->second
                                                : oldRanks[r].getLoc());
      }
    }
    for (RankOp rank : oldRanks)
      rank.erase();
    OpBuilder builder(op.getContext());
    writeRankPrograms(builder, op, result, &where);
  }

  //===--------------------------------------------------------------------===//
  // mode=aux-free
  //===--------------------------------------------------------------------===//

  /// The bias group: the schedule's, or a data-parallel group in which each
  /// rank stands alone (its peers are the same rank of the other replicas).
  /// With pipeline replicas (DualPipe) the ranks that hold copies of one
  /// model stage share a member set: each copy sees only its replica's
  /// microbatches, and a bias reduced apart from the other copies' diverges
  /// (docs/verifier.md, section 5).
  FailureOr<GroupOp> biasGroupOf(ScheduleOp op) {
    const std::string name = biasGroup;
    Operation *symbol = SymbolTable::lookupSymbolIn(op, name);
    if (auto group = dyn_cast_or_null<GroupOp>(symbol))
      return group;
    if (symbol)
      return op.emitError() << "sched-legalize-aux-loss: bias-group '"
                            << name << "' names a symbol that is not "
                                            "a sched.group";
    Block &body = op.getBody().front();
    OpBuilder builder(op.getContext());
    auto ranks = body.getOps<RankOp>();
    if (ranks.empty())
      builder.setInsertionPointToEnd(&body);
    else
      builder.setInsertionPoint(*ranks.begin());
    SmallVector<Attribute> members;
    for (const SmallVector<int64_t> &set : copyRankSets(op))
      members.push_back(builder.getDenseI64ArrayAttr(set));
    return GroupOp::create(builder, op.getLoc(), name,
                           builder.getArrayAttr(members));
  }

  /// The ranks of `op` in sets, in rank order: each rank alone, or with
  /// several pipeline replicas the ranks that hold copies of one model stage
  /// together.
  static SmallVector<SmallVector<int64_t>> copyRankSets(ScheduleOp op) {
    const int64_t replicas = std::max<int64_t>(op.getReplicas(), 1);
    const int64_t perReplica = std::max<int64_t>(op.getStages() / replicas, 1);
    llvm::EquivalenceClasses<int64_t> sets;
    std::map<int64_t, int64_t> holderOfModelStage;
    for (RankOp rank : op.getBody().front().getOps<RankOp>()) {
      const int64_t id = static_cast<int64_t>(rank.getId());
      sets.insert(id);
      rank.walk([&](Operation *inner) {
        if (!isa<ForwardOp, BackwardOp, BackwardInputOp, BackwardWeightOp>(
                inner))
          return;
        const int64_t stage = cast<IntegerAttr>(inner->getAttr("stage")).getInt();
        auto [it, first] = holderOfModelStage.try_emplace(stage % perReplica, id);
        if (!first && replicas > 1)
          sets.unionSets(it->second, id);
      });
    }
    std::map<int64_t, SmallVector<int64_t>> byLeader;
    for (RankOp rank : op.getBody().front().getOps<RankOp>()) {
      const int64_t id = static_cast<int64_t>(rank.getId());
      byLeader[sets.getLeaderValue(id)].push_back(id);
    }
    SmallVector<SmallVector<int64_t>> result;
    for (auto &[leader, set] : byLeader)
      result.push_back(set);
    llvm::sort(result);
    return result;
  }

  LogicalResult makeAuxFree(ScheduleOp op) {
    SmallVector<AuxHeadOp> heads = globalBatchHeads(op);
    if (heads.empty())
      return success();
    FailureOr<GroupOp> group = biasGroupOf(op);
    if (failed(group))
      return failure();
    // A schedule that already holds more than compute and transfers gets
    // its bias updates here; a compute-only one from
    // sched-insert-collectives, which adds the rest of the step.
    bool lowered = false;
    op.walk([&](Operation *inner) {
      lowered |= isa<SendOp, RecvOp, AllReduceOp, ReduceScatterOp, AllGatherOp,
                     AllToAllOp, BarrierOp, UnshardOp, ReshardOp,
                     ReduceGradOp, OptimizerStepOp>(inner);
    });
    auto groupRef = FlatSymbolRefAttr::get(group->getSymNameAttr());
    for (AuxHeadOp head : heads) {
      const int64_t stage = static_cast<int64_t>(head.getStage());
      head.setScope(AuxScope::AuxFree);
      head.setBiasGroupAttr(groupRef);
      head.setBiasBytes(static_cast<uint64_t>(biasBytes));
      Operation *last = lastGradient(op, stage);
      if (!last)
        continue;
      auto rank = last->getParentOfType<RankOp>();
      if (group->getMemberSet(rank.getId()).empty())
        return head.emitError()
               << "the bias update of this head runs on rank " << rank.getId()
               << ", which is not a member of bias group " << groupRef;
      if (!lowered)
        continue;
      OpBuilder builder(op.getContext());
      builder.setInsertionPointAfter(rankLevelOp(last));
      AllReduceOp::create(builder, head.getLoc(), groupRef,
                          builder.getI64IntegerAttr(stage),
                          builder.getI64IntegerAttr(biasBytes), IntegerAttr());
    }
    return success();
  }

  /// The op that completes the last gradient (B or W) of `stage`.
  static Operation *lastGradient(ScheduleOp op, int64_t stage) {
    Operation *last = nullptr;
    op.walk([&](Operation *inner) {
      if (isa<BackwardOp, BackwardWeightOp>(inner) &&
          cast<IntegerAttr>(inner->getAttr("stage")).getInt() == stage)
        last = inner;
    });
    return last;
  }
};

} // namespace
