//===- ScheduleIR.cpp - plain schedules to and from the dialect -----------===//

#include "lib/ScheduleIR/ScheduleIR.h"

#include "lib/AuxLoss/AuxLossOrder.h"
#include "lib/Limits/DiagnosticExcerpt.h"
#include "lib/Limits/ResourceLimits.h"
#include "lib/Schedule/DataParallelAxes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace sched;

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

static std::vector<StageCost> readStageCosts(Block &body, int64_t numStages) {
  std::vector<StageCost> costs;
  for (auto stage : body.getOps<StageOp>()) {
    if (costs.empty())
      costs.resize(numStages);
    StageCost &cost = costs[stage.getIndex()];
    cost.forward = stage.getForward().convertToDouble();
    cost.backwardInput = stage.getBackwardInput().convertToDouble();
    cost.backwardWeight = stage.getBackwardWeight().convertToDouble();
    cost.activation = stage.getActivation();
    cost.weightGrad = stage.getWeightGrad();
    cost.parameters = stage.getParameters();
    cost.layers = std::max<int64_t>(static_cast<int64_t>(stage.getLayers()), 1);
    if (std::optional<uint64_t> output = stage.getOutput())
      cost.output = static_cast<int64_t>(*output);
  }
  return costs;
}

int32_t sched::highestGlobalBatchHead(PipelineOp pipeline) {
  int32_t highest = -1;
  for (auto head : pipeline.getBody().front().getOps<AuxHeadOp>())
    if (head.getScope() == AuxScope::GlobalBatch)
      highest = std::max(highest, static_cast<int32_t>(head.getStage()));
  return highest;
}

PipelineShape sched::readPipelineShape(PipelineOp pipeline) {
  PipelineShape shape;
  shape.pp = static_cast<int32_t>(pipeline.getPp());
  shape.vpp = static_cast<int32_t>(pipeline.getVpp());
  shape.microbatches = static_cast<int32_t>(pipeline.getMicrobatches());
  shape.placement = pipeline.getPlacement() == Placement::V
                        ? StagePlacement::V
                        : StagePlacement::Loop;
  shape.stageCosts =
      readStageCosts(pipeline.getBody().front(), pipeline.getNumStages());
  return shape;
}

AuxLossScope sched::auxLossScope(AuxScope scope) {
  switch (scope) {
  case AuxScope::Microbatch:
    return AuxLossScope::Microbatch;
  case AuxScope::Sequence:
    return AuxLossScope::Sequence;
  case AuxScope::GlobalBatch:
    return AuxLossScope::GlobalBatch;
  case AuxScope::AuxFree:
    return AuxLossScope::AuxFree;
  }
  llvm_unreachable("every aux scope is handled");
}

namespace {
/// Reads rank bodies into plain actions.
class ScheduleReader {
public:
  ScheduleReader(Schedule &schedule,
                 std::vector<std::vector<Operation *>> *origins)
      : schedule(schedule), origins(origins) {}

  void addRank(RankOp rank) {
    rankIndex[rank.getId()] = static_cast<int32_t>(schedule.ranks.size());
    schedule.ranks.push_back({static_cast<int64_t>(rank.getId()), {}});
    if (origins)
      origins->emplace_back();
  }

  void addGroup(GroupOp group) {
    groupIndex[group.getSymName()] = static_cast<int32_t>(
        schedule.groups.size());
    ProcessGroup plain;
    plain.name = group.getSymName().str();
    plain.lazy = group.getLazy();
    for (Attribute set : group.getMembers()) {
      std::vector<int32_t> members;
      for (int64_t id : cast<DenseI64ArrayAttr>(set).asArrayRef())
        members.push_back(rankIndex.lookup(id));
      plain.members.push_back(std::move(members));
    }
    schedule.groups.push_back(std::move(plain));
  }

  void addCollective(CollectiveOp decl) {
    CollectiveDeclaration plain;
    plain.kind = actionKind(decl.getKind());
    plain.group = groupIndex.lookup(decl.getGroup());
    plain.bytes = static_cast<int64_t>(decl.getBytes());
    plain.when = timing(decl.getWhen());
    if (std::optional<uint64_t> stage = decl.getStage())
      plain.stage = static_cast<int32_t>(*stage);
    schedule.collectives.push_back(plain);
  }

  void addAuxHead(AuxHeadOp head) {
    AuxLossHead plain;
    plain.stage = static_cast<int32_t>(head.getStage());
    plain.scope = auxLossScope(head.getScope());
    if (FlatSymbolRefAttr group = head.getBiasGroupAttr()) {
      plain.biasGroup = groupIndex.lookup(group.getValue());
      plain.biasBytes = static_cast<int64_t>(head.getBiasBytes().value_or(0));
    }
    schedule.auxHeads.push_back(plain);
  }

  void readBody(size_t r, Block &body, uint32_t bundle) {
    for (Operation &op : body)
      readOp(r, op, bundle);
  }

  static ActionKind actionKind(CollectiveKind kind) {
    switch (kind) {
    case CollectiveKind::AllReduce:
      return ActionKind::AllReduce;
    case CollectiveKind::ReduceScatter:
      return ActionKind::ReduceScatter;
    case CollectiveKind::AllGather:
      return ActionKind::AllGather;
    case CollectiveKind::AllToAll:
      return ActionKind::AllToAll;
    case CollectiveKind::Barrier:
      return ActionKind::Barrier;
    }
    llvm_unreachable("every collective kind is handled");
  }

  static CollectiveTiming timing(CollectiveWhen when) {
    switch (when) {
    case CollectiveWhen::BeforeForward:
      return CollectiveTiming::BeforeForward;
    case CollectiveWhen::AfterForward:
      return CollectiveTiming::AfterForward;
    case CollectiveWhen::BeforeBackward:
      return CollectiveTiming::BeforeBackward;
    case CollectiveWhen::AfterBackward:
      return CollectiveTiming::AfterBackward;
    case CollectiveWhen::Step:
      return CollectiveTiming::Step;
    }
    llvm_unreachable("every collective timing is handled");
  }

  /// False once a stream or event could not be numbered (more than a plain
  /// schedule holds); the error is at its op.
  bool streamsFit() const { return fits; }

private:
  /// The index of `name` in `names`, added when new; the stream list
  /// starts with "default" (the stream of actions that name none).
  int32_t intern(Operation &op, std::vector<std::string> &names,
                 llvm::StringMap<int32_t> &indices, llvm::StringRef name,
                 bool isStream) {
    if (isStream && names.empty()) {
      names.push_back("default");
      indices["default"] = 0;
    }
    auto [it, added] =
        indices.try_emplace(name, static_cast<int32_t>(names.size()));
    if (added)
      names.push_back(name.str());
    if (it->second <= INT16_MAX)
      return it->second;
    op.emitOpError() << "names more than " << INT16_MAX + 1
                     << (isStream ? " streams" : " events")
                     << " in one schedule";
    fits = false;
    return 0;
  }

  void readStreams(Operation &op, Action &action) {
    if (auto stream = op.getAttrOfType<StringAttr>(kStreamAttr))
      action.stream = static_cast<uint16_t>(intern(
          op, schedule.streams, streamIndex, stream.getValue(), true));
    if (auto wait = op.getAttrOfType<StringAttr>(kWaitEventAttr))
      action.waitEvent = static_cast<int16_t>(
          intern(op, schedule.events, eventIndex, wait.getValue(), false));
    if (auto record = op.getAttrOfType<StringAttr>(kRecordEventAttr))
      action.recordEvent = static_cast<int16_t>(
          intern(op, schedule.events, eventIndex, record.getValue(), false));
  }

  void push(size_t r, Operation &op, Action action, uint32_t bundle) {
    action.bundle = bundle;
    action.layerwise = bundle != 0 && layerwiseBundle;
    readStreams(op, action);
    schedule.ranks[r].actions.push_back(action);
    if (origins)
      (*origins)[r].push_back(&op);
  }

  template <typename OpTy>
  void pushCompute(size_t r, OpTy op, ActionKind kind, uint32_t bundle) {
    push(r, *op,
         Action::compute(kind, static_cast<int32_t>(op.getStage()),
                         static_cast<int32_t>(op.getMicrobatch())),
         bundle);
  }

  template <typename OpTy>
  void pushTransfer(size_t r, OpTy op, ActionKind kind, uint32_t bundle) {
    Action action = Action::compute(kind, static_cast<int32_t>(op.getStage()),
                                    static_cast<int32_t>(op.getMicrobatch()));
    action.gradient = op.getDirection() == Direction::Backward;
    action.shape = op.getShape();
    action.peer = rankIndex.lookup(op.getPeer());
    if (FlatSymbolRefAttr comm = op.getCommAttr())
      action.communicator = groupIndex.lookup(comm.getValue());
    if (auto bytes = op.getBytes())
      action.bytes = static_cast<int64_t>(*bytes);
    push(r, *op, action, bundle);
  }

  template <typename OpTy>
  void pushCollective(size_t r, OpTy op, ActionKind kind) {
    Action action;
    action.kind = kind;
    action.group = groupIndex.lookup(op.getGroup());
    if (auto stage = op.getStage())
      action.stage = static_cast<int32_t>(*stage);
    if (auto bytes = op.getBytes())
      action.bytes = static_cast<int64_t>(*bytes);
    if (auto declaration = op.getDeclaration())
      action.declaration = static_cast<int32_t>(*declaration);
    push(r, *op, action, 0);
  }

  template <typename OpTy>
  void pushStageAction(size_t r, OpTy op, ActionKind kind) {
    Action action;
    action.kind = kind;
    action.stage = static_cast<int32_t>(op.getStage());
    push(r, *op, action, 0);
  }

  void readOp(size_t r, Operation &op, uint32_t bundle) {
    llvm::TypeSwitch<Operation *>(&op)
        .Case([&](ForwardOp f) {
          pushCompute(r, f, ActionKind::Forward, bundle);
        })
        .Case([&](BackwardOp b) {
          pushCompute(r, b, ActionKind::Backward, bundle);
        })
        .Case([&](BackwardInputOp i) {
          pushCompute(r, i, ActionKind::BackwardInput, bundle);
        })
        .Case([&](BackwardWeightOp w) {
          pushCompute(r, w, ActionKind::BackwardWeight, bundle);
        })
        .Case([&](SendOp s) { pushTransfer(r, s, ActionKind::Send, bundle); })
        .Case([&](RecvOp s) { pushTransfer(r, s, ActionKind::Recv, bundle); })
        .Case([&](OverlapOp overlap) {
          layerwiseBundle = overlap.getLayerwise();
          readBody(r, overlap.getBody().front(), ++lastBundle);
          layerwiseBundle = false;
        })
        .Case([&](P2PGroupOp group) {
          readBody(r, group->getRegion(0).front(), ++lastBundle);
        })
        .Case(
            [&](AllReduceOp c) { pushCollective(r, c, ActionKind::AllReduce); })
        .Case([&](ReduceScatterOp c) {
          pushCollective(r, c, ActionKind::ReduceScatter);
        })
        .Case(
            [&](AllGatherOp c) { pushCollective(r, c, ActionKind::AllGather); })
        .Case([&](AllToAllOp c) { pushCollective(r, c, ActionKind::AllToAll); })
        .Case([&](BarrierOp c) { pushCollective(r, c, ActionKind::Barrier); })
        .Case([&](UnshardOp u) { pushStageAction(r, u, ActionKind::Unshard); })
        .Case([&](ReshardOp u) { pushStageAction(r, u, ActionKind::Reshard); })
        .Case([&](ReduceGradOp u) {
          pushStageAction(r, u, ActionKind::ReduceGrad);
        })
        .Case([&](OptimizerStepOp) {
          Action action;
          action.kind = ActionKind::OptimizerStep;
          push(r, op, action, 0);
        });
  }

  Schedule &schedule;
  std::vector<std::vector<Operation *>> *origins;
  /// Keyed by the id's unsigned value: ids are verified non-negative, so
  /// they never meet DenseMapInfo's reserved keys.
  llvm::DenseMap<uint64_t, int32_t> rankIndex;
  llvm::StringMap<int32_t> groupIndex;
  llvm::StringMap<int32_t> streamIndex;
  llvm::StringMap<int32_t> eventIndex;
  uint32_t lastBundle = 0;
  /// Whether the overlap being read is layerwise.
  bool layerwiseBundle = false;
  bool fits = true;
};
} // namespace

/// Reads kTimeUnitAttr and kTransferTimeAttr of `op` into `schedule`;
/// fails with an error at `op` for a unit other than "s" or a transfer time
/// that is not a finite number >= 0.
static LogicalResult readTiming(Operation *op, Schedule &schedule) {
  if (Attribute unit = op->getAttr(kTimeUnitAttr)) {
    auto text = dyn_cast<StringAttr>(unit);
    if (!text || text.getValue() != "s")
      return op->emitOpError()
             << kTimeUnitAttr << " must be \"s\" (seconds), got " << unit;
    schedule.secondsPerUnit = 1;
  }
  if (Attribute transfer = op->getAttr(kTransferTimeAttr)) {
    auto time = dyn_cast<FloatAttr>(transfer);
    const double value = time ? time.getValueAsDouble() : -1;
    if (!time || !std::isfinite(value) || value < 0)
      return op->emitOpError()
             << kTransferTimeAttr << " must be a finite number >= 0, got "
             << transfer;
    schedule.transferTime = value;
  }
  return success();
}

FailureOr<Schedule>
sched::readSchedule(ScheduleOp op,
                    std::vector<std::vector<Operation *>> *origins) {
  if (failed(op.verify()))
    return failure();
  Schedule schedule;
  schedule.numStages = static_cast<int32_t>(op.getStages());
  schedule.numMicrobatches = static_cast<int32_t>(op.getMicrobatches());
  schedule.replicas = static_cast<int32_t>(op.getReplicas());
  schedule.wholeStep = op.getWholeStep();
  if (failed(readTiming(op, schedule)))
    return failure();
  Block &body = op.getBody().front();
  schedule.stageCosts = readStageCosts(body, op.getStages());
  ScheduleReader reader(schedule, origins);
  for (auto rank : body.getOps<RankOp>())
    reader.addRank(rank);
  for (auto group : body.getOps<GroupOp>())
    reader.addGroup(group);
  for (auto decl : body.getOps<CollectiveOp>())
    reader.addCollective(decl);
  for (auto head : body.getOps<AuxHeadOp>())
    reader.addAuxHead(head);
  for (auto mesh : body.getOps<MeshOp>()) {
    if (std::optional<int64_t> dp = mesh.getAxisSize(kDataParallelAxis))
      schedule.dataParallel = *dp;
    std::optional<int64_t> shard = mesh.getAxisSize(kShardAxis);
    std::optional<int64_t> replicate = mesh.getAxisSize(kReplicateAxis);
    if (shard && replicate) {
      schedule.shardGroupSize = *shard;
      schedule.dataParallel = *shard * *replicate;
    }
  }
  size_t r = 0;
  for (auto rank : body.getOps<RankOp>())
    reader.readBody(r++, rank.getBody().front(), 0);
  if (!reader.streamsFit())
    return failure();
  return schedule;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

static void writeAction(OpBuilder &builder, Location loc,
                        const Schedule &schedule, const Action &action) {
  const uint64_t stage = action.stage;
  const uint64_t mb = action.microbatch;
  IntegerAttr bytes;
  if (action.bytes >= 0)
    bytes = builder.getI64IntegerAttr(action.bytes);
  auto groupRef = [&]() {
    return FlatSymbolRefAttr::get(builder.getContext(),
                                  schedule.groups[action.group].name);
  };
  IntegerAttr collectiveStage, declaration;
  if (action.stage >= 0)
    collectiveStage = builder.getI64IntegerAttr(action.stage);
  if (action.declaration >= 0)
    declaration = builder.getI64IntegerAttr(action.declaration);
  switch (action.kind) {
  case ActionKind::Forward:
    ForwardOp::create(builder, loc, stage, mb);
    return;
  case ActionKind::Backward:
    BackwardOp::create(builder, loc, stage, mb);
    return;
  case ActionKind::BackwardInput:
    BackwardInputOp::create(builder, loc, stage, mb);
    return;
  case ActionKind::BackwardWeight:
    BackwardWeightOp::create(builder, loc, stage, mb);
    return;
  case ActionKind::Send:
  case ActionKind::Recv: {
    Direction direction =
        action.gradient ? Direction::Backward : Direction::Forward;
    uint64_t peer = schedule.ranks[action.peer].id;
    FlatSymbolRefAttr comm;
    if (action.communicator >= 0)
      comm = FlatSymbolRefAttr::get(builder.getContext(),
                                    schedule.groups[action.communicator].name);
    if (action.kind == ActionKind::Send)
      SendOp::create(builder, loc, direction, stage, mb, peer, comm, bytes,
                     action.shape);
    else
      RecvOp::create(builder, loc, direction, stage, mb, peer, comm, bytes,
                     action.shape);
    return;
  }
  case ActionKind::AllReduce:
    AllReduceOp::create(builder, loc, groupRef(), collectiveStage, bytes,
                        declaration);
    return;
  case ActionKind::ReduceScatter:
    ReduceScatterOp::create(builder, loc, groupRef(), collectiveStage, bytes,
                            declaration);
    return;
  case ActionKind::AllGather:
    AllGatherOp::create(builder, loc, groupRef(), collectiveStage, bytes,
                        declaration);
    return;
  case ActionKind::AllToAll:
    AllToAllOp::create(builder, loc, groupRef(), collectiveStage, bytes,
                       declaration);
    return;
  case ActionKind::Barrier:
    BarrierOp::create(builder, loc, groupRef(), collectiveStage, bytes,
                      declaration);
    return;
  case ActionKind::Unshard:
    UnshardOp::create(builder, loc, stage);
    return;
  case ActionKind::Reshard:
    ReshardOp::create(builder, loc, stage);
    return;
  case ActionKind::ReduceGrad:
    ReduceGradOp::create(builder, loc, stage);
    return;
  case ActionKind::OptimizerStep:
    OptimizerStepOp::create(builder, loc);
    return;
  }
}

/// Puts the stream and events of `action` on the op just written for it
/// (the last op of the builder's block).
static void writeStreams(OpBuilder &builder, const Schedule &schedule,
                         const Action &action) {
  Operation &op = builder.getInsertionBlock()->back();
  if (action.stream != 0)
    op.setAttr(kStreamAttr,
               builder.getStringAttr(schedule.streamName(action.stream)));
  if (action.waitEvent >= 0)
    op.setAttr(kWaitEventAttr,
               builder.getStringAttr(schedule.events[action.waitEvent]));
  if (action.recordEvent >= 0)
    op.setAttr(kRecordEventAttr,
               builder.getStringAttr(schedule.events[action.recordEvent]));
}

/// Writes the bundle of actions [begin, end) of one rank: an overlap when
/// they compute, a p2p group when they transfer.
static void writeBundle(OpBuilder &builder,
                        llvm::function_ref<Location(size_t)> locate,
                        const Schedule &schedule, llvm::ArrayRef<Action> bundle,
                        size_t first) {
  OpBuilder::InsertionGuard guard(builder);
  Operation *region;
  if (isCompute(bundle.front().kind))
    region = OverlapOp::create(builder, locate(first),
                               /*layerwise=*/bundle.front().layerwise);
  else
    region = P2PGroupOp::create(builder, locate(first));
  builder.createBlock(&region->getRegion(0));
  for (size_t k = 0; k < bundle.size(); ++k) {
    writeAction(builder, locate(first + k), schedule, bundle[k]);
    writeStreams(builder, schedule, bundle[k]);
  }
}

void sched::writeRankPrograms(OpBuilder &builder, ScheduleOp op,
                              const Schedule &schedule,
                              const ProgramLocations *locations) {
  OpBuilder::InsertionGuard guard(builder);
  const Location loc = op.getLoc();
  Block &body = op.getBody().front();
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    const RankProgram &program = schedule.ranks[r];
    auto locate = [&](size_t i) {
      return locations ? locations->actions[r][i] : loc;
    };
    builder.setInsertionPointToEnd(&body);
    auto rank = RankOp::create(builder, locations ? locations->ranks[r] : loc,
                               program.id);
    Block *rankBody = builder.createBlock(&rank.getBody());
    builder.setInsertionPointToEnd(rankBody);
    llvm::ArrayRef<Action> actions = program.actions;
    for (size_t i = 0; i < actions.size();) {
      size_t end = i + 1;
      if (actions[i].bundle == 0) {
        writeAction(builder, locate(i), schedule, actions[i]);
        writeStreams(builder, schedule, actions[i]);
        i = end;
        continue;
      }
      while (end < actions.size() && actions[end].bundle == actions[i].bundle)
        ++end;
      writeBundle(builder, locate, schedule, actions.slice(i, end - i), i);
      i = end;
    }
  }
}

/// Gives every declaration in `body` that names a stage (sched.stage, aux
/// heads, per-stage collectives) one copy per further pipeline replica,
/// `perReplica` stages apart: the pipeline declares one replica's stages,
/// its schedule holds them all.
static void copyStageDeclarations(Block &body, int64_t perReplica,
                                  int64_t replicas) {
  llvm::SmallVector<Operation *> named;
  for (Operation &op : body) {
    auto collective = dyn_cast<CollectiveOp>(op);
    if (isa<StageOp, AuxHeadOp>(op) || (collective && collective.getStage()))
      named.push_back(&op);
  }
  OpBuilder builder = OpBuilder::atBlockEnd(&body);
  for (int64_t j = 1; j < replicas; ++j)
    for (Operation *op : named) {
      const int64_t shift = j * perReplica;
      Operation *copy = builder.clone(*op);
      if (auto stage = dyn_cast<StageOp>(copy))
        stage.setIndex(stage.getIndex() + shift);
      else if (auto head = dyn_cast<AuxHeadOp>(copy))
        head.setStage(head.getStage() + shift);
      else if (auto collective = dyn_cast<CollectiveOp>(copy))
        collective.setStage(*collective.getStage() + shift);
    }
}

/// Reports each global-batch head of `pipeline` whose order `schedule`
/// breaks, with the three ways out. Returns failure if it reported any.
static LogicalResult checkAuxHeads(PipelineOp pipeline, Strategy strategy,
                                   const Schedule &schedule) {
  bool ok = true;
  for (auto head : pipeline.getBody().front().getOps<AuxHeadOp>()) {
    if (head.getScope() != AuxScope::GlobalBatch)
      continue;
    std::optional<AuxLossConflict> conflict =
        findAuxLossConflict(schedule, static_cast<int32_t>(head.getStage()));
    if (!conflict)
      continue;
    ok = false;
    head.emitError() << "the " << strategyName(strategy)
                     << " order breaks the global_batch aux head at stage "
                     << head.getStage() << ": "
                     << describeAuxLossConflict(*conflict)
                     << "; ways out: reorder the stages at and below the "
                        "head into all forwards, then all backwards "
                        "(sched-legalize-aux-loss mode=reorder; more "
                        "activation memory), balance without the loss "
                        "(mode=aux-free: a bias update after the step, no "
                        "gradient dependency), or compute the loss per "
                        "microbatch (scope microbatch or sequence)";
  }
  return success(ok);
}

LogicalResult sched::lowerPipeline(PipelineOp pipeline, Strategy strategy,
                                   int64_t memoryBudget,
                                   bool keepAuxConflicts) {
  const PipelineShape shape = readPipelineShape(pipeline);
  auto refuse = [&](llvm::Error error) {
    return pipeline.emitOpError()
           << "cannot be lowered: " << llvm::toString(std::move(error));
  };
  if (llvm::Error error = checkPipelineShape(strategy, shape))
    return refuse(std::move(error));
  if (llvm::Error error = checkMemoryBudget(
          MemoryPath::Lower, computeRequestSize(strategy, shape), memoryBudget,
          "lowering with " + strategyName(strategy).str(),
          "the pass option memory-budget=SIZE"))
    return refuse(std::move(error));
  llvm::Expected<Schedule> schedule = generateSchedule(strategy, shape);
  if (!schedule)
    return refuse(schedule.takeError());
  if (!keepAuxConflicts && failed(checkAuxHeads(pipeline, strategy, *schedule)))
    return failure();
  replacePipeline(pipeline, *schedule);
  return success();
}

ScheduleOp sched::replacePipeline(PipelineOp pipeline,
                                  const Schedule &schedule) {
  OpBuilder builder(pipeline);
  auto op = ScheduleOp::create(
      builder, pipeline.getLoc(), pipeline.getSymName(),
      static_cast<uint64_t>(schedule.numStages),
      static_cast<uint64_t>(schedule.numMicrobatches),
      static_cast<uint64_t>(schedule.replicas),
      pipeline.getMemoryLimitAttr(), /*whole_step=*/false);
  // The time unit and transfer time, and any other discardable attribute,
  // stay with the step.
  op->setDiscardableAttrs(pipeline->getDiscardableAttrDictionary());
  Block *body = builder.createBlock(&op.getBody());
  // Declarations keep their order and move into the schedule ahead of the
  // rank programs.
  body->getOperations().splice(body->end(),
                               pipeline.getBody().front().getOperations());
  if (schedule.replicas > 1)
    copyStageDeclarations(*body, schedule.stagesPerReplica(),
                          schedule.replicas);
  writeRankPrograms(builder, op, schedule);
  pipeline.erase();
  return op;
}

LogicalResult sched::lowerPipelines(ModuleOp module, Strategy strategy,
                                    const MemoryBudgetOption &memoryBudget,
                                    llvm::StringRef auxConflicts) {
  llvm::Expected<int64_t> budget = memoryBudgetBytes(memoryBudget);
  // At no location: the option is wrong, not the module, and an error on
  // the module would print it (mlir-opt prints the op of a diagnostic).
  if (!budget)
    return mlir::emitError(mlir::UnknownLoc::get(module.getContext()))
           << "sched-lower-" << strategyName(strategy) << ": "
           << llvm::toString(budget.takeError());
  if (auxConflicts != "error" && auxConflicts != "keep")
    return module.emitError()
           << "sched-lower-" << strategyName(strategy)
           << ": aux-conflicts must be 'error' or 'keep', got '"
           << clipForMessage(auxConflicts) << "'";
  for (auto pipeline : llvm::make_early_inc_range(module.getOps<PipelineOp>()))
    if (failed(lowerPipeline(pipeline, strategy, *budget,
                             auxConflicts == "keep")))
      return failure();
  return success();
}
