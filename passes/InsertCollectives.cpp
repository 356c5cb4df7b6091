//===- InsertCollectives.cpp - the sched-insert-collectives pass ----------===//
//
// Turns the sched.collective declarations of a schedule into collective
// actions on the ranks that hold the stages, adds FSDP unshard/reshard and
// gradient reduction when asked, and ends every rank with one optimizer
// step.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"

#include <map>
#include <optional>
#include <set>

namespace sched {
#define GEN_PASS_DEF_INSERTCOLLECTIVES
#include "passes/Passes.h.inc"
} // namespace sched

using namespace mlir;
using namespace sched;

namespace {

/// Which compute of which stages a top-level action of a rank holds.
struct ActionInfo {
  Operation *op = nullptr;
  /// (stage, kind) of each compute inside: the op itself or an overlap's.
  llvm::SmallVector<std::pair<int64_t, Operation *>, 2> computes;
};

bool isForward(Operation *op) { return isa<ForwardOp>(op); }
bool isBackwardStart(Operation *op) {
  return isa<BackwardOp, BackwardInputOp>(op);
}
bool finishesGradient(Operation *op) {
  return isa<BackwardOp, BackwardWeightOp>(op);
}

int64_t stageOf(Operation *op) {
  return cast<IntegerAttr>(op->getAttr("stage")).getInt();
}

/// The ranks a group's member sets hold, looked up once per schedule: a
/// lookup per rank (GroupOp::getMemberSet scans every set) was quadratic in
/// the ranks. Rank ids are verified non-negative, so as unsigned keys they
/// never meet DenseMapInfo's reserved ones.
using GroupRanks = llvm::DenseSet<uint64_t>;

GroupRanks ranksOf(GroupOp group) {
  GroupRanks ranks;
  for (Attribute set : group.getMembers())
    for (int64_t id : cast<DenseI64ArrayAttr>(set).asArrayRef())
      ranks.insert(static_cast<uint64_t>(id));
  return ranks;
}

/// A collective a declaration or an aux-free head's bias update asks for,
/// as the verifier and the engine match actions against it.
struct Reading {
  CollectiveKind kind;
  llvm::StringRef group;
  std::optional<uint64_t> stage;
  /// None for a barrier, whose actions carry no bytes.
  std::optional<int64_t> bytes;
  CollectiveWhen when;
  /// The declaration's index among the schedule's sched.collective ops;
  /// none for a bias update, which no action can name.
  std::optional<size_t> declaration;
};

/// Whether an action of `own` for `stage` can be read as an instance of
/// `other` too, by the verifier (kind, group, stage and bytes fit: declared
/// collectives that agree on them are matched by time) or by the engine
/// (it takes any all-reduce or reduce-scatter whose kind, group and stage
/// an after_backward declaration fits for a gradient reduction, whatever
/// its bytes).
bool readsAs(const Reading &own, const Reading &other, int64_t stage) {
  if (other.kind != own.kind || other.group != own.group ||
      (other.stage && static_cast<int64_t>(*other.stage) != stage))
    return false;
  if (!own.bytes || !other.bytes || *own.bytes == *other.bytes)
    return true;
  const bool reduction = own.kind == CollectiveKind::AllReduce ||
                         own.kind == CollectiveKind::ReduceScatter;
  return reduction && other.declaration &&
         other.when == CollectiveWhen::AfterBackward &&
         own.when != CollectiveWhen::AfterBackward;
}

/// Inserts the collectives of one rank.
class RankInserter {
public:
  RankInserter(RankOp rank, unsigned prefetch,
               llvm::ArrayRef<Reading> readings)
      : rank(rank), prefetch(prefetch), readings(readings) {
    for (Operation &op : rank.getBody().front()) {
      ActionInfo info{&op, {}};
      op.walk([&](Operation *inner) {
        if (isa<ForwardOp, BackwardOp, BackwardInputOp, BackwardWeightOp>(
                inner))
          info.computes.emplace_back(stageOf(inner), inner);
      });
      for (auto &[stage, op] : info.computes)
        stages.insert(stage);
      actions.push_back(info);
    }
  }

  /// Issues declaration `d` (`readings[d]`) for each stage it applies to.
  LogicalResult insert(CollectiveOp decl, size_t d, const GroupRanks &group) {
    for (int64_t stage : stages) {
      if (decl.getStage() && static_cast<int64_t>(*decl.getStage()) != stage)
        continue;
      if (!group.contains(rank.getId()))
        return decl.emitOpError()
               << "asks rank " << rank.getId() << " (it holds stage " << stage
               << ") to issue a collective on group " << decl.getGroupAttr()
               << ", which has no member set holding that rank";
      placeCollective(decl, d, stage);
    }
    return success();
  }

  /// The bias update of an aux-free head, once after the op that
  /// completes its stage's last gradient, unless the rank issues it already
  /// (sched-legalize-aux-loss puts it into schedules that hold more than
  /// compute).
  LogicalResult insertBiasUpdate(AuxHeadOp head, const GroupRanks &group) {
    const int64_t stage = static_cast<int64_t>(head.getStage());
    if (!stages.count(stage))
      return success();
    FlatSymbolRefAttr groupRef = head.getBiasGroupAttr();
    for (const ActionInfo &info : actions)
      if (auto update = dyn_cast<AllReduceOp>(info.op))
        if (update.getGroup() == groupRef.getValue() &&
            update.getStage() == static_cast<uint64_t>(stage))
          return success();
    if (!group.contains(rank.getId()))
      return head.emitOpError()
             << "asks rank " << rank.getId() << " (it holds stage " << stage
             << ") for a bias update on group " << groupRef
             << ", which has no member set holding that rank";
    const ActionInfo *last = nullptr;
    for (const ActionInfo &info : actions)
      if (llvm::any_of(info.computes, [&](auto &entry) {
            return entry.first == stage && finishesGradient(entry.second);
          }))
        last = &info;
    if (!last)
      return success();
    OpBuilder builder = after(last->op);
    lastAfter[last->op] = AllReduceOp::create(
        builder, head.getLoc(), groupRef, builder.getI64IntegerAttr(stage),
        builder.getI64IntegerAttr(
            static_cast<int64_t>(head.getBiasBytes().value_or(0))),
        IntegerAttr());
    return success();
  }

  void insertFsdp() {
    for (int64_t stage : stages) {
      size_t first = actions.size(), last = 0;
      for (size_t k = 0; k < actions.size(); ++k)
        for (auto &[s, op] : actions[k].computes)
          if (s == stage) {
            first = std::min(first, k);
            last = std::max(last, k);
          }
      // Gather the parameters `prefetch` actions ahead of their first use.
      const size_t at = first >= prefetch ? first - prefetch : 0;
      OpBuilder builder = before(actions[at].op);
      UnshardOp::create(builder, rank.getLoc(), stage);
      OpBuilder after = this->after(actions[last].op);
      ReshardOp::create(after, rank.getLoc(), stage);
      lastAfter[actions[last].op] =
          ReduceGradOp::create(after, rank.getLoc(), stage);
    }
  }

  /// ZeRO-3's gathers: every top-level compute action is bracketed by an
  /// unshard of each stage it computes and a reshard after it, so each
  /// forward and each backward gathers the parameters it uses.
  void insertGatherWindows() {
    for (const ActionInfo &info : actions) {
      std::set<int64_t> computed;
      for (auto &[stage, op] : info.computes)
        computed.insert(stage);
      if (computed.empty())
        continue;
      OpBuilder builder = before(info.op);
      for (int64_t stage : computed)
        UnshardOp::create(builder, rank.getLoc(), stage);
      OpBuilder after = this->after(info.op);
      Operation *last = nullptr;
      for (int64_t stage : computed)
        last = ReshardOp::create(after, rank.getLoc(), stage);
      lastAfter[info.op] = last;
    }
  }

  void finish() {
    Block &body = rank.getBody().front();
    for (Operation &op : body)
      if (isa<OptimizerStepOp>(op))
        return;
    OpBuilder builder = OpBuilder::atBlockEnd(&body);
    OptimizerStepOp::create(builder, rank.getLoc());
  }

private:
  OpBuilder before(Operation *op) { return OpBuilder(op); }

  /// A builder after `op` and after whatever was already inserted there, so
  /// that insertions keep declaration order.
  OpBuilder after(Operation *op) {
    Operation *anchor = lastAfter.lookup(op);
    OpBuilder builder(op->getContext());
    builder.setInsertionPointAfter(anchor ? anchor : op);
    return builder;
  }

  /// The `declaration` attribute of declaration `d`'s action for `stage`:
  /// its index where another declaration or a bias update could read the
  /// action too, so that the plan has one reading; none otherwise.
  IntegerAttr nameOf(Builder &builder, size_t d, int64_t stage) const {
    for (size_t other = 0; other < readings.size(); ++other)
      if (other != d && readsAs(readings[d], readings[other], stage))
        return builder.getI64IntegerAttr(static_cast<int64_t>(d));
    return IntegerAttr();
  }

  Operation *create(OpBuilder &builder, CollectiveOp decl, size_t d,
                    int64_t stage) {
    Location loc = decl.getLoc();
    IntegerAttr stageAttr = builder.getI64IntegerAttr(stage);
    IntegerAttr bytes = builder.getI64IntegerAttr(decl.getBytes());
    IntegerAttr name = nameOf(builder, d, stage);
    FlatSymbolRefAttr group = decl.getGroupAttr();
    switch (decl.getKind()) {
    case CollectiveKind::AllReduce:
      return AllReduceOp::create(builder, loc, group, stageAttr, bytes, name);
    case CollectiveKind::ReduceScatter:
      return ReduceScatterOp::create(builder, loc, group, stageAttr, bytes,
                                     name);
    case CollectiveKind::AllGather:
      return AllGatherOp::create(builder, loc, group, stageAttr, bytes, name);
    case CollectiveKind::AllToAll:
      return AllToAllOp::create(builder, loc, group, stageAttr, bytes, name);
    case CollectiveKind::Barrier:
      return BarrierOp::create(builder, loc, group, stageAttr, IntegerAttr(),
                               name);
    }
    llvm_unreachable("every collective kind is handled");
  }

  void createAfter(Operation *op, CollectiveOp decl, size_t d,
                   int64_t stage) {
    OpBuilder builder = after(op);
    lastAfter[op] = create(builder, decl, d, stage);
  }

  void placeCollective(CollectiveOp decl, size_t d, int64_t stage) {
    auto holds = [&](const ActionInfo &info, bool (*kind)(Operation *)) {
      return llvm::any_of(info.computes, [&](auto &entry) {
        return entry.first == stage && kind(entry.second);
      });
    };
    switch (decl.getWhen()) {
    case CollectiveWhen::BeforeForward:
    case CollectiveWhen::BeforeBackward: {
      auto kind = decl.getWhen() == CollectiveWhen::BeforeForward
                      ? isForward
                      : isBackwardStart;
      for (const ActionInfo &info : actions)
        if (holds(info, kind)) {
          OpBuilder builder = before(info.op);
          create(builder, decl, d, stage);
        }
      return;
    }
    case CollectiveWhen::AfterForward:
      for (const ActionInfo &info : actions)
        if (holds(info, isForward))
          createAfter(info.op, decl, d, stage);
      return;
    case CollectiveWhen::AfterBackward: {
      // Once, after the action that completes the stage's last gradient.
      const ActionInfo *last = nullptr;
      for (const ActionInfo &info : actions)
        if (holds(info, finishesGradient))
          last = &info;
      if (last)
        createAfter(last->op, decl, d, stage);
      return;
    }
    case CollectiveWhen::Step: {
      OpBuilder builder = OpBuilder::atBlockEnd(&rank.getBody().front());
      for (Operation &op : rank.getBody().front())
        if (isa<OptimizerStepOp>(op)) {
          builder.setInsertionPoint(&op);
          break;
        }
      create(builder, decl, d, stage);
      return;
    }
    }
  }

  RankOp rank;
  unsigned prefetch;
  /// The schedule's declarations, in order, then its bias updates.
  llvm::ArrayRef<Reading> readings;
  std::set<int64_t> stages;
  std::vector<ActionInfo> actions;
  llvm::DenseMap<Operation *, Operation *> lastAfter;
};

struct InsertCollectivesPass
    : sched::impl::InsertCollectivesBase<InsertCollectivesPass> {
  using InsertCollectivesBase::InsertCollectivesBase;

  void runOnOperation() override {
    std::optional<std::string> error = flagOptionError("fsdp", fsdp);
    if (!error)
      error = flagOptionError("gather-per-compute", gatherPerCompute);
    if (!error && !prefetch.parsed())
      error = "prefetch must be an integer in [0, 4294967295], got " +
              prefetch.describe();
    if (error) {
      mlir::emitError(getOperation().getLoc())
          << "sched-insert-collectives: " << *error;
      return signalPassFailure();
    }
    for (auto schedule : getOperation().getOps<ScheduleOp>())
      if (failed(runOn(schedule)))
        return signalPassFailure();
  }

  LogicalResult runOn(ScheduleOp schedule) {
    Block &body = schedule.getBody().front();
    // The declarations and their groups, once: walking the schedule's body
    // and looking symbols up per rank was quadratic in the ranks (40 s at
    // pp 32,768).
    SymbolTable symbols(schedule);
    // A std::map: the declarations keep pointers into it.
    std::map<Operation *, GroupRanks> groupRanks;
    auto ranksOfGroup = [&](llvm::StringRef name) -> const GroupRanks & {
      auto group = symbols.lookup<GroupOp>(name);
      auto [it, inserted] = groupRanks.try_emplace(group.getOperation());
      if (inserted)
        it->second = ranksOf(group);
      return it->second;
    };
    std::vector<std::pair<CollectiveOp, const GroupRanks *>> decls;
    for (auto decl : body.getOps<CollectiveOp>())
      decls.emplace_back(decl, &ranksOfGroup(decl.getGroup()));
    std::vector<std::pair<AuxHeadOp, const GroupRanks *>> heads;
    for (auto head : body.getOps<AuxHeadOp>())
      if (head.getScope() == AuxScope::AuxFree && head.getBiasGroupAttr())
        heads.emplace_back(head,
                           &ranksOfGroup(head.getBiasGroupAttr().getValue()));
    std::vector<Reading> readings;
    for (auto &[decl, group] : decls)
      readings.push_back({decl.getKind(), decl.getGroup(), decl.getStage(),
                          decl.getKind() == CollectiveKind::Barrier
                              ? std::nullopt
                              : std::optional<int64_t>(decl.getBytes()),
                          decl.getWhen(), readings.size()});
    for (auto &[head, group] : heads)
      readings.push_back(
          {CollectiveKind::AllReduce, head.getBiasGroupAttr().getValue(),
           head.getStage(),
           static_cast<int64_t>(head.getBiasBytes().value_or(0)),
           CollectiveWhen::AfterBackward, std::nullopt});
    if (fsdp && gatherPerCompute)
      return schedule.emitOpError()
             << "fsdp (one gather around a stage's computes) and "
                "gather-per-compute (one around each) exclude each other";
    for (auto rank : body.getOps<RankOp>()) {
      RankInserter inserter(rank, prefetch, readings);
      // First, so that a reshard follows its compute directly and the
      // collectives placed after the compute come after it.
      if (gatherPerCompute)
        inserter.insertGatherWindows();
      for (size_t d = 0; d < decls.size(); ++d)
        if (failed(inserter.insert(decls[d].first, d, *decls[d].second)))
          return failure();
      for (auto &[head, group] : heads)
        if (failed(inserter.insertBiasUpdate(head, *group)))
          return failure();
      if (fsdp)
        inserter.insertFsdp();
      inserter.finish();
    }
    if (schedule.getReplicas() > 1)
      return sumReplicaGradients(schedule);
    return success();
  }

  /// With several pipeline replicas every model stage has a copy per
  /// replica, and the copies' weight gradients must be summed before the
  /// optimizer step: each rank all-reduces the gradients of its stages on a
  /// new group @replicas, whose member sets are the ranks that share model
  /// stages, in model-stage order so that every member issues them alike.
  /// A declaration per stage (`when after_backward`) states the order.
  LogicalResult sumReplicaGradients(ScheduleOp schedule) {
    Block &body = schedule.getBody().front();
    const int64_t perReplica = schedule.getStages() / schedule.getReplicas();
    if (SymbolTable::lookupSymbolIn(schedule, kGroupName))
      return schedule.emitOpError()
             << "has several pipeline replicas, whose gradients "
                "sched-insert-collectives sums on a new group @"
             << kGroupName << ", but a symbol of that name exists";
    // The stages each rank holds, and the ranks that share a model stage.
    // Rank ids key the maps as unsigned values: they are verified
    // non-negative, so they never meet DenseMapInfo's reserved keys.
    llvm::MapVector<uint64_t, std::set<int64_t>> held;
    llvm::DenseMap<int64_t, llvm::SmallVector<int64_t>> copies;
    for (auto rank : body.getOps<RankOp>()) {
      std::set<int64_t> &stages = held[rank.getId()];
      rank.walk([&](Operation *op) {
        if (isa<ForwardOp, BackwardOp, BackwardInputOp, BackwardWeightOp>(op))
          stages.insert(stageOf(op));
      });
      for (int64_t stage : stages)
        copies[stage % perReplica].push_back(rank.getId());
    }
    llvm::EquivalenceClasses<uint64_t> sets;
    for (auto &[id, stages] : held)
      sets.insert(id);
    for (auto &[model, ranks] : copies)
      for (int64_t id : ranks)
        sets.unionSets(ranks.front(), id);
    std::map<uint64_t, llvm::SmallVector<int64_t>> members;
    for (auto &[id, stages] : held)
      members[sets.getLeaderValue(id)].push_back(id);
    // Every member of a set all-reduces its stages in model-stage order,
    // so the members must hold the same model stages (DualPipe's ranks r
    // and P-1-r do); otherwise their sequences differ.
    auto modelStages = [&](int64_t id) {
      std::set<int64_t> models;
      for (int64_t stage : held[id])
        models.insert(stage % perReplica);
      return models;
    };
    for (auto &[leader, ranks] : members)
      for (int64_t id : ranks)
        if (modelStages(id) != modelStages(ranks.front()))
          return schedule.emitOpError()
                 << "cannot sum the gradients of its pipeline replicas: "
                    "ranks "
                 << ranks.front() << " and " << id
                 << " share a model stage but do not hold the same model "
                    "stages, so no one all-reduce order suits both";
    Builder builder(schedule.getContext());
    llvm::SmallVector<Attribute> memberAttrs;
    for (auto &[leader, ranks] : members) {
      llvm::sort(ranks);
      memberAttrs.push_back(builder.getDenseI64ArrayAttr(ranks));
    }
    llvm::DenseMap<int64_t, int64_t> parameters;
    for (auto stage : body.getOps<StageOp>())
      parameters[stage.getIndex()] = stage.getParameters();
    if (held.empty())
      return mlir::success();
    // The new declarations go after the existing ones (before the first
    // rank when there are none), so that the indices the inserted actions
    // name stay those of their declarations.
    OpBuilder declare(*body.getOps<RankOp>().begin());
    for (auto decl : body.getOps<CollectiveOp>())
      declare.setInsertionPointAfter(decl);
    GroupOp::create(declare, schedule.getLoc(), kGroupName,
                    builder.getArrayAttr(memberAttrs));
    // Declare each stage's sum too, so that the verifier holds it after the
    // stage's last gradient (bytes 0 when the stage declares no size).
    std::set<int64_t> allStages;
    for (auto &[id, stages] : held)
      allStages.insert(stages.begin(), stages.end());
    for (int64_t stage : allStages)
      CollectiveOp::create(
          declare, schedule.getLoc(), CollectiveKind::AllReduce, kGroupName,
          parameters.lookup(stage), CollectiveWhen::AfterBackward,
          declare.getI64IntegerAttr(stage));

    for (auto rank : body.getOps<RankOp>()) {
      std::vector<int64_t> stages(held[rank.getId()].begin(),
                                  held[rank.getId()].end());
      llvm::stable_sort(stages, [&](int64_t a, int64_t b) {
        return a % perReplica < b % perReplica;
      });
      Operation *step = nullptr;
      for (Operation &op : rank.getBody().front())
        if (isa<OptimizerStepOp>(op))
          step = &op;
      OpBuilder insert(step);
      for (int64_t stage : stages) {
        auto bytes = parameters.find(stage);
        AllReduceOp::create(
            insert, rank.getLoc(),
            FlatSymbolRefAttr::get(builder.getStringAttr(kGroupName)),
            insert.getI64IntegerAttr(stage),
            bytes == parameters.end() ? IntegerAttr()
                                      : insert.getI64IntegerAttr(bytes->second),
            IntegerAttr());
      }
    }
    return success();
  }

  static constexpr llvm::StringLiteral kGroupName = "replicas";
};
} // namespace
