//===- SchedOps.cpp - operations of the sched dialect ---------------------===//
//
// Local verifiers of the sched ops and the custom assembly directives.
// Global properties (completeness, dependencies, deadlock, memory) are the
// business of the schedule verifier, not of these op verifiers.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedOps.h"
#include "lib/Limits/ActionTime.h"
#include "lib/Limits/PipelineLimits.h"
#include "lib/Schedule/DataParallelAxes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace sched;

#include "dialects/Sched/SchedEnums.cpp.inc"

/// The largest number of stages, ranks or microbatches a pipeline may name
/// (lib/Limits/PipelineLimits.h, shared with the generators).
static constexpr int64_t kMaxStages = kMaxPipelineStages;
static constexpr int64_t kMaxMicrobatches = kMaxPipelineMicrobatches;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// Parses `[[0, 1], [2, 3]]` into an array of dense i64 arrays.
static ParseResult parseRankSets(OpAsmParser &parser, ArrayAttr &members) {
  SmallVector<Attribute> sets;
  auto parseSet = [&]() -> ParseResult {
    SmallVector<int64_t> ranks;
    if (parser.parseCommaSeparatedList(
            AsmParser::Delimiter::Square, [&]() -> ParseResult {
              int64_t rank;
              if (parser.parseInteger(rank))
                return failure();
              ranks.push_back(rank);
              return success();
            }))
      return failure();
    sets.push_back(parser.getBuilder().getDenseI64ArrayAttr(ranks));
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseSet))
    return failure();
  members = parser.getBuilder().getArrayAttr(sets);
  return success();
}

static void printRankSets(OpAsmPrinter &printer, Operation *,
                          ArrayAttr members) {
  printer << '[';
  llvm::interleaveComma(members, printer, [&](Attribute set) {
    printer << '[';
    if (auto ranks = llvm::dyn_cast<DenseI64ArrayAttr>(set))
      llvm::interleaveComma(ranks.asArrayRef(), printer);
    printer << ']';
  });
  printer << ']';
}

/// Parses `dp = 2, pp = 4, tp = 8`.
static ParseResult parseMeshAxes(OpAsmParser &parser, ArrayAttr &axes,
                                 DenseI64ArrayAttr &sizes) {
  SmallVector<Attribute> names;
  SmallVector<int64_t> values;
  auto parseAxis = [&]() -> ParseResult {
    std::string name;
    int64_t size;
    if (parser.parseKeywordOrString(&name) || parser.parseEqual() ||
        parser.parseInteger(size))
      return failure();
    names.push_back(parser.getBuilder().getStringAttr(name));
    values.push_back(size);
    return success();
  };
  if (parser.parseCommaSeparatedList(parseAxis))
    return failure();
  axes = parser.getBuilder().getArrayAttr(names);
  sizes = parser.getBuilder().getDenseI64ArrayAttr(values);
  return success();
}

static void printMeshAxes(OpAsmPrinter &printer, Operation *, ArrayAttr axes,
                          DenseI64ArrayAttr sizes) {
  for (auto [k, axis] : llvm::enumerate(axes)) {
    if (k)
      printer << ", ";
    printer.printKeywordOrString(cast<StringAttr>(axis).getValue());
    if (k < static_cast<size_t>(sizes.size()))
      printer << " = " << sizes[k];
  }
}

#define GET_OP_CLASSES
#include "dialects/Sched/SchedOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

namespace {
/// The index space an op's stage and microbatch indices must fall in: the
/// enclosing pipeline or schedule.
struct IndexSpace {
  Operation *owner = nullptr;
  int64_t stages = 0;
  int64_t microbatches = 0;
  StringRef ownerName;
};
} // namespace

static IndexSpace getIndexSpace(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (auto schedule = dyn_cast<ScheduleOp>(parent))
      return {parent, static_cast<int64_t>(schedule.getStages()),
              static_cast<int64_t>(schedule.getMicrobatches()), "schedule"};
    if (auto pipeline = dyn_cast<PipelineOp>(parent))
      return {parent, pipeline.getNumStages(),
              static_cast<int64_t>(pipeline.getMicrobatches()), "pipeline"};
  }
  return {};
}

static LogicalResult checkStage(Operation *op, int64_t stage,
                                StringRef what = "stage") {
  IndexSpace space = getIndexSpace(op);
  if (!space.owner || stage < space.stages)
    return success();
  return op->emitOpError() << what << " " << stage
                           << " is out of range: the " << space.ownerName
                           << " has " << space.stages << " stages (0.."
                           << space.stages - 1 << ")";
}

static LogicalResult checkMicrobatch(Operation *op, int64_t microbatch) {
  IndexSpace space = getIndexSpace(op);
  if (!space.owner || microbatch < space.microbatches)
    return success();
  return op->emitOpError() << "microbatch " << microbatch
                           << " is out of range: the " << space.ownerName
                           << " has " << space.microbatches
                           << " microbatches (0.." << space.microbatches - 1
                           << ")";
}

//===----------------------------------------------------------------------===//
// PipelineOp
//===----------------------------------------------------------------------===//

/// Checks that the stage declarations in `body` are either absent or name
/// every stage in [0, numStages) exactly once.
static LogicalResult verifyStageDecls(Operation *owner, Block &body,
                                      int64_t numStages) {
  // Stage indices are verified non-negative, so as unsigned keys they never
  // meet DenseMapInfo's reserved ones.
  llvm::DenseMap<uint64_t, StageOp> seen;
  for (auto stage : body.getOps<StageOp>()) {
    auto [it, inserted] = seen.try_emplace(stage.getIndex(), stage);
    if (inserted)
      continue;
    InFlightDiagnostic diag = stage.emitOpError()
                              << "declares stage " << stage.getIndex()
                              << " a second time";
    diag.attachNote(it->second.getLoc()) << "first declared here";
    return diag;
  }
  if (seen.empty() || static_cast<int64_t>(seen.size()) == numStages)
    return success();
  for (int64_t s = 0; s < numStages; ++s)
    if (!seen.count(s))
      return owner->emitOpError()
             << "declares " << seen.size() << " of its " << numStages
             << " stages: stage " << s
             << " has no sched.stage (declare all stages or none)";
  return success();
}

LogicalResult PipelineOp::verify() {
  if (getPp() > kMaxStages || getVpp() > kMaxStages ||
      getPp() * getVpp() > kMaxStages)
    return emitOpError() << "has " << getPp() << " x " << getVpp()
                         << " stages; at most " << kMaxStages
                         << " are supported";
  if (getMicrobatches() > kMaxMicrobatches)
    return emitOpError() << "has " << getMicrobatches()
                         << " microbatches; at most " << kMaxMicrobatches
                         << " are supported";
  if (getPlacement() == Placement::V && getVpp() != 2)
    return emitOpError() << "placement v needs exactly 2 stages per rank, "
                            "but vpp is "
                         << getVpp();
  return success();
}

LogicalResult PipelineOp::verifyRegions() {
  return verifyStageDecls(*this, getBody().front(), getNumStages());
}

//===----------------------------------------------------------------------===//
// StageOp, AuxHeadOp
//===----------------------------------------------------------------------===//

LogicalResult StageOp::verify() {
  if (failed(checkStage(*this, getIndex())))
    return failure();
  for (auto [name, cost] :
       {std::pair<StringRef, double>{"forward", getForward().convertToDouble()},
        {"backward_input", getBackwardInput().convertToDouble()},
        {"backward_weight", getBackwardWeight().convertToDouble()}})
    if (!std::isfinite(cost) || cost < 0 ||
        (cost != 0 && cost < kMinActionTime))
      return emitOpError() << name << " cost must be 0 or a finite number "
                           << ">= 1e-300, got " << cost;
  if (getWeightGrad() > getActivation())
    return emitOpError() << "weight_grad (" << getWeightGrad()
                         << " bytes) exceeds activation ("
                         << getActivation()
                         << " bytes): it is the part of the activations "
                            "that survives the input gradient";
  return success();
}


//===----------------------------------------------------------------------===//
// GroupOp, CollectiveOp
//===----------------------------------------------------------------------===//

ArrayRef<int64_t> GroupOp::getMemberSet(int64_t rank) {
  for (Attribute set : getMembers()) {
    ArrayRef<int64_t> ranks = cast<DenseI64ArrayAttr>(set).asArrayRef();
    if (llvm::is_contained(ranks, rank))
      return ranks;
  }
  return {};
}

LogicalResult GroupOp::verify() {
  if (getMembers().empty())
    return emitOpError() << "has no member sets";
  // A group named after a hybrid-sharding axis spans the replicas along it:
  // the mesh beside it must have that axis.
  const ReplicaSpan span = replicaSpanOf(getSymName());
  if (span == ReplicaSpan::Shard || span == ReplicaSpan::Replicate) {
    bool declared = false;
    for (auto mesh : (*this)->getBlock()->getOps<MeshOp>())
      declared |= mesh.getAxisSize(getSymName()).has_value();
    if (!declared)
      return emitOpError() << "@" << getSymName()
                           << " spans the replicas along the mesh axis '"
                           << getSymName()
                           << "', but no sched.mesh beside it has one";
  }
  // A pipeline's ranks are 0..pp-1; a schedule's are its sched.rank ops,
  // which ScheduleOp::verifyRegions matches against the members.
  auto pipeline = dyn_cast<PipelineOp>((*this)->getParentOp());
  llvm::DenseSet<int64_t> seen;
  for (Attribute set : getMembers()) {
    auto ranks = dyn_cast<DenseI64ArrayAttr>(set);
    if (!ranks)
      return emitOpError() << "member sets must be lists of ranks";
    if (ranks.empty())
      return emitOpError() << "has an empty member set";
    for (int64_t rank : ranks.asArrayRef()) {
      if (rank < 0 || rank > kMaxRankId)
        return emitOpError() << "names rank " << rank
                             << "; rank ids run from 0 to " << kMaxRankId;
      if (!seen.insert(rank).second)
        return emitOpError() << "names rank " << rank
                             << " in two member sets (they must be disjoint)";
      if (pipeline && rank >= static_cast<int64_t>(pipeline.getPp()))
        return emitOpError()
               << "names rank " << rank << ", but the pipeline has "
               << pipeline.getPp() << " ranks";
    }
  }
  return success();
}

/// Resolves `name` to a sched.group visible from `op`.
static FailureOr<GroupOp> lookupGroup(Operation *op, FlatSymbolRefAttr name) {
  Operation *symbol = SymbolTable::lookupNearestSymbolFrom(op, name);
  if (auto group = dyn_cast_or_null<GroupOp>(symbol))
    return group;
  return op->emitOpError() << "names group " << name
                           << ", which is not declared by a sched.group";
}

LogicalResult AuxHeadOp::verify() {
  if (failed(checkStage(*this, getStage())))
    return failure();
  if (!getBiasGroup())
    return success();
  if (getScope() != AuxScope::AuxFree)
    return emitOpError() << "has a bias update, but only an aux_free head "
                            "updates a bias (scope is "
                         << stringifyAuxScope(getScope()) << ")";
  if (!getBiasBytes())
    return emitOpError() << "names bias group " << getBiasGroupAttr()
                         << " without the bytes of its all-reduce";
  return success(succeeded(lookupGroup(*this, getBiasGroupAttr())));
}

LogicalResult CollectiveOp::verify() {
  if (failed(lookupGroup(*this, getGroupAttr())))
    return failure();
  if (std::optional<uint64_t> stage = getStage())
    return checkStage(*this, *stage);
  return success();
}

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

std::optional<int64_t> MeshOp::getAxisSize(StringRef name) {
  for (auto [axis, size] : llvm::zip(getAxes(), getSizes()))
    if (cast<StringAttr>(axis).getValue() == name)
      return size;
  return std::nullopt;
}

LogicalResult MeshOp::verify() {
  if (getAxes().empty())
    return emitOpError() << "has no axes";
  if (getAxes().size() != static_cast<size_t>(getSizes().size()))
    return emitOpError() << "names " << getAxes().size() << " axes but gives "
                         << getSizes().size() << " sizes";
  llvm::StringSet<> seen;
  int64_t devices = 1;
  for (auto [axis, size] : llvm::zip(getAxes(), getSizes())) {
    StringRef name = cast<StringAttr>(axis).getValue();
    if (!seen.insert(name).second)
      return emitOpError() << "names axis '" << name << "' twice";
    if (size < 1)
      return emitOpError() << "axis '" << name << "' has size " << size
                           << "; sizes must be at least 1";
    if (devices > (int64_t(1) << 40) / size)
      return emitOpError() << "spans more than 2^40 devices";
    devices *= size;
  }
  llvm::SmallVector<std::pair<StringRef, int64_t>> axes;
  for (auto [axis, size] : llvm::zip(getAxes(), getSizes()))
    axes.push_back({cast<StringAttr>(axis).getValue(), size});
  if (std::string why = dataParallelAxesError(axes); !why.empty())
    return emitOpError() << why;
  auto pipeline = dyn_cast<PipelineOp>((*this)->getParentOp());
  std::optional<int64_t> pp = getAxisSize("pp");
  if (pipeline && pp && *pp != static_cast<int64_t>(pipeline.getPp()))
    return emitOpError() << "axis 'pp' has size " << *pp
                         << ", but the pipeline has pp " << pipeline.getPp();
  return success();
}

//===----------------------------------------------------------------------===//
// ScheduleOp, RankOp
//===----------------------------------------------------------------------===//

namespace {
/// What the actions of a schedule may refer to, indexed once so that
/// checking every reference costs a lookup, not a scan of the schedule.
/// Rank ids key the maps as unsigned values: they are verified to lie in
/// [0, kMaxRankId], so they never meet DenseMapInfo's reserved keys.
struct ScheduleSymbols {
  llvm::DenseMap<uint64_t, RankOp> ranks;
  /// Per sched.group, every rank of its member sets.
  llvm::StringMap<llvm::DenseSet<uint64_t>> groupMembers;
};
} // namespace

/// Indexes the ranks of `body`; fails at a rank id given a second program.
static LogicalResult indexRanks(Block &body, ScheduleSymbols &symbols) {
  for (auto rank : body.getOps<RankOp>()) {
    auto [it, inserted] = symbols.ranks.try_emplace(rank.getId(), rank);
    if (inserted)
      continue;
    InFlightDiagnostic diag = rank.emitOpError() << "rank " << rank.getId()
                                                 << " has a second program";
    diag.attachNote(it->second.getLoc()) << "first program here";
    return diag;
  }
  return success();
}

/// Indexes the groups of `body`; fails at a member without a sched.rank.
static LogicalResult indexGroups(Block &body, ScheduleSymbols &symbols) {
  for (auto group : body.getOps<GroupOp>()) {
    llvm::DenseSet<uint64_t> &members =
        symbols.groupMembers[group.getSymName()];
    for (Attribute set : group.getMembers())
      for (int64_t rank : cast<DenseI64ArrayAttr>(set).asArrayRef()) {
        if (!symbols.ranks.count(rank))
          return group.emitOpError()
                 << "names rank " << rank
                 << ", but the schedule has no sched.rank " << rank;
        members.insert(rank);
      }
  }
  return success();
}

/// Checks that the peer of a transfer has a sched.rank.
static LogicalResult verifyPeer(Operation *op, uint64_t peer,
                                const ScheduleSymbols &symbols) {
  if (symbols.ranks.count(peer))
    return success();
  return op->emitOpError() << "names peer rank " << peer
                           << ", but the schedule has no sched.rank " << peer;
}

/// Checks the communicator a transfer of `rank` runs on, if it names one:
/// a sched.group whose member set holding `rank` holds the peer too.
static LogicalResult verifyTransferComm(Operation *op,
                                        FlatSymbolRefAttr comm, RankOp rank,
                                        uint64_t peer) {
  if (!comm)
    return success();
  auto group = SymbolTable::lookupNearestSymbolFrom<GroupOp>(op, comm);
  if (!group)
    return op->emitOpError() << "runs on group " << comm
                             << ", which is not declared by a sched.group";
  llvm::ArrayRef<int64_t> set = group.getMemberSet(rank.getId());
  if (llvm::is_contained(set, static_cast<int64_t>(rank.getId())) &&
      llvm::is_contained(set, static_cast<int64_t>(peer)))
    return success();
  return op->emitOpError() << "runs on group " << comm << ", but no member "
                           << "set of it holds both rank " << rank.getId()
                           << " and its peer " << peer;
}

/// Checks that a collective issued by `rank` names a sched.group of the
/// schedule that has `rank` as a member.
static LogicalResult verifyCollectiveGroup(Operation *op,
                                           FlatSymbolRefAttr name, RankOp rank,
                                           const ScheduleSymbols &symbols) {
  auto group = symbols.groupMembers.find(name.getValue());
  if (group == symbols.groupMembers.end())
    return op->emitOpError() << "names group " << name
                             << ", which is not declared by a sched.group";
  if (group->second.count(rank.getId()))
    return success();
  return op->emitOpError() << "is issued by rank " << rank.getId()
                           << ", which is not a member of group " << name;
}

/// Checks what the actions of `rank` name outside it: transfer peers and
/// collective groups.
static LogicalResult verifyRankReferences(RankOp rank,
                                          const ScheduleSymbols &symbols) {
  WalkResult result = rank.walk([&](Operation *op) {
    LogicalResult verdict =
        llvm::TypeSwitch<Operation *, LogicalResult>(op)
            .Case([&](SendOp send) {
              if (failed(verifyPeer(send, send.getPeer(), symbols)))
                return failure();
              return verifyTransferComm(send, send.getCommAttr(), rank,
                                        send.getPeer());
            })
            .Case([&](RecvOp recv) {
              if (failed(verifyPeer(recv, recv.getPeer(), symbols)))
                return failure();
              return verifyTransferComm(recv, recv.getCommAttr(), rank,
                                        recv.getPeer());
            })
            .Case<AllReduceOp, ReduceScatterOp, AllGatherOp, AllToAllOp,
                  BarrierOp>([&](auto collective) {
              return verifyCollectiveGroup(
                  collective, collective.getGroupAttr(), rank, symbols);
            })
            .Default([](Operation *) { return success(); });
    return failed(verdict) ? WalkResult::interrupt() : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult ScheduleOp::verifyRegions() {
  if (getStages() > kMaxStages)
    return emitOpError() << "has " << getStages() << " stages; at most "
                         << kMaxStages << " are supported";
  if (getMicrobatches() > kMaxMicrobatches)
    return emitOpError() << "has " << getMicrobatches()
                         << " microbatches; at most " << kMaxMicrobatches
                         << " are supported";
  if (getStages() % getReplicas() != 0 ||
      getMicrobatches() % getReplicas() != 0)
    return emitOpError() << "has " << getReplicas()
                         << " pipeline replicas, which must divide both its "
                         << getStages() << " stages and its "
                         << getMicrobatches() << " microbatches";
  Block &body = getBody().front();
  ScheduleSymbols symbols;
  if (failed(indexRanks(body, symbols)) ||
      failed(verifyStageDecls(*this, body, getStages())) ||
      failed(indexGroups(body, symbols)))
    return failure();
  for (auto rank : body.getOps<RankOp>())
    if (failed(verifyRankReferences(rank, symbols)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Compute actions and overlap
//===----------------------------------------------------------------------===//

static LogicalResult verifyComputeAction(Operation *op, int64_t stage,
                                         int64_t microbatch) {
  if (failed(checkStage(op, stage)))
    return failure();
  return checkMicrobatch(op, microbatch);
}

LogicalResult ForwardOp::verify() {
  return verifyComputeAction(*this, getStage(), getMicrobatch());
}
LogicalResult BackwardOp::verify() {
  return verifyComputeAction(*this, getStage(), getMicrobatch());
}
LogicalResult BackwardInputOp::verify() {
  return verifyComputeAction(*this, getStage(), getMicrobatch());
}
LogicalResult BackwardWeightOp::verify() {
  return verifyComputeAction(*this, getStage(), getMicrobatch());
}

LogicalResult OverlapOp::verifyRegions() {
  int forwards = 0, backwards = 0;
  for (Operation &op : getBody().front()) {
    if (isa<ForwardOp>(op)) {
      ++forwards;
      continue;
    }
    if (isa<BackwardOp, BackwardInputOp>(op)) {
      ++backwards;
      continue;
    }
    return op.emitOpError()
           << "cannot be part of a sched.overlap, which holds one "
              "sched.forward and one sched.backward or sched.backward_input";
  }
  if (forwards != 1 || backwards != 1)
    return emitOpError() << "must hold exactly one forward and one backward, "
                         << "found " << forwards << " forward and "
                         << backwards << " backward";
  return success();
}

//===----------------------------------------------------------------------===//
// Point-to-point actions
//===----------------------------------------------------------------------===//

/// Checks the stage and microbatch of a send or receive; its peer is the
/// schedule's to check (ScheduleOp::verifyRegions). `outward` is true for a
/// send: the stage on the far side is stage + 1 going forward and stage - 1
/// going backward; a receive mirrors it.
static LogicalResult verifyTransfer(Operation *op, Direction direction,
                                    int64_t stage, int64_t microbatch,
                                    bool outward) {
  if (failed(verifyComputeAction(op, stage, microbatch)))
    return failure();
  IndexSpace space = getIndexSpace(op);
  bool towardsLater = (direction == Direction::Forward) == outward;
  int64_t farStage = towardsLater ? stage + 1 : stage - 1;
  if (space.owner && (farStage < 0 || farStage >= space.stages))
    return op->emitOpError()
           << "moves " << stringifyDirection(direction) << " data "
           << (outward ? "to" : "from") << " stage " << farStage
           << ", which does not exist (the schedule has " << space.stages
           << " stages)";
  return success();
}

LogicalResult SendOp::verify() {
  return verifyTransfer(*this, getDirection(), getStage(), getMicrobatch(),
                        /*outward=*/true);
}

LogicalResult RecvOp::verify() {
  return verifyTransfer(*this, getDirection(), getStage(), getMicrobatch(),
                        /*outward=*/false);
}

LogicalResult P2PGroupOp::verifyRegions() {
  if (getBody().front().empty())
    return emitOpError() << "is empty; it must hold at least one "
                            "sched.send or sched.recv";
  return success();
}

//===----------------------------------------------------------------------===//
// Collective and per-stage actions
//===----------------------------------------------------------------------===//

/// Checks the stage a collective action names, if any, and the declaration
/// it names, if any: one of the schedule's, which explains it. Its group is
/// the schedule's to check (ScheduleOp::verifyRegions).
template <typename OpTy> static LogicalResult verifyCollectiveAction(OpTy op) {
  std::optional<uint64_t> stage = op.getStage();
  if (stage && failed(checkStage(op, *stage)))
    return failure();
  std::optional<uint64_t> index = op.getDeclaration();
  if (!index)
    return success();
  auto schedule = op->template getParentOfType<ScheduleOp>();
  if (!schedule)
    return op.emitOpError()
           << "names declaration " << *index << " outside a sched.schedule";
  uint64_t count = 0;
  CollectiveOp named;
  for (CollectiveOp decl :
       schedule.getBody().front().template getOps<CollectiveOp>())
    if (count++ == *index)
      named = decl;
  if (!named)
    return op.emitOpError()
           << "names declaration " << *index << ", but the schedule declares "
           << count << " sched.collective(s)";
  std::optional<uint64_t> declStage = named.getStage();
  std::optional<uint64_t> bytes = op.getBytes();
  if (named.getKind() == OpTy::getKind() && named.getGroup() == op.getGroup() &&
      (!declStage || declStage == stage) &&
      (!bytes || *bytes == named.getBytes()))
    return success();
  return op.emitOpError()
         << "names declaration " << *index << " (sched.collective "
         << stringifyCollectiveKind(named.getKind()) << " @" << named.getGroup()
         << " when " << stringifyCollectiveWhen(named.getWhen())
         << "), which does not explain it: the declaration it names has its "
            "kind and group, and its stage and bytes where both name them";
}

LogicalResult AllReduceOp::verify() { return verifyCollectiveAction(*this); }
LogicalResult ReduceScatterOp::verify() {
  return verifyCollectiveAction(*this);
}
LogicalResult AllGatherOp::verify() { return verifyCollectiveAction(*this); }
LogicalResult AllToAllOp::verify() { return verifyCollectiveAction(*this); }
LogicalResult BarrierOp::verify() { return verifyCollectiveAction(*this); }

LogicalResult UnshardOp::verify() { return checkStage(*this, getStage()); }
LogicalResult ReshardOp::verify() { return checkStage(*this, getStage()); }
LogicalResult ReduceGradOp::verify() { return checkStage(*this, getStage()); }
