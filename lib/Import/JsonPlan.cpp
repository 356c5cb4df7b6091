//===- JsonPlan.cpp - import JSON runtime plans ---------------------------===//
//
// llvm::json parses the text, the elements of its arrays one at a time
// (lib/Import/PlanArrays.h); this file checks the plan's structure field
// by field (docs/runtime-plan.schema.json) and builds the plain schedule.
// llvm::json keeps no source positions, so a scan of the text finds the `{`
// of each instruction (the objects that hold an "op" key) for diagnostics.
//
//===----------------------------------------------------------------------===//

#include "lib/Import/JsonPlan.h"
#include "dialects/Sched/SchedOps.h"
#include "lib/Import/PlanArrays.h"
#include "lib/Limits/DiagnosticExcerpt.h"
#include "lib/Limits/JsonDuplicateKey.h"
#include "lib/Limits/JsonInteger.h"
#include "lib/Limits/NestingDepth.h"
#include "lib/Limits/ResourceLimits.h"
#include "lib/Schedule/DataParallelAxes.h"
#include "lib/ScheduleIR/ScheduleIR.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <unordered_map>
#include <unordered_set>

using namespace mlir;
using namespace sched;

namespace {

/// The dialect's bounds; bigger indices are typos.
constexpr int64_t kMaxStages = 1 << 20;
constexpr int64_t kMaxMicrobatches = 1 << 26;
constexpr int64_t kMaxIndex = int64_t{1} << 40;

constexpr llvm::StringLiteral kPlanFormat = "schedc-runtime-plan";

/// The positions of the objects that hold an "op" key, in document order:
/// the instructions. Tracks strings and escapes so that braces and "op"
/// inside strings do not count.
std::vector<std::pair<unsigned, unsigned>> scanInstructions(StringRef text) {
  std::vector<std::pair<unsigned, unsigned>> found;
  std::vector<std::pair<unsigned, unsigned>> open;
  unsigned line = 1, column = 1;
  for (size_t i = 0; i < text.size(); ++i, ++column) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      column = 0;
    } else if (c == '{') {
      open.emplace_back(line, column);
    } else if (c == '}') {
      if (!open.empty())
        open.pop_back();
    } else if (c == '"') {
      const size_t start = i + 1;
      for (++i; i < text.size() && text[i] != '"'; ++i, ++column)
        if (text[i] == '\\') {
          ++i;
          ++column;
        }
      ++column;
      if (text.slice(start, i) != "op" || open.empty())
        continue;
      size_t next = text.find_first_not_of(" \t\r\n", i + 1);
      if (next != StringRef::npos && text[next] == ':')
        found.push_back(open.back());
    }
  }
  return found;
}

/// The text of the number the verdict's "memory_limit" key holds, as
/// written: llvm::json keeps numbers as doubles, which lose 2^53 + 1 and
/// 7.99999999999999999. The verdict is the only object at depth 2 that may
/// hold that key (any other's keys are checked). Empty when not found.
StringRef rawMemoryLimit(StringRef text) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{') {
      ++depth;
    } else if (c == '}') {
      --depth;
    } else if (c == '"') {
      const size_t start = i + 1;
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      if (depth != 2 || text.slice(start, i) != "memory_limit")
        continue;
      size_t colon = text.find_first_not_of(" \t\r\n", i + 1);
      if (colon == StringRef::npos || text[colon] != ':')
        continue;
      size_t begin = text.find_first_not_of(" \t\r\n", colon + 1);
      if (begin == StringRef::npos)
        return {};
      size_t end = text.find_first_not_of("0123456789+-.eE", begin);
      return text.slice(begin, end == StringRef::npos ? text.size() : end);
    }
  }
  return {};
}

/// Turns "[3:7, byte=40]: Expected ..." into the line, column and message.
void splitParseError(StringRef logged, unsigned &line, unsigned &column,
                     std::string &message) {
  line = column = 1;
  message = logged.str();
  if (!logged.consume_front("["))
    return;
  auto [position, rest] = logged.split("]: ");
  auto [lineText, columnText] = position.split(',').first.split(':');
  unsigned l = 0, c = 0;
  if (lineText.getAsInteger(10, l) || columnText.getAsInteger(10, c))
    return;
  line = std::max(l, 1u);
  column = std::max(c, 1u);
  message = rest.str();
}

class PlanReader {
public:
  PlanReader(llvm::SourceMgr &sourceMgr, MLIRContext *context)
      : text(sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer()),
        result(context, sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
                            ->getBufferIdentifier()) {}

  FailureOr<JsonPlanInput> read();

private:
  /// An error about `where` (a path into the plan), at the instruction
  /// being read when there is one, else at the top of the file.
  InFlightDiagnostic error(const Twine &where) {
    Location loc = result.locate(1, 1);
    if (rank >= 0)
      loc = result.locateAction(rank, instruction);
    return emitError(loc) << "malformed plan: " << where << ": ";
  }

  LogicalResult checkKeys(const llvm::json::Object &object, StringRef where,
                          llvm::ArrayRef<StringRef> allowed);
  LogicalResult readInt(const llvm::json::Object &object, StringRef key,
                        StringRef where, int64_t low, int64_t high,
                        std::optional<int64_t> fallback, int64_t &out);
  LogicalResult readString(const llvm::json::Object &object, StringRef key,
                           StringRef where, std::optional<StringRef> fallback,
                           std::string &out);
  const llvm::json::Array *readArray(const llvm::json::Object &object,
                                     StringRef key, StringRef where,
                                     bool required);

  /// An array of the root object: as parsed, or cut out of the text.
  struct RootArray {
    StringRef key;
    const llvm::json::Array *parsed = nullptr;
    const CutArray *cut = nullptr;
    size_t size() const { return cut ? cut->elements.size() : parsed->size(); }
  };
  /// The root's array `key`, checked as readArray checks it, cut or
  /// parsed; std::nullopt after an error.
  std::optional<RootArray> rootArray(const llvm::json::Object &root,
                                     StringRef key, bool required);
  /// Element `k` of `array`: the parsed one, or one parsed on its own from
  /// the text into `storage` (a rank without its instructions); nullptr
  /// after an error.
  const llvm::json::Value *elementOf(const RootArray &array, size_t k,
                                     llvm::json::Value &storage);
  /// Reads each element of `array` with `read(k, where, object)`, `where`
  /// naming it ("groups[3]"); an element that is no object is the error
  /// "must be an object" followed by `shape` (` {"axis", "size"}`, or
  /// empty). Stops at the first failure.
  LogicalResult forEachObject(
      const RootArray &array, StringRef shape,
      llvm::function_ref<LogicalResult(size_t k, StringRef where,
                                       const llvm::json::Object &object)>
          read);

  LogicalResult readHeader(const llvm::json::Object &root);
  LogicalResult readVerdict(const llvm::json::Object &root);
  LogicalResult readMesh(const llvm::json::Object &root);
  LogicalResult readRankIds(const RootArray &ranks);
  LogicalResult readGroups(const llvm::json::Object &root);
  LogicalResult readCollectives(const llvm::json::Object &root);
  LogicalResult readAuxHeads(const llvm::json::Object &root);
  LogicalResult readStageCosts(const llvm::json::Object &root);
  LogicalResult readStageRanks(const llvm::json::Object &root);
  /// Fails, naming `where`, unless the plan's version has communicators.
  LogicalResult needsCommunicators(StringRef where);
  /// A transfer's "communicator": a group whose member set holds both ranks.
  /// A transfer's "payload": its data (the default) or, from version 4,
  /// its shape exchange.
  LogicalResult readPayload(const llvm::json::Object &object, StringRef where,
                            Action &action);
  LogicalResult readCommunicator(const llvm::json::Object &object,
                                 StringRef where, Action &action);
  /// An instruction's "stream" (in version 3 any stream of its rank, before
  /// it compute or comm by the op) and its events.
  LogicalResult readStreams(const llvm::json::Object &object, StringRef where,
                            StringRef opName, bool compute, Action &action);
  LogicalResult readInstruction(const llvm::json::Value &value,
                                RankProgram &program,
                                std::vector<BufferSlots> &slots);
  LogicalResult readRanks(const RootArray &ranks);
  /// A collective instruction's `declaration`: the index of a declaration
  /// of the plan that explains it (its kind and group, and its stage and
  /// bytes where both name them).
  LogicalResult readDeclaration(const llvm::json::Object &object,
                                const std::string &where, StringRef opName,
                                Action &action);
  /// How many instructions rank `r` has: its cut array's elements, or its
  /// parsed array's when the text was not cut; 0 when it has no array.
  size_t instructionCount(const RootArray &ranks, size_t r) const;
  /// Parses `element`, the text from offset `begin` on (or a copy of it
  /// with the same layout), into `out`: first the JSON budget of the
  /// objects and arrays it holds, as for the root, then llvm::json; a
  /// malformed one is reported at its line and column in the text.
  LogicalResult parseElement(StringRef element, size_t begin, StringRef where,
                             llvm::json::Value &out);
  /// The line and column of offset `at` in the text.
  Location locateOffset(size_t at) const;
  /// The dialect's op-verifier rules on the bundles of the rank being read:
  /// an overlap holds one forward and one backward (or backward_input).
  LogicalResult checkOverlaps(const RankProgram &program);

  StringRef text;
  /// The root's arrays and the instructions arrays cut out of the text,
  /// parsed one element at a time (lib/Import/PlanArrays.h); none when the
  /// text could not be cut, and llvm::json reads it whole.
  std::optional<PlanArrays> cut;
  JsonPlanInput result;
  /// The instruction being read, -1 when none.
  int32_t rank = -1;
  /// The plan's "version".
  int64_t planVersion = kRuntimePlanVersionWithoutCommunicators;
  int32_t instruction = -1;
  // Keyed by ids as the plan writes them, any int64 (INT64_MAX included,
  // which DenseMap reserves), hence std::unordered_map.
  std::unordered_map<int64_t, int32_t> rankIndex;
  llvm::StringMap<int32_t> groupIndex;
  llvm::StringMap<int32_t> streamIndex;
  llvm::StringMap<int32_t> eventIndex;
  /// Per group: the rank indices of its member sets (the dialect's
  /// verifier refuses a collective issued by a rank outside its group).
  std::vector<std::unordered_set<int32_t>> groupRanks;
  /// Bundles of the rank being read, p2p groups and overlaps each in their
  /// own id space: plan id -> bundle; and the last bundle.
  std::unordered_map<int64_t, uint32_t> p2pBundles, overlapBundles;
  uint32_t lastBundle = 0;
};

} // namespace

JsonPlanInput::JsonPlanInput(MLIRContext *context, StringRef file)
    : file(StringAttr::get(context, file)) {}

Location JsonPlanInput::locate(unsigned line, unsigned column) const {
  return FileLineColLoc::get(file, line, column);
}

Location JsonPlanInput::locateAction(int32_t rank, int32_t index) const {
  if (rank < 0 || static_cast<size_t>(rank) >= positions.size() || index < 0 ||
      static_cast<size_t>(index) >= positions[rank].size())
    return locate(1, 1);
  auto [line, column] = positions[rank][index];
  return locate(line, column);
}

bool sched::looksLikeJsonPlan(StringRef text) {
  return text.ltrim().starts_with("{");
}

LogicalResult PlanReader::checkKeys(const llvm::json::Object &object,
                                    StringRef where,
                                    llvm::ArrayRef<StringRef> allowed) {
  for (const auto &entry : object)
    if (!llvm::is_contained(allowed, entry.first.str()))
      return error(where) << "unknown key \"" << entry.first.str()
                          << "\"; expected one of: "
                          << llvm::join(allowed, ", ");
  return success();
}

LogicalResult PlanReader::readInt(const llvm::json::Object &object,
                                  StringRef key, StringRef where, int64_t low,
                                  int64_t high, std::optional<int64_t> fallback,
                                  int64_t &out) {
  const llvm::json::Value *value = object.get(key);
  if (!value) {
    if (fallback) {
      out = *fallback;
      return success();
    }
    return error(where) << "\"" << key << "\" is missing";
  }
  std::optional<int64_t> number = jsonInteger(*value);
  if (!number || *number < low || *number > high)
    return error(where) << "\"" << key << "\" must be an integer from " << low
                        << " to " << high;
  out = *number;
  return success();
}

LogicalResult PlanReader::readString(const llvm::json::Object &object,
                                     StringRef key, StringRef where,
                                     std::optional<StringRef> fallback,
                                     std::string &out) {
  const llvm::json::Value *value = object.get(key);
  if (!value) {
    if (fallback) {
      out = fallback->str();
      return success();
    }
    return error(where) << "\"" << key << "\" is missing";
  }
  std::optional<StringRef> string = value->getAsString();
  if (!string)
    return error(where) << "\"" << key << "\" must be a string";
  out = string->str();
  return success();
}

const llvm::json::Array *PlanReader::readArray(const llvm::json::Object &object,
                                               StringRef key, StringRef where,
                                               bool required) {
  static const llvm::json::Array empty;
  const llvm::json::Value *value = object.get(key);
  if (!value) {
    if (required) {
      error(where) << "\"" << key << "\" is missing";
      return nullptr;
    }
    return &empty;
  }
  const llvm::json::Array *array = value->getAsArray();
  if (!array)
    error(where) << "\"" << key << "\" must be an array";
  return array;
}

std::optional<PlanReader::RootArray>
PlanReader::rootArray(const llvm::json::Object &root, StringRef key,
                      bool required) {
  const llvm::json::Array *parsed = readArray(root, key, "plan", required);
  if (!parsed)
    return std::nullopt;
  RootArray array{key, parsed, nullptr};
  if (cut)
    if (auto found = cut->root.find(key); found != cut->root.end())
      array.cut = &found->second;
  return array;
}

const llvm::json::Value *PlanReader::elementOf(const RootArray &array, size_t k,
                                               llvm::json::Value &storage) {
  if (!array.cut)
    return &(*array.parsed)[k];
  auto [begin, end] = array.cut->elements[k];
  const std::string where = llvm::formatv("{0}[{1}]", array.key, k).str();
  LogicalResult parsed = failure();
  auto inner = cut->instructions.find(k);
  if (array.key == "ranks" && inner != cut->instructions.end())
    parsed = parseElement(textWithoutArray(text, begin, end, inner->second),
                          begin, where, storage);
  else
    parsed = parseElement(text.slice(begin, end), begin, where, storage);
  return succeeded(parsed) ? &storage : nullptr;
}

LogicalResult PlanReader::readHeader(const llvm::json::Object &root) {
  if (failed(checkKeys(root, "plan",
                       {"format", "version", "schedc_version", "name",
                        "verdict", "stages", "microbatches", "replicas",
                        "data_parallel", "stage_ranks", "mesh", "groups",
                        "collectives", "aux_heads", "stage_costs", "ranks"})))
    return failure();
  std::string format;
  if (failed(readString(root, "format", "plan", std::nullopt, format)))
    return failure();
  if (format != kPlanFormat)
    return error("plan") << "\"format\" is '" << format << "', expected '"
                         << kPlanFormat << "'";
  int64_t version = 0;
  if (failed(readInt(root, "version", "plan", 1, kMaxIndex, std::nullopt,
                     version)))
    return failure();
  if (version < kRuntimePlanVersionWithoutCommunicators ||
      version > kRuntimePlanVersion)
    return error("plan") << "unsupported plan version " << version
                         << "; this schedc reads versions "
                         << kRuntimePlanVersionWithoutCommunicators << " to "
                         << kRuntimePlanVersion;
  planVersion = version;
  std::string ignored;
  RuntimePlan &plan = result.plan;
  Schedule &schedule = plan.schedule;
  int64_t stages = 0, microbatches = 0, replicas = 1, dp = 1;
  if (failed(
          readString(root, "schedc_version", "plan", StringRef(""), ignored)) ||
      failed(readString(root, "name", "plan", StringRef("plan"), plan.name)) ||
      failed(readInt(root, "stages", "plan", 1, kMaxStages, std::nullopt,
                     stages)) ||
      failed(readInt(root, "microbatches", "plan", 1, kMaxMicrobatches,
                     std::nullopt, microbatches)) ||
      failed(readInt(root, "replicas", "plan", 1, kMaxStages, 1, replicas)) ||
      failed(readInt(root, "data_parallel", "plan", 1, kMaxIndex, 1, dp)))
    return failure();
  if (plan.name.empty())
    return error("plan") << "\"name\" must not be empty";
  schedule.numStages = static_cast<int32_t>(stages);
  schedule.numMicrobatches = static_cast<int32_t>(microbatches);
  schedule.replicas = static_cast<int32_t>(replicas);
  schedule.dataParallel = dp;
  // A runtime plan is what an engine runs as one training step.
  schedule.wholeStep = true;
  if (std::string why = schedule.replicaError(); !why.empty())
    return error("plan") << why;
  return success();
}

LogicalResult PlanReader::readVerdict(const llvm::json::Object &root) {
  const llvm::json::Value *value = root.get("verdict");
  if (!value)
    return success();
  const llvm::json::Object *verdict = value->getAsObject();
  if (!verdict)
    return error("verdict") << "must be an object";
  if (failed(checkKeys(*verdict, "verdict", {"status", "p2p", "memory_limit"})))
    return failure();
  PlanVerdict &out = result.plan.verdict;
  std::string status;
  if (failed(readString(*verdict, "status", "verdict", StringRef("unverified"),
                        status)) ||
      failed(readString(*verdict, "p2p", "verdict", StringRef("rendezvous"),
                        out.p2p)))
    return failure();
  if (status != "verified" && status != "unverified")
    return error("verdict") << "\"status\" must be verified or unverified";
  out.verified = status == "verified";
  if (out.p2p != "rendezvous" && out.p2p != "eager")
    return error("verdict") << "\"p2p\" must be rendezvous or eager";
  if (const llvm::json::Value *limit = verdict->get("memory_limit")) {
    if (limit->kind() == llvm::json::Value::Null)
      return success();
    std::optional<double> number = limit->getAsNumber();
    if (!number || !(*number >= 0))
      return error("verdict")
             << "\"memory_limit\" must be a number >= 0 or null";
    out.memoryLimit = *number;
    out.memoryLimitText = rawMemoryLimit(text).str();
  }
  return success();
}

LogicalResult PlanReader::forEachObject(
    const RootArray &array, StringRef shape,
    llvm::function_ref<LogicalResult(size_t, StringRef,
                                     const llvm::json::Object &)>
        read) {
  for (size_t k = 0; k < array.size(); ++k) {
    const std::string where = llvm::formatv("{0}[{1}]", array.key, k).str();
    llvm::json::Value storage = nullptr;
    const llvm::json::Value *value = elementOf(array, k, storage);
    if (!value)
      return failure();
    const llvm::json::Object *object = value->getAsObject();
    if (!object)
      return error(where) << "must be an object" << shape;
    if (failed(read(k, where, *object)))
      return failure();
  }
  return success();
}

LogicalResult PlanReader::readMesh(const llvm::json::Object &root) {
  std::optional<RootArray> mesh = rootArray(root, "mesh", false);
  if (!mesh)
    return failure();
  if (failed(forEachObject(
          *mesh, " {\"axis\", \"size\"}",
          [&](size_t, StringRef where,
              const llvm::json::Object &axis) -> LogicalResult {
            MeshAxis &out = result.plan.mesh.emplace_back();
            if (failed(checkKeys(axis, where, {"axis", "size"})) ||
                failed(
                    readString(axis, "axis", where, std::nullopt, out.name)) ||
                failed(readInt(axis, "size", where, 1, kMaxIndex, std::nullopt,
                               out.size)))
              return failure();
            return success();
          })))
    return failure();
  // Hybrid sharding: dp_replicate x dp_shard replicas, as many as the plan
  // runs (lib/Schedule/DataParallelAxes.h).
  llvm::SmallVector<std::pair<StringRef, int64_t>> axes;
  std::optional<int64_t> shard, replicate;
  for (const MeshAxis &axis : result.plan.mesh) {
    axes.push_back({axis.name, axis.size});
    if (axis.name == kShardAxis)
      shard = axis.size;
    else if (axis.name == kReplicateAxis)
      replicate = axis.size;
  }
  if (std::string why = dataParallelAxesError(axes); !why.empty())
    return error("mesh") << why;
  Schedule &schedule = result.plan.schedule;
  if (shard && replicate) {
    if (*shard > kMaxIndex / *replicate ||
        *shard * *replicate != schedule.dataParallel)
      return error("mesh") << "'dp_replicate' x 'dp_shard' is " << *replicate
                           << " x " << *shard << ", but \"data_parallel\" is "
                           << schedule.dataParallel;
    schedule.shardGroupSize = *shard;
  }
  return success();
}

LogicalResult PlanReader::readRankIds(const RootArray &ranks) {
  Schedule &schedule = result.plan.schedule;
  return forEachObject(
      ranks, " {\"rank\", \"instructions\"}",
      [&](size_t r, StringRef where,
          const llvm::json::Object &object) -> LogicalResult {
        if (failed(checkKeys(object, where, {"rank", "instructions"})))
          return failure();
        int64_t id = 0;
        if (failed(
                readInt(object, "rank", where, 0, kMaxIndex, std::nullopt, id)))
          return failure();
        if (!rankIndex.try_emplace(id, static_cast<int32_t>(r)).second)
          return error(where) << "rank " << id << " appears twice";
        schedule.ranks.push_back({id, {}});
        return success();
      });
}

LogicalResult PlanReader::readGroups(const llvm::json::Object &root) {
  std::optional<RootArray> groups = rootArray(root, "groups", false);
  if (!groups)
    return failure();
  Schedule &schedule = result.plan.schedule;
  return forEachObject(
      *groups, " {\"name\", \"members\"}",
      [&](size_t g, StringRef where,
          const llvm::json::Object &group) -> LogicalResult {
        ProcessGroup out;
        std::string creation;
        if (failed(checkKeys(group, where, {"name", "members", "creation"})) ||
            failed(readString(group, "name", where, std::nullopt, out.name)) ||
            failed(readString(group, "creation", where, StringRef("eager"),
                              creation)))
          return failure();
        if (creation != "eager" && creation != "lazy")
          return error(where) << "\"creation\" must be eager or lazy";
        if (group.get("creation") && failed(needsCommunicators(where)))
          return failure();
        out.lazy = creation == "lazy";
        if (!groupIndex.try_emplace(out.name, static_cast<int32_t>(g)).second)
          return error(where) << "group '" << out.name << "' is declared twice";
        const ReplicaSpan span = replicaSpanOf(out.name);
        if ((span == ReplicaSpan::Shard || span == ReplicaSpan::Replicate) &&
            schedule.shardGroupSize == 0)
          return error(where) << "group '" << out.name
                              << "' spans the replicas along the mesh axis '"
                              << out.name << "', but the mesh has none";
        const llvm::json::Array *sets =
            readArray(group, "members", where, true);
        if (!sets)
          return failure();
        std::unordered_set<int64_t> seen;
        std::unordered_set<int32_t> &ranksOfGroup = groupRanks.emplace_back();
        for (const llvm::json::Value &setValue : *sets) {
          const llvm::json::Array *set = setValue.getAsArray();
          if (!set)
            return error(where) << "\"members\" must be an array of arrays of "
                                   "rank ids";
          std::vector<int32_t> &indices = out.members.emplace_back();
          for (const llvm::json::Value &idValue : *set) {
            std::optional<int64_t> id = jsonInteger(idValue);
            auto index = id ? rankIndex.find(*id) : rankIndex.end();
            if (index == rankIndex.end())
              return error(where) << "a member is not a rank id of the plan";
            if (!seen.insert(*id).second)
              return error(where) << "rank " << *id << " is in two member sets";
            indices.push_back(index->second);
            ranksOfGroup.insert(index->second);
          }
        }
        schedule.groups.push_back(std::move(out));
        return success();
      });
}

LogicalResult PlanReader::readCollectives(const llvm::json::Object &root) {
  std::optional<RootArray> decls = rootArray(root, "collectives", false);
  if (!decls)
    return failure();
  return forEachObject(
      *decls, "",
      [&](size_t, StringRef where,
          const llvm::json::Object &decl) -> LogicalResult {
        std::string kind, group, when;
        int64_t bytes = 0, stage = -1;
        if (failed(checkKeys(decl, where,
                             {"kind", "group", "bytes", "when", "stage"})) ||
            failed(readString(decl, "kind", where, std::nullopt, kind)) ||
            failed(readString(decl, "group", where, std::nullopt, group)) ||
            failed(readString(decl, "when", where, std::nullopt, when)) ||
            failed(readInt(decl, "bytes", where, 0, INT64_MAX, std::nullopt,
                           bytes)) ||
            failed(readInt(decl, "stage", where, 0, kMaxStages - 1, -1, stage)))
          return failure();
        CollectiveDeclaration out;
        std::optional<ActionKind> parsed = parsePlanOpName(kind);
        if (!parsed || !isCollective(*parsed))
          return error(where) << "unknown collective kind '" << kind
                              << "'; expected all_reduce, reduce_scatter, "
                                 "all_gather, all_to_all or barrier";
        std::optional<CollectiveTiming> timing = parseCollectiveTiming(when);
        if (!timing)
          return error(where) << "unknown \"when\" '" << when
                              << "'; expected before_forward, after_forward, "
                                 "before_backward, after_backward or step";
        auto index = groupIndex.find(group);
        if (index == groupIndex.end())
          return error(where) << "names group '" << group
                              << "', which the plan does not declare";
        out.kind = *parsed;
        out.group = index->second;
        out.bytes = bytes;
        out.when = *timing;
        out.stage = static_cast<int32_t>(stage);
        result.plan.schedule.collectives.push_back(out);
        return success();
      });
}

LogicalResult PlanReader::readAuxHeads(const llvm::json::Object &root) {
  std::optional<RootArray> heads = rootArray(root, "aux_heads", false);
  if (!heads)
    return failure();
  return forEachObject(
      *heads, " {\"stage\", \"scope\"}",
      [&](size_t, StringRef where,
          const llvm::json::Object &head) -> LogicalResult {
        AuxHead out;
        int64_t stage = 0;
        if (failed(checkKeys(head, where,
                             {"stage", "scope", "bias_group", "bias_bytes"})) ||
            failed(readInt(head, "stage", where, 0,
                           result.plan.schedule.numStages - 1, std::nullopt,
                           stage)) ||
            failed(readString(head, "scope", where, std::nullopt, out.scope)) ||
            failed(readString(head, "bias_group", where, std::string(),
                              out.biasGroup)) ||
            failed(readInt(head, "bias_bytes", where, 0, INT64_MAX, 0,
                           out.biasBytes)))
          return failure();
        if (out.biasGroup.empty() != !head.get("bias_bytes"))
          return error(where)
                 << "\"bias_group\" and \"bias_bytes\" come together (an "
                    "aux_free head's bias update)";
        if (!symbolizeAuxScope(out.scope))
          return error(where)
                 << "unknown scope '" << out.scope
                 << "'; expected microbatch, sequence, global_batch "
                    "or aux_free";
        out.stage = static_cast<int32_t>(stage);
        // The dialect's verifier of sched.aux_head: a bias update belongs to an
        // aux_free head and names a declared group.
        AuxLossHead plain;
        plain.stage = out.stage;
        plain.scope = auxLossScope(*symbolizeAuxScope(out.scope));
        if (!out.biasGroup.empty()) {
          if (plain.scope != AuxLossScope::AuxFree)
            return error(where)
                   << "has a bias update, but only an aux_free head "
                      "updates a bias (scope is "
                   << out.scope << ")";
          auto group = groupIndex.find(out.biasGroup);
          if (group == groupIndex.end())
            return error(where) << "names bias group '" << out.biasGroup
                                << "', which the plan does not declare";
          plain.biasGroup = group->second;
          plain.biasBytes = out.biasBytes;
        }
        result.plan.schedule.auxHeads.push_back(plain);
        result.plan.auxHeads.push_back(out);
        return success();
      });
}

LogicalResult PlanReader::readStageCosts(const llvm::json::Object &root) {
  std::optional<RootArray> costs = rootArray(root, "stage_costs", false);
  if (!costs)
    return failure();
  Schedule &schedule = result.plan.schedule;
  if (costs->size() != 0 &&
      costs->size() != static_cast<size_t>(schedule.numStages))
    return error("stage_costs") << "holds " << costs->size() << " entries for "
                                << schedule.numStages << " stages";
  return forEachObject(
      *costs, "",
      [&](size_t s, StringRef where,
          const llvm::json::Object &cost) -> LogicalResult {
        if (failed(checkKeys(cost, where,
                             {"forward", "backward_input", "backward_weight",
                              "activation", "weight_grad", "parameters",
                              "output", "layers"})))
          return failure();
        StageCost &out = schedule.stageCosts.emplace_back();
        for (auto [key, field] :
             {std::pair<StringRef, double *>{"forward", &out.forward},
              {"backward_input", &out.backwardInput},
              {"backward_weight", &out.backwardWeight}}) {
          const llvm::json::Value *value = cost.get(key);
          std::optional<double> number = value ? value->getAsNumber() : 1.0;
          if (!number || !(*number >= 0) || !std::isfinite(*number))
            return error(where)
                   << "\"" << key << "\" must be a finite number >= 0";
          *field = *number;
        }
        if (failed(readInt(cost, "activation", where, 0, INT64_MAX, 0,
                           out.activation)) ||
            failed(readInt(cost, "weight_grad", where, 0, INT64_MAX, 0,
                           out.weightGrad)) ||
            failed(readInt(cost, "parameters", where, 0, INT64_MAX, 0,
                           out.parameters)) ||
            failed(
                readInt(cost, "output", where, 0, INT64_MAX, -1, out.output)) ||
            failed(readInt(cost, "layers", where, 1, kMaxIndex, 1, out.layers)))
          return failure();
        // The dialect's verifier of sched.stage.
        if (out.weightGrad > out.activation)
          return error(where)
                 << "weight_grad (" << out.weightGrad
                 << " bytes) exceeds activation (" << out.activation
                 << " bytes): it is the part of the activations that "
                    "survives the input gradient";
        return success();
      });
}

LogicalResult PlanReader::readStageRanks(const llvm::json::Object &root) {
  // Informational: the verifier judges placement from the instructions.
  std::optional<RootArray> ranks = rootArray(root, "stage_ranks", false);
  if (!ranks)
    return failure();
  for (size_t s = 0; s < ranks->size(); ++s) {
    llvm::json::Value storage = nullptr;
    const llvm::json::Value *value = elementOf(*ranks, s, storage);
    if (!value)
      return failure();
    if (value->kind() == llvm::json::Value::Null)
      continue;
    std::optional<int64_t> id = jsonInteger(*value);
    if (!id || !rankIndex.count(*id))
      return error("stage_ranks") << "must hold rank ids of the plan or null";
  }
  return success();
}

LogicalResult PlanReader::needsCommunicators(StringRef where) {
  if (planVersion >= kRuntimePlanVersionWithCommunicators)
    return success();
  return error(where) << "communicators (a group's \"creation\", a "
                         "transfer's \"communicator\") need plan version "
                      << kRuntimePlanVersionWithCommunicators
                      << "; this plan is version " << planVersion;
}

LogicalResult PlanReader::readStreams(const llvm::json::Object &object,
                                      StringRef where, StringRef opName,
                                      bool compute, Action &action) {
  std::string stream;
  if (planVersion < kRuntimePlanVersionWithStreams) {
    // Before version 3 the field names the op's class, and the rank runs
    // on one stream.
    for (StringRef key : {"wait_event", "record_event"})
      if (object.get(key))
        return error(where)
               << "streams and events (\"" << key << "\") need plan version "
               << kRuntimePlanVersionWithStreams << "; this plan is version "
               << planVersion;
    const StringRef expected = compute ? "compute" : "comm";
    if (failed(readString(object, "stream", where, expected, stream)))
      return failure();
    if (stream != expected)
      return error(where) << "a " << opName << " runs on the " << expected
                          << " stream, not '" << stream << "'";
    return success();
  }
  Schedule &schedule = result.plan.schedule;
  auto intern = [&](std::vector<std::string> &names,
                    llvm::StringMap<int32_t> &indices, StringRef key,
                    const std::string &name) -> FailureOr<int32_t> {
    if (name.empty()) {
      (void)(error(where) << "\"" << key << "\" must be a non-empty string");
      return failure();
    }
    auto [it, added] =
        indices.try_emplace(name, static_cast<int32_t>(names.size()));
    if (added)
      names.push_back(name);
    if (it->second > INT16_MAX) {
      (void)(error(where) << "names more than " << INT16_MAX + 1 << " "
                          << (key == "stream" ? "streams" : "events")
                          << " in one plan");
      return failure();
    }
    return it->second;
  };
  if (failed(readString(object, "stream", where, StringRef("default"),
                        stream)))
    return failure();
  if (schedule.streams.empty()) {
    schedule.streams.push_back("default");
    streamIndex["default"] = 0;
  }
  FailureOr<int32_t> index =
      intern(schedule.streams, streamIndex, "stream", stream);
  if (failed(index))
    return failure();
  action.stream = static_cast<uint16_t>(*index);
  for (StringRef key : {"wait_event", "record_event"}) {
    if (!object.get(key))
      continue;
    std::string event;
    if (failed(readString(object, key, where, std::nullopt, event)))
      return failure();
    FailureOr<int32_t> id = intern(schedule.events, eventIndex, key, event);
    if (failed(id))
      return failure();
    (key == "wait_event" ? action.waitEvent : action.recordEvent) =
        static_cast<int16_t>(*id);
  }
  return success();
}

LogicalResult PlanReader::readPayload(const llvm::json::Object &object,
                                      StringRef where, Action &action) {
  if (!object.get("payload"))
    return success();
  std::string payload;
  if (failed(readString(object, "payload", where, std::nullopt, payload)))
    return failure();
  if (planVersion < kRuntimePlanVersion)
    return error(where) << "shape exchanges (\"payload\") need plan version "
                        << kRuntimePlanVersion << "; this plan is version "
                        << planVersion;
  if (payload != "data" && payload != "shape")
    return error(where) << "\"payload\" must be data or shape";
  action.shape = payload == "shape";
  return success();
}

LogicalResult PlanReader::readCommunicator(const llvm::json::Object &object,
                                           StringRef where, Action &action) {
  if (!object.get("communicator"))
    return success();
  std::string name;
  if (failed(needsCommunicators(where)) ||
      failed(readString(object, "communicator", where, std::nullopt, name)))
    return failure();
  auto group = groupIndex.find(name);
  if (group == groupIndex.end())
    return error(where) << "runs on the communicator of group '" << name
                        << "', which the plan does not declare";
  // The dialect's verifier: one member set holds both ranks.
  for (const std::vector<int32_t> &set :
       result.plan.schedule.groups[group->second].members)
    if (llvm::is_contained(set, static_cast<int32_t>(rank)) &&
        llvm::is_contained(set, action.peer)) {
      action.communicator = group->second;
      return success();
    }
  return error(where) << "runs on the communicator of group '" << name
                      << "', but no member set of it holds both rank "
                      << result.plan.schedule.ranks[rank].id
                      << " and its peer";
}

LogicalResult PlanReader::readInstruction(const llvm::json::Value &value,
                                          RankProgram &program,
                                          std::vector<BufferSlots> &slots) {
  const std::string where =
      llvm::formatv("ranks[{0}].instructions[{1}]", rank, instruction).str();
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return error(where) << "must be an object";
  if (failed(checkKeys(*object, where,
                       {"op", "stage", "microbatch", "direction", "peer",
                        "group", "communicator", "bytes", "declaration",
                        "p2p_group", "overlap", "layerwise", "stream",
                        "wait_event", "record_event", "slot", "recv_slot",
                        "payload"})))
    return failure();
  std::string opName;
  if (failed(readString(*object, "op", where, std::nullopt, opName)))
    return failure();
  std::optional<ActionKind> kind = parsePlanOpName(opName);
  if (!kind)
    return error(where) << "unknown op '" << opName
                        << "'; expected forward, backward, backward_input, "
                           "backward_weight, send, recv, all_reduce, "
                           "reduce_scatter, all_gather, all_to_all, barrier, "
                           "unshard, reshard, reduce_grad or optimizer_step";
  Action action;
  action.kind = *kind;
  const bool transfer = *kind == ActionKind::Send || *kind == ActionKind::Recv;
  const bool collective = isCollective(*kind);
  const bool step = *kind == ActionKind::OptimizerStep;
  auto forbid = [&](StringRef key) -> LogicalResult {
    if (object->get(key))
      return error(where) << "a " << opName << " has no \"" << key << "\"";
    return success();
  };
  int64_t stage = -1, microbatch = -1, bytes = -1;
  std::optional<int64_t> stageDefault;
  if (collective || step)
    stageDefault = -1;
  if (step && failed(forbid("stage")))
    return failure();
  if (failed(readInt(*object, "stage", where, 0, kMaxStages - 1, stageDefault,
                     stage)))
    return failure();
  action.stage = static_cast<int32_t>(stage);
  if (isCompute(*kind) || transfer) {
    if (failed(readInt(*object, "microbatch", where, 0, kMaxMicrobatches - 1,
                       std::nullopt, microbatch)))
      return failure();
    action.microbatch = static_cast<int32_t>(microbatch);
  } else if (failed(forbid("microbatch"))) {
    return failure();
  }
  if (transfer) {
    std::string direction;
    int64_t peer = 0;
    if (failed(
            readString(*object, "direction", where, std::nullopt, direction)) ||
        failed(
            readInt(*object, "peer", where, 0, kMaxIndex, std::nullopt, peer)))
      return failure();
    if (direction != "forward" && direction != "backward")
      return error(where) << "\"direction\" must be forward or backward";
    action.gradient = direction == "backward";
    auto index = rankIndex.find(peer);
    action.peer = index == rankIndex.end() ? -1 : index->second;
    if (failed(readCommunicator(*object, where, action)) ||
        failed(readPayload(*object, where, action)))
      return failure();
  } else if (failed(forbid("direction")) || failed(forbid("peer")) ||
             failed(forbid("communicator")) || failed(forbid("payload"))) {
    return failure();
  }
  if (collective) {
    std::string group;
    if (failed(readString(*object, "group", where, std::nullopt, group)))
      return failure();
    auto index = groupIndex.find(group);
    if (index == groupIndex.end())
      return error(where) << "names group '" << group
                          << "', which the plan does not declare";
    // The dialect's verifier: a collective's issuer is one of its members.
    if (!groupRanks[index->second].count(rank))
      return error(where) << "a " << opName << " on group '" << group
                          << "' is issued by rank "
                          << result.plan.schedule.ranks[rank].id
                          << ", which is not a member of the group";
    action.group = index->second;
  } else if (failed(forbid("group"))) {
    return failure();
  }
  if (failed(readInt(*object, "bytes", where, 0, INT64_MAX, -1, bytes)))
    return failure();
  if (bytes >= 0 && !transfer && !collective)
    return error(where) << "a " << opName << " has no \"bytes\"";
  action.bytes = bytes;
  if (failed(readDeclaration(*object, where, opName, action)))
    return failure();

  // Bundles: consecutive instructions with the same id run together.
  const StringRef bundleKey = isCompute(*kind) ? "overlap" : "p2p_group";
  if (failed(forbid(isCompute(*kind) ? "p2p_group" : "overlap")))
    return failure();
  if (!isCompute(*kind) && !transfer && failed(forbid("p2p_group")))
    return failure();
  int64_t bundleId = -1;
  if (failed(readInt(*object, bundleKey, where, 0, kMaxIndex, -1, bundleId)))
    return failure();
  if (bundleId >= 0) {
    const Action *previous =
        program.actions.empty() ? nullptr : &program.actions.back();
    std::unordered_map<int64_t, uint32_t> &bundles =
        isCompute(*kind) ? overlapBundles : p2pBundles;
    auto known = bundles.find(bundleId);
    if (known == bundles.end()) {
      bundles[bundleId] = ++lastBundle;
      action.bundle = lastBundle;
    } else if (previous && previous->bundle == known->second &&
               isCompute(previous->kind) == isCompute(*kind)) {
      action.bundle = known->second;
    } else {
      return error(where) << bundleKey << " " << bundleId
                          << " is not one run of consecutive instructions";
    }
  }
  // A layerwise overlap: every member says so (the dialect's
  // `sched.overlap layerwise`).
  if (const llvm::json::Value *layerwise = object->get("layerwise")) {
    std::optional<bool> flag = layerwise->getAsBoolean();
    if (!flag)
      return error(where) << "\"layerwise\" must be true or false";
    if (*flag && (!isCompute(*kind) || action.bundle == 0))
      return error(where) << "\"layerwise\" belongs to the members of an "
                             "\"overlap\"";
    action.layerwise = *flag;
  }
  if (action.bundle != 0 && isCompute(*kind) && !program.actions.empty() &&
      program.actions.back().bundle == action.bundle &&
      program.actions.back().layerwise != action.layerwise)
    return error(where) << "overlap " << bundleId
                        << " is layerwise in one member and not in another";

  if (failed(readStreams(*object, where, opName, isCompute(*kind) || step,
                         action)))
    return failure();
  if (action.bundle != 0 && !program.actions.empty() &&
      program.actions.back().bundle == action.bundle &&
      program.actions.back().stream != action.stream)
    return error(where) << "runs on stream '"
                        << result.plan.schedule.streamName(action.stream)
                        << "', but the rest of its " << bundleKey
                        << " runs on '"
                        << result.plan.schedule.streamName(
                               program.actions.back().stream)
                        << "': the members of a p2p group or an overlap run "
                           "on one stream";
  BufferSlots &slot = slots.emplace_back();
  if (failed(readInt(*object, "slot", where, 0, kMaxIndex, -1, slot.slot)) ||
      failed(readInt(*object, "recv_slot", where, 0, kMaxIndex, -1,
                     slot.recvSlot)))
    return failure();
  program.actions.push_back(action);
  return success();
}

size_t PlanReader::instructionCount(const RootArray &ranks, size_t r) const {
  if (cut) {
    auto found = cut->instructions.find(r);
    return found == cut->instructions.end() ? 0 : found->second.elements.size();
  }
  const llvm::json::Object *object = (*ranks.parsed)[r].getAsObject();
  const llvm::json::Array *list =
      object ? object->getArray("instructions") : nullptr;
  return list ? list->size() : 0;
}

Location PlanReader::locateOffset(size_t at) const {
  StringRef before = text.take_front(at);
  return result.locate(before.count('\n') + 1,
                       at - (before.rfind('\n') + 1) + 1);
}

LogicalResult PlanReader::parseElement(StringRef element, size_t begin,
                                       StringRef where,
                                       llvm::json::Value &out) {
  // One element may hold as many objects as a whole document.
  if (llvm::Error error = checkJsonBudget(countBrackets(element).opened,
                                          kDefaultMemoryBudget, where)) {
    emitError(locateOffset(begin)) << llvm::toString(std::move(error));
    return failure();
  }
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(element);
  if (parsed) {
    out = std::move(*parsed);
    return success();
  }
  unsigned line, column;
  std::string message;
  splitParseError(llvm::toString(parsed.takeError()), line, column, message);
  // From the element's position to the text's.
  StringRef before = text.take_front(begin);
  const unsigned firstLine = before.count('\n') + 1;
  const unsigned firstColumn = begin - (before.rfind('\n') + 1) + 1;
  if (line == 1)
    column += firstColumn - 1;
  line += firstLine - 1;
  emitError(result.locate(line, column)) << "malformed JSON: " << message;
  return failure();
}

LogicalResult PlanReader::readDeclaration(const llvm::json::Object &object,
                                          const std::string &where,
                                          StringRef opName, Action &action) {
  if (!object.get("declaration"))
    return success();
  if (!isCollective(action.kind))
    return error(where) << "a " << opName << " has no \"declaration\"";
  const std::vector<CollectiveDeclaration> &declarations =
      result.plan.schedule.collectives;
  int64_t index = -1;
  if (failed(readInt(object, "declaration", where, 0, kMaxIndex, std::nullopt,
                     index)))
    return failure();
  if (static_cast<size_t>(index) >= declarations.size())
    return error(where) << "\"declaration\" is " << index << ", but the plan "
                        << "declares " << declarations.size()
                        << " collective(s)";
  const CollectiveDeclaration &decl = declarations[index];
  if (decl.kind != action.kind || decl.group != action.group ||
      (decl.stage >= 0 && decl.stage != action.stage) ||
      (action.bytes >= 0 && action.bytes != decl.bytes))
    return error(where) << "\"declaration\" " << index << " ("
                        << planOpName(decl.kind) << " on group '"
                        << result.plan.schedule.groups[decl.group].name << "', "
                        << collectiveTimingName(decl.when)
                        << ") does not explain this " << opName
                        << ": the declaration it names has its kind and "
                           "group, and its stage and bytes where both name "
                           "them";
  action.declaration = static_cast<int32_t>(index);
  return success();
}

LogicalResult PlanReader::readRanks(const RootArray &ranks) {
  Schedule &schedule = result.plan.schedule;
  bool anySlot = false;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const std::string where = llvm::formatv("ranks[{0}]", r).str();
    llvm::json::Value storage = nullptr;
    const llvm::json::Value *value = elementOf(ranks, r, storage);
    if (!value)
      return failure();
    const llvm::json::Array *instructions =
        readArray(*value->getAsObject(), "instructions", where, true);
    if (!instructions)
      return failure();
    rank = static_cast<int32_t>(r);
    p2pBundles.clear();
    overlapBundles.clear();
    RankProgram &program = schedule.ranks[r];
    const size_t count = instructionCount(ranks, r);
    const CutArray *elements = nullptr;
    if (cut)
      if (auto found = cut->instructions.find(r);
          found != cut->instructions.end())
        elements = &found->second;
    program.actions.reserve(count);
    std::vector<BufferSlots> &slots = result.plan.slots.emplace_back();
    for (size_t i = 0; i < count; ++i) {
      instruction = static_cast<int32_t>(i);
      // One instruction parsed at a time, dropped once read.
      llvm::json::Value element = nullptr;
      if (elements) {
        auto [begin, end] = elements->elements[i];
        if (failed(parseElement(
                text.slice(begin, end), begin,
                llvm::formatv("{0}.instructions[{1}]", where, i).str(),
                element)))
          return failure();
      }
      if (failed(readInstruction(elements ? element : (*instructions)[i],
                                 program, slots)))
        return failure();
      anySlot |= slots.back().slot >= 0 || slots.back().recvSlot >= 0;
    }
    if (failed(checkOverlaps(program)))
      return failure();
  }
  rank = instruction = -1;
  if (!anySlot)
    result.plan.slots.clear();
  return success();
}

LogicalResult PlanReader::checkOverlaps(const RankProgram &program) {
  const std::vector<Action> &actions = program.actions;
  for (size_t begin = 0; begin < actions.size();) {
    size_t end = begin + 1;
    const uint32_t bundle = actions[begin].bundle;
    while (bundle != 0 && end < actions.size() && actions[end].bundle == bundle)
      ++end;
    if (bundle != 0 && isCompute(actions[begin].kind)) {
      int forwards = 0, backwards = 0;
      for (size_t i = begin; i < end; ++i) {
        ActionKind kind = actions[i].kind;
        forwards += kind == ActionKind::Forward;
        backwards +=
            kind == ActionKind::Backward || kind == ActionKind::BackwardInput;
        if (kind == ActionKind::BackwardWeight) {
          instruction = static_cast<int32_t>(i);
          return error("overlap") << "a backward_weight cannot be part of an "
                                     "overlap, which holds one forward and "
                                     "one backward or backward_input";
        }
      }
      if (forwards != 1 || backwards != 1) {
        instruction = static_cast<int32_t>(begin);
        return error("overlap")
               << "an overlap must hold exactly one forward and one backward, "
               << "found " << forwards << " forward and " << backwards
               << " backward";
      }
    }
    begin = end;
  }
  return success();
}

FailureOr<JsonPlanInput> PlanReader::read() {
  cut = cutPlanArrays(text);
  StringRef document = cut ? StringRef(cut->skeleton) : text;
  // llvm::json's DOM takes some 5.5 KB per object or array however small:
  // count what it will hold before it allocates (a 5.6 MB file of small
  // objects passed 4 GB). Each element cut out is counted when it is
  // parsed.
  if (llvm::Error error = checkJsonBudget(countBrackets(document).opened,
                                          kDefaultMemoryBudget, "the plan")) {
    emitError(result.locate(1, 1)) << llvm::toString(std::move(error));
    return failure();
  }
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(document);
  if (!parsed) {
    unsigned line, column;
    std::string message;
    splitParseError(llvm::toString(parsed.takeError()), line, column, message);
    emitError(result.locate(line, column)) << "malformed JSON: " << message;
    return failure();
  }
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root) {
    emitError(result.locate(1, 1))
        << "malformed plan: the top level must be a JSON object";
    return failure();
  }
  // llvm::json keeps the last of a key given twice, silently: the whole
  // text, the elements cut out too, once the root is known to parse.
  if (std::optional<DuplicateKey> duplicate = findDuplicateKey(text)) {
    size_t caret = 0;
    emitError(locateOffset(duplicate->second))
        << "malformed plan: key \"" << clipExcerpt(duplicate->key, 0, caret)
        << "\" appears twice in one object (first on line "
        << duplicate->firstLine << ")";
    return failure();
  }
  if (failed(readHeader(*root)) || failed(readVerdict(*root)) ||
      failed(readMesh(*root)))
    return failure();
  std::optional<RootArray> ranks = rootArray(*root, "ranks", true);
  if (!ranks || failed(readRankIds(*ranks)))
    return failure();
  // Locate the instructions before reading them, for the diagnostics.
  std::vector<std::pair<unsigned, unsigned>> found = scanInstructions(text);
  size_t total = 0;
  for (size_t r = 0; r < ranks->size(); ++r)
    total += instructionCount(*ranks, r);
  if (found.size() == total) {
    size_t next = 0;
    for (size_t r = 0; r < ranks->size(); ++r) {
      std::vector<std::pair<unsigned, unsigned>> &rankPositions =
          result.positions.emplace_back();
      for (size_t i = 0, e = instructionCount(*ranks, r); i < e; ++i)
        rankPositions.push_back(found[next++]);
    }
  }
  if (failed(readGroups(*root)) || failed(readCollectives(*root)) ||
      failed(readAuxHeads(*root)) || failed(readStageCosts(*root)) ||
      failed(readStageRanks(*root)) || failed(readRanks(*ranks)))
    return failure();
  if (result.plan.schedule.ranks.empty()) {
    emitError(result.locate(1, 1)) << "malformed plan: it holds no ranks";
    return failure();
  }
  return std::move(result);
}

FailureOr<JsonPlanInput> sched::readJsonPlan(llvm::SourceMgr &sourceMgr,
                                             MLIRContext *context) {
  // llvm::json::parse recurses once per level.
  if (reportTooDeepNesting(sourceMgr))
    return failure();
  return PlanReader(sourceMgr, context).read();
}

OwningOpRef<ModuleOp> sched::importJsonPlan(llvm::SourceMgr &sourceMgr,
                                            MLIRContext *context) {
  context->getOrLoadDialect<SchedDialect>();
  FailureOr<JsonPlanInput> input = readJsonPlan(sourceMgr, context);
  if (failed(input))
    return nullptr;
  const Schedule &plain = input->plan.schedule;
  ProgramLocations locations;
  for (size_t r = 0; r < plain.ranks.size(); ++r) {
    const auto rank = static_cast<int32_t>(r);
    locations.ranks.push_back(input->locateAction(rank, -1));
    std::vector<Location> &actions = locations.actions.emplace_back();
    for (size_t i = 0; i < plain.ranks[r].actions.size(); ++i) {
      const Action &action = plain.ranks[r].actions[i];
      actions.push_back(input->locateAction(rank, static_cast<int32_t>(i)));
      if ((action.kind == ActionKind::Send ||
           action.kind == ActionKind::Recv) &&
          action.peer < 0) {
        emitError(actions.back())
            << "the peer of this transfer is no rank of the plan";
        return nullptr;
      }
    }
  }
  const Location file = input->locate(1, 1);
  // sched.schedule's memory_limit is a whole number: refuse a limit it
  // cannot hold rather than drop it.
  int64_t whole = 0;
  const std::string &limit = input->plan.verdict.memoryLimitText;
  if (!limit.empty() && StringRef(limit).getAsInteger(10, whole)) {
    emitError(file) << "the plan's memory_limit " << limit
                    << " has no exact form in sched.schedule, whose "
                       "memory_limit is a whole number up to 2^63-1 (verify "
                       "the plan itself with schedc verify)";
    return nullptr;
  }
  OpBuilder builder(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(file);
  builder.setInsertionPointToEnd(module->getBody());
  writeRuntimePlan(builder, file, input->plan, &locations);
  if (failed(verify(*module)))
    return nullptr;
  return module;
}
