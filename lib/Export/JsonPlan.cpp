//===- JsonPlan.cpp - export JSON runtime plans ---------------------------===//
//
// The layout is fixed (keys in schema order, an instruction per line) so
// that plans diff well and round-trip byte for byte; every value is written
// with llvm::json.
//
//===----------------------------------------------------------------------===//

#include "lib/Export/JsonPlan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace sched;

static llvm::Error planError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Writes `value` compactly.
static void writeValue(llvm::raw_ostream &os, const llvm::json::Value &value) {
  llvm::json::OStream(os).value(value);
}

/// Compute and the optimizer step run on the compute stream; transfers,
/// collectives and FSDP's gathers and reductions on the comm stream.
static llvm::StringRef streamOf(ActionKind kind) {
  return isCompute(kind) || kind == ActionKind::OptimizerStep ? "compute"
                                                              : "comm";
}

/// Whether any transfer of the schedule is a shape exchange (version 4).
static bool hasShapeExchanges(const Schedule &schedule) {
  return llvm::any_of(schedule.ranks, [](const RankProgram &program) {
    return llvm::any_of(program.actions,
                        [](const Action &a) { return a.shape; });
  });
}

/// The rank that computes each stage first, -1 for none.
static std::vector<int64_t> stageRanks(const Schedule &schedule) {
  std::vector<int64_t> ranks(std::max(schedule.numStages, 0), -1);
  for (const RankProgram &program : schedule.ranks)
    for (const Action &action : program.actions)
      if (isCompute(action.kind) && action.stage >= 0 &&
          action.stage < schedule.numStages && ranks[action.stage] < 0)
        ranks[action.stage] = program.id;
  return ranks;
}

static llvm::json::Value groupMembers(const Schedule &schedule,
                                      const ProcessGroup &group) {
  llvm::json::Array sets;
  for (const std::vector<int32_t> &set : group.members) {
    llvm::json::Array ids;
    for (int32_t index : set)
      ids.push_back(schedule.ranks[index].id);
    sets.push_back(std::move(ids));
  }
  return sets;
}

static llvm::json::Value stageCostJson(const StageCost &cost) {
  llvm::json::Object object{{"forward", cost.forward},
                            {"backward_input", cost.backwardInput},
                            {"backward_weight", cost.backwardWeight},
                            {"activation", cost.activation},
                            {"weight_grad", cost.weightGrad},
                            {"parameters", cost.parameters}};
  if (cost.output >= 0)
    object["output"] = cost.output;
  if (cost.layers > 1)
    object["layers"] = cost.layers;
  return object;
}

namespace {
/// Writes the instructions of one rank.
class RankWriter {
public:
  RankWriter(llvm::raw_ostream &os, const RuntimePlan &plan, size_t rank)
      : os(os), plan(plan), schedule(plan.schedule), rank(rank),
        namesStreams(schedule.hasStreams() || hasShapeExchanges(schedule)) {}

  llvm::Error write() {
    const RankProgram &program = schedule.ranks[rank];
    os << "    {\"rank\": " << program.id << ", \"instructions\": [";
    llvm::ArrayRef<Action> actions = program.actions;
    int64_t bundleId = -1;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &action = actions[i];
      if (action.bundle != 0 &&
          (i == 0 || actions[i - 1].bundle != action.bundle))
        ++bundleId;
      os << (i == 0 ? "\n" : ",\n") << "      ";
      if (llvm::Error error = writeInstruction(i, action, bundleId))
        return error;
    }
    os << (actions.empty() ? "]}" : "\n    ]}");
    return llvm::Error::success();
  }

private:
  llvm::Error writeInstruction(size_t index, const Action &action,
                               int64_t bundleId) {
    llvm::json::OStream json(os);
    llvm::Error error = llvm::Error::success();
    json.object([&] {
      json.attribute("op", planOpName(action.kind));
      if (action.stage >= 0)
        json.attribute("stage", action.stage);
      const bool transfer =
          action.kind == ActionKind::Send || action.kind == ActionKind::Recv;
      if (isCompute(action.kind) || transfer)
        json.attribute("microbatch", action.microbatch);
      if (transfer) {
        json.attribute("direction", action.gradient ? "backward" : "forward");
        if (action.peer >= 0 &&
            static_cast<size_t>(action.peer) < schedule.ranks.size())
          json.attribute("peer", schedule.ranks[action.peer].id);
        if (action.communicator >= 0 &&
            static_cast<size_t>(action.communicator) < schedule.groups.size())
          json.attribute("communicator",
                         schedule.groups[action.communicator].name);
        if (action.shape)
          json.attribute("payload", "shape");
      }
      if (isCollective(action.kind)) {
        if (action.group < 0 ||
            static_cast<size_t>(action.group) >= schedule.groups.size())
          error = planError(llvm::formatv(
              "rank {0} action {1}: the collective names no process group",
              schedule.ranks[rank].id, index));
        else
          json.attribute("group", schedule.groups[action.group].name);
      }
      if (action.bytes >= 0)
        json.attribute("bytes", action.bytes);
      if (action.declaration >= 0)
        json.attribute("declaration", action.declaration);
      if (action.bundle != 0)
        json.attribute(isCompute(action.kind) ? "overlap" : "p2p_group",
                       bundleId);
      if (action.layerwise)
        json.attribute("layerwise", true);
      // Version 3 names the action's stream; before it, the op's class.
      if (namesStreams) {
        json.attribute("stream", schedule.streamName(action.stream));
        if (action.waitEvent >= 0)
          json.attribute("wait_event", schedule.events[action.waitEvent]);
        if (action.recordEvent >= 0)
          json.attribute("record_event", schedule.events[action.recordEvent]);
      } else {
        json.attribute("stream", streamOf(action.kind));
      }
      if (rank < plan.slots.size() && index < plan.slots[rank].size()) {
        const BufferSlots &slots = plan.slots[rank][index];
        if (slots.slot >= 0)
          json.attribute("slot", slots.slot);
        if (slots.recvSlot >= 0)
          json.attribute("recv_slot", slots.recvSlot);
      }
    });
    return error;
  }

  llvm::raw_ostream &os;
  const RuntimePlan &plan;
  const Schedule &schedule;
  size_t rank;
  /// Version 3 and later name each instruction's stream ("default" for a
  /// schedule that names none).
  bool namesStreams;
};
} // namespace

llvm::Error sched::writeJsonPlan(llvm::raw_ostream &os,
                                 const RuntimePlan &plan) {
  const Schedule &schedule = plan.schedule;
  auto field = [&](llvm::StringRef key, const llvm::json::Value &value) {
    os << "  ";
    writeValue(os, llvm::json::Value(key));
    os << ": ";
    writeValue(os, value);
    os << ",\n";
  };
  os << "{\n";
  field("format", "schedc-runtime-plan");
  // Version 2 only where the plan has communicators, 3 where it has
  // streams, 4 where it has shape exchanges: older readers keep reading
  // every other plan.
  const bool communicators =
      llvm::any_of(schedule.groups,
                   [](const ProcessGroup &g) { return g.lazy; }) ||
      llvm::any_of(schedule.ranks, [](const RankProgram &program) {
        return llvm::any_of(program.actions, [](const Action &a) {
          return a.communicator >= 0;
        });
      });
  field("version", hasShapeExchanges(schedule) ? kRuntimePlanVersion
                   : schedule.hasStreams()     ? kRuntimePlanVersionWithStreams
                   : communicators ? kRuntimePlanVersionWithCommunicators
                                   : kRuntimePlanVersionWithoutCommunicators);
  field("schedc_version", kSchedcVersion);
  field("name", plan.name);
  if (!plan.verdict.memoryLimitText.empty()) {
    // The limit exactly as read: llvm::json would print it through a
    // double. Keys in llvm::json's (sorted) order, as below.
    os << "  \"verdict\": {\"memory_limit\":" << plan.verdict.memoryLimitText
       << ",\"p2p\":";
    writeValue(os, llvm::json::Value(plan.verdict.p2p));
    os << ",\"status\":\""
       << (plan.verdict.verified ? "verified" : "unverified") << "\"},\n";
  } else {
    llvm::json::Object verdict{
        {"status", plan.verdict.verified ? "verified" : "unverified"},
        {"p2p", plan.verdict.p2p}};
    verdict["memory_limit"] = plan.verdict.memoryLimit
                                  ? llvm::json::Value(*plan.verdict.memoryLimit)
                                  : llvm::json::Value(nullptr);
    field("verdict", std::move(verdict));
  }
  field("stages", schedule.numStages);
  field("microbatches", schedule.numMicrobatches);
  field("replicas", schedule.replicas);
  field("data_parallel", schedule.dataParallel);
  llvm::json::Array stageRankIds;
  for (int64_t id : stageRanks(schedule))
    stageRankIds.push_back(id >= 0 ? llvm::json::Value(id)
                                   : llvm::json::Value(nullptr));
  field("stage_ranks", std::move(stageRankIds));

  llvm::json::Array mesh;
  for (const MeshAxis &axis : plan.mesh)
    mesh.push_back(
        llvm::json::Object{{"axis", axis.name}, {"size", axis.size}});
  field("mesh", std::move(mesh));
  llvm::json::Array groups;
  for (const ProcessGroup &group : schedule.groups) {
    llvm::json::Object object{{"name", group.name},
                              {"members", groupMembers(schedule, group)}};
    if (group.lazy)
      object["creation"] = "lazy";
    groups.push_back(std::move(object));
  }
  field("groups", std::move(groups));
  llvm::json::Array collectives;
  for (const CollectiveDeclaration &decl : schedule.collectives) {
    if (decl.group < 0 ||
        static_cast<size_t>(decl.group) >= schedule.groups.size())
      return planError("a declared collective names no process group");
    llvm::json::Object object{{"kind", planOpName(decl.kind)},
                              {"group", schedule.groups[decl.group].name},
                              {"bytes", decl.bytes},
                              {"when", collectiveTimingName(decl.when)}};
    if (decl.stage >= 0)
      object["stage"] = decl.stage;
    collectives.push_back(std::move(object));
  }
  field("collectives", std::move(collectives));
  llvm::json::Array heads;
  for (const AuxHead &head : plan.auxHeads) {
    llvm::json::Object object{{"stage", head.stage}, {"scope", head.scope}};
    if (!head.biasGroup.empty()) {
      object["bias_group"] = head.biasGroup;
      object["bias_bytes"] = head.biasBytes;
    }
    heads.push_back(std::move(object));
  }
  field("aux_heads", std::move(heads));
  llvm::json::Array costs;
  for (const StageCost &cost : schedule.stageCosts)
    costs.push_back(stageCostJson(cost));
  field("stage_costs", std::move(costs));

  os << "  \"ranks\": [";
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    os << (r == 0 ? "\n" : ",\n");
    if (llvm::Error error = RankWriter(os, plan, r).write())
      return error;
  }
  os << (schedule.ranks.empty() ? "]\n}\n" : "\n  ]\n}\n");
  return llvm::Error::success();
}
