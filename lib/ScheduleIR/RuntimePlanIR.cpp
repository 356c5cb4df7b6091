//===- RuntimePlanIR.cpp - runtime plans to and from the dialect ----------===//
//
// A runtime plan is a sched.schedule plus the mesh, aux heads and the
// buffer slots of sched-assign-buffers (the `sched.slot` and
// `sched.recv_slot` attributes of its actions).
//
//===----------------------------------------------------------------------===//

#include "lib/ScheduleIR/ScheduleIR.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace sched;

/// The value of integer attribute `name` of `op`, -1 when it has none.
static int64_t slotOf(Operation *op, StringRef name) {
  auto attr = dyn_cast_or_null<IntegerAttr>(op->getAttr(name));
  return attr ? attr.getInt() : -1;
}

FailureOr<RuntimePlan> sched::readRuntimePlan(ScheduleOp op) {
  RuntimePlan plan;
  std::vector<std::vector<Operation *>> origins;
  FailureOr<Schedule> schedule = readSchedule(op, &origins);
  if (failed(schedule))
    return failure();
  plan.name = op.getSymName().str();
  plan.schedule = std::move(*schedule);
  Block &body = op.getBody().front();
  for (auto mesh : body.getOps<MeshOp>())
    for (auto [axis, size] : llvm::zip(mesh.getAxes(), mesh.getSizes()))
      plan.mesh.push_back({cast<StringAttr>(axis).getValue().str(),
                           static_cast<int64_t>(size)});
  for (auto head : body.getOps<AuxHeadOp>()) {
    AuxHead out{static_cast<int32_t>(head.getStage()),
                stringifyAuxScope(head.getScope()).str()};
    if (auto group = head.getBiasGroupAttr()) {
      out.biasGroup = group.getValue().str();
      out.biasBytes = static_cast<int64_t>(head.getBiasBytes().value_or(0));
    }
    plan.auxHeads.push_back(out);
  }
  bool anySlot = false;
  for (const std::vector<Operation *> &rank : origins) {
    std::vector<BufferSlots> &slots = plan.slots.emplace_back();
    for (Operation *action : rank) {
      slots.push_back(
          {slotOf(action, "sched.slot"), slotOf(action, "sched.recv_slot")});
      anySlot |= slots.back().slot >= 0 || slots.back().recvSlot >= 0;
    }
  }
  if (!anySlot)
    plan.slots.clear();
  if (std::optional<uint64_t> limit = op.getMemoryLimit()) {
    plan.verdict.memoryLimit = static_cast<double>(*limit);
    plan.verdict.memoryLimitText = std::to_string(*limit);
  }
  return plan;
}

/// Declares the stages, mesh, groups, collectives and aux heads of `plan`
/// in the body of `op`.
static void writeDeclarations(OpBuilder &builder, Location loc,
                              const RuntimePlan &plan) {
  const Schedule &schedule = plan.schedule;
  for (size_t s = 0; s < schedule.stageCosts.size(); ++s) {
    const StageCost &cost = schedule.stageCosts[s];
    StageOp::create(builder, loc,
                    builder.getI64IntegerAttr(static_cast<int64_t>(s)),
                    builder.getI64IntegerAttr(cost.layers),
                    builder.getF64FloatAttr(cost.forward),
                    builder.getF64FloatAttr(cost.backwardInput),
                    builder.getF64FloatAttr(cost.backwardWeight),
                    builder.getI64IntegerAttr(cost.activation),
                    builder.getI64IntegerAttr(cost.weightGrad),
                    builder.getI64IntegerAttr(cost.parameters),
                    cost.output >= 0 ? builder.getI64IntegerAttr(cost.output)
                                     : IntegerAttr());
  }
  if (!plan.mesh.empty()) {
    llvm::SmallVector<StringRef> axes;
    llvm::SmallVector<int64_t> sizes;
    for (const MeshAxis &axis : plan.mesh) {
      axes.push_back(axis.name);
      sizes.push_back(axis.size);
    }
    MeshOp::create(builder, loc, builder.getStrArrayAttr(axes),
                   builder.getDenseI64ArrayAttr(sizes));
  }
  for (const ProcessGroup &group : schedule.groups) {
    llvm::SmallVector<Attribute> sets;
    for (const std::vector<int32_t> &set : group.members) {
      llvm::SmallVector<int64_t> ids;
      for (int32_t index : set)
        ids.push_back(schedule.ranks[index].id);
      sets.push_back(builder.getDenseI64ArrayAttr(ids));
    }
    GroupOp::create(builder, loc, builder.getStringAttr(group.name),
                    builder.getArrayAttr(sets), group.lazy);
  }
  for (const CollectiveDeclaration &decl : schedule.collectives)
    CollectiveOp::create(
        builder, loc,
        CollectiveKindAttr::get(
            builder.getContext(),
            *symbolizeCollectiveKind(planOpName(decl.kind))),
        FlatSymbolRefAttr::get(builder.getContext(),
                               schedule.groups[decl.group].name),
        builder.getI64IntegerAttr(decl.bytes),
        CollectiveWhenAttr::get(
            builder.getContext(),
            *symbolizeCollectiveWhen(collectiveTimingName(decl.when))),
        decl.stage >= 0 ? builder.getI64IntegerAttr(decl.stage)
                        : IntegerAttr());
  for (const AuxHead &head : plan.auxHeads)
    AuxHeadOp::create(
        builder, loc, builder.getI64IntegerAttr(head.stage),
        AuxScopeAttr::get(builder.getContext(), *symbolizeAuxScope(head.scope)),
        head.biasGroup.empty()
            ? FlatSymbolRefAttr()
            : FlatSymbolRefAttr::get(builder.getContext(), head.biasGroup),
        head.biasGroup.empty() ? IntegerAttr()
                               : builder.getI64IntegerAttr(head.biasBytes));
}

/// Sets the slot attributes of the actions of `op`, visited in program
/// order as sched-assign-buffers visits them.
static void writeSlots(ScheduleOp op, const RuntimePlan &plan) {
  Builder builder(op.getContext());
  size_t r = 0;
  for (auto rank : op.getBody().front().getOps<RankOp>()) {
    if (r >= plan.slots.size())
      return;
    const std::vector<BufferSlots> &slots = plan.slots[r++];
    size_t i = 0;
    rank.getBody().walk<WalkOrder::PreOrder>([&](Operation *action) {
      if (isa<OverlapOp, P2PGroupOp>(action) || i >= slots.size())
        return;
      const BufferSlots &slot = slots[i++];
      if (slot.slot >= 0)
        action->setAttr("sched.slot", builder.getI64IntegerAttr(slot.slot));
      if (slot.recvSlot >= 0)
        action->setAttr("sched.recv_slot",
                        builder.getI64IntegerAttr(slot.recvSlot));
    });
  }
}

ScheduleOp sched::writeRuntimePlan(OpBuilder &builder, Location loc,
                                   const RuntimePlan &plan,
                                   const ProgramLocations *locations) {
  const Schedule &schedule = plan.schedule;
  IntegerAttr memoryLimit;
  int64_t exact = 0;
  if (!plan.verdict.memoryLimitText.empty()) {
    if (!llvm::StringRef(plan.verdict.memoryLimitText).getAsInteger(10, exact))
      memoryLimit = builder.getI64IntegerAttr(exact);
  } else if (plan.verdict.memoryLimit &&
             *plan.verdict.memoryLimit ==
                 static_cast<double>(
                     static_cast<int64_t>(*plan.verdict.memoryLimit)))
    memoryLimit = builder.getI64IntegerAttr(
        static_cast<int64_t>(*plan.verdict.memoryLimit));
  auto op = ScheduleOp::create(
      builder, loc, builder.getStringAttr(plan.name),
      builder.getI64IntegerAttr(schedule.numStages),
      builder.getI64IntegerAttr(schedule.numMicrobatches),
      builder.getI64IntegerAttr(schedule.replicas), memoryLimit,
      schedule.wholeStep ? builder.getUnitAttr() : UnitAttr());
  OpBuilder::InsertionGuard guard(builder);
  builder.createBlock(&op.getBody());
  writeDeclarations(builder, loc, plan);
  writeRankPrograms(builder, op, schedule, locations);
  writeSlots(op, plan);
  return op;
}
