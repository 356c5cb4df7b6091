//===- InsertTransfers.cpp - transfers of a compute schedule --------------===//
//
// Why the order cannot deadlock: a list simulation of the compute order
// gives every computation a start time, and every transfer the end time of
// its producer. Sorting each rank's actions by (time, transfers first,
// producer) lays every rank out along one global order in which both ends
// of a transfer share a point, a producer comes before its send and a
// receive before its consumer. Running the points in that order meets each
// rendezvous with both ranks waiting at it.
//
// Grouping keeps that property: a run of transfers between the same two
// ranks that is contiguous on both ranks can become one point, because no
// other action of either rank sits inside the run.
//
//===----------------------------------------------------------------------===//

#include "lib/Lower/InsertTransfers.h"
#include "lib/Simulate/Simulate.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <tuple>

using namespace sched;

char InsertTransfersError::ID = 0;

namespace {

/// Where an action sits in the global order of the rewritten schedule.
struct OrderKey {
  double time = 0;
  /// Transfers (0) before computations (1) at the same time: a receive
  /// precedes a consumer that starts when its producer ends, and a send
  /// precedes the producer's next computation.
  int kind = 0;
  /// The rank and index of the action itself, or of a transfer's producer.
  int32_t rank = 0;
  int32_t index = 0;

  bool operator<(const OrderKey &other) const {
    return std::tie(time, kind, rank, index) <
           std::tie(other.time, other.kind, other.rank, other.index);
  }
};

/// An action of the rewritten schedule with its place in the global order.
struct Placed {
  OrderKey key;
  Action action;
  /// Index into TransferInserter::transfers, or -1 for a computation.
  int32_t transfer = -1;
};

/// Both ends of one transfer, positions filled in after sorting.
struct Transfer {
  int32_t sendRank = -1;
  int32_t recvRank = -1;
  size_t sendPos = 0;
  size_t recvPos = 0;
};

/// An action of the input: a rank index and a position in its program.
struct ActionPos {
  int32_t rank = -1;
  int32_t index = -1;

  bool valid() const { return rank >= 0; }
};

/// One action position per (stage, microbatch) slot. A schedule usually
/// fills its index space, and a flat table is then smallest and fastest; a
/// few actions in a huge space (4,096 stages x 65,536 microbatches) get a
/// hash map instead, so that memory follows the actions either way.
class SlotTable {
public:
  SlotTable(size_t slots, size_t actions) : flat(slots <= 4 * actions + 1024) {
    if (flat)
      table.assign(slots, {});
    else
      sparse.reserve(actions);
  }

  ActionPos &operator[](size_t slot) {
    return flat ? table[slot] : sparse[slot];
  }
  ActionPos lookup(size_t slot) const {
    if (flat)
      return table[slot];
    return sparse.lookup(slot);
  }

private:
  bool flat;
  std::vector<ActionPos> table;
  llvm::DenseMap<size_t, ActionPos> sparse;
};

llvm::StringRef kindName(ActionKind kind) {
  switch (kind) {
  case ActionKind::Send:
    return "a send";
  case ActionKind::Recv:
    return "a receive";
  case ActionKind::AllReduce:
  case ActionKind::ReduceScatter:
  case ActionKind::AllGather:
  case ActionKind::AllToAll:
  case ActionKind::Barrier:
    return "a collective";
  case ActionKind::Unshard:
    return "an unshard";
  case ActionKind::Reshard:
    return "a reshard";
  case ActionKind::ReduceGrad:
    return "a gradient reduction";
  case ActionKind::OptimizerStep:
    return "an optimizer step";
  default:
    return "a computation";
  }
}

class TransferInserter {
public:
  TransferInserter(const Schedule &compute,
                   const InsertTransfersOptions &options)
      : compute(compute), options(options) {}

  llvm::Expected<Schedule> run();

private:
  llvm::Error fail(const llvm::Twine &message, int32_t rank = -1,
                   int32_t index = -1) const {
    return llvm::make_error<InsertTransfersError>(message.str(), rank, index);
  }
  llvm::Error indexActions();
  llvm::Error checkInputs() const;
  /// The producer of the cross-rank input of `consumer` on rank `r`, if it
  /// has one.
  std::optional<ActionPos> remoteProducer(int32_t r,
                                          const Action &consumer) const;
  llvm::Error place();
  void group();
  Schedule assemble();

  size_t slot(int32_t stage, int32_t mb) const {
    return static_cast<size_t>(stage) * compute.numMicrobatches + mb;
  }

  const Schedule &compute;
  const InsertTransfersOptions &options;
  std::vector<int32_t> stageRank;
  /// Per (stage, microbatch): its F, and its B or I.
  std::optional<SlotTable> forwards;
  std::optional<SlotTable> inputGrads;
  std::vector<std::vector<Placed>> placed;
  std::vector<Transfer> transfers;
  uint32_t nextBundle = 1;
};

} // namespace

llvm::Error TransferInserter::indexActions() {
  const size_t slots =
      static_cast<size_t>(compute.numStages) * compute.numMicrobatches;
  if (std::string why = compute.replicaError(); !why.empty())
    return fail(why);
  stageRank.assign(compute.numStages, -1);
  const size_t actions = compute.numActions();
  forwards.emplace(slots, actions);
  inputGrads.emplace(slots, actions);
  for (size_t r = 0; r < compute.ranks.size(); ++r) {
    const std::vector<Action> &actions = compute.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &a = actions[i];
      const ActionPos here{static_cast<int32_t>(r), static_cast<int32_t>(i)};
      nextBundle = std::max(nextBundle, a.bundle + 1);
      if (a.kind == ActionKind::Send || a.kind == ActionKind::Recv)
        return fail("the schedule already has transfers (" + kindName(a.kind) +
                        " on rank " + llvm::Twine(compute.ranks[r].id) +
                        "); insert them into a compute-only schedule",
                    here.rank, here.index);
      if (!isCompute(a.kind))
        return fail(llvm::Twine("transfers go into a compute-only schedule "
                                "(F, B, I, W and overlaps), but rank ") +
                        llvm::Twine(compute.ranks[r].id) + " holds " +
                        kindName(a.kind),
                    here.rank, here.index);
      if (a.stage < 0 || a.stage >= compute.numStages || a.microbatch < 0 ||
          a.microbatch >= compute.numMicrobatches)
        return fail(describeAction(compute, a) +
                        " is out of range: the schedule has " +
                        llvm::Twine(compute.numStages) + " stages and " +
                        llvm::Twine(compute.numMicrobatches) + " microbatches",
                    here.rank, here.index);
      if (!compute.visits(a.stage, a.microbatch))
        return fail(describeAction(compute, a) +
                        ": the microbatch belongs to another pipeline replica",
                    here.rank, here.index);
      int32_t &home = stageRank[a.stage];
      if (home >= 0 && home != here.rank)
        return fail(llvm::formatv("stage {0} runs on rank {1} and rank {2}; "
                                  "a transfer needs one rank per stage",
                                  a.stage, compute.ranks[home].id,
                                  compute.ranks[r].id),
                    here.rank, here.index);
      home = here.rank;
      ActionPos *entry = nullptr;
      if (a.kind == ActionKind::Forward)
        entry = &(*forwards)[slot(a.stage, a.microbatch)];
      else if (a.kind != ActionKind::BackwardWeight)
        entry = &(*inputGrads)[slot(a.stage, a.microbatch)];
      if (!entry)
        continue;
      if (entry->valid()) {
        const Action &first = compute.ranks[entry->rank].actions[entry->index];
        const int64_t firstRank = compute.ranks[entry->rank].id;
        if (first.kind == a.kind)
          return fail(llvm::formatv("duplicate {0}: it already runs on "
                                    "rank {1}",
                                    describeAction(compute, a), firstRank),
                      here.rank, here.index);
        return fail(llvm::formatv("{0} and {1} (on rank {2}) both compute "
                                  "the input gradient of stage {3} mb {4}",
                                  describeAction(compute, a),
                                  describeAction(compute, first), firstRank,
                                  a.stage, a.microbatch),
                    here.rank, here.index);
      }
      *entry = here;
    }
  }
  return llvm::Error::success();
}

std::optional<ActionPos>
TransferInserter::remoteProducer(int32_t r, const Action &a) const {
  if (a.kind == ActionKind::Forward && !compute.isFirstStage(a.stage) &&
      stageRank[a.stage - 1] != r)
    return forwards->lookup(slot(a.stage - 1, a.microbatch));
  if ((a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardInput) &&
      !compute.isLastStage(a.stage) && stageRank[a.stage + 1] != r)
    return inputGrads->lookup(slot(a.stage + 1, a.microbatch));
  return std::nullopt;
}

llvm::Error TransferInserter::checkInputs() const {
  for (size_t r = 0; r < compute.ranks.size(); ++r) {
    const std::vector<Action> &actions = compute.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      std::optional<ActionPos> producer =
          remoteProducer(static_cast<int32_t>(r), actions[i]);
      if (!producer || producer->valid())
        continue;
      const Action &a = actions[i];
      const bool forward = a.kind == ActionKind::Forward;
      return fail(llvm::formatv("{0} needs the {1} of stage {2}, which no "
                                "rank computes for mb {3}",
                                describeAction(compute, a),
                                forward ? "activation" : "input gradient",
                                forward ? a.stage - 1 : a.stage + 1,
                                a.microbatch),
                  static_cast<int32_t>(r), static_cast<int32_t>(i));
    }
  }
  return llvm::Error::success();
}

llvm::Error TransferInserter::place() {
  SimulationOptions simulation;
  // A send must come strictly after its producer, so every computation
  // needs a positive duration; zero costs fall back to unit steps.
  for (const StageCost &cost : compute.stageCosts)
    if (!(cost.forward > 0 && cost.backwardInput > 0 &&
          cost.backwardWeight > 0))
      simulation.unitSteps = true;
  llvm::Expected<Timeline> timeline = simulate(compute, simulation);
  if (!timeline) {
    const std::string why = llvm::toString(timeline.takeError());
    return fail("no order of transfers can make this compute order run: " +
                llvm::StringRef(why).rtrim(';'));
  }

  // Each rank's placed actions and the transfers, counted first: grown one
  // at a time, each vector took up to twice its size at the peak.
  placed.assign(compute.ranks.size(), {});
  std::vector<size_t> perRank(compute.ranks.size());
  size_t numTransfers = 0;
  for (size_t r = 0; r < compute.ranks.size(); ++r) {
    const std::vector<Action> &actions = compute.ranks[r].actions;
    perRank[r] += actions.size();
    for (const Action &action : actions)
      if (std::optional<ActionPos> producer =
              remoteProducer(static_cast<int32_t>(r), action)) {
        ++perRank[r];
        ++perRank[producer->rank];
        ++numTransfers;
      }
  }
  for (size_t r = 0; r < compute.ranks.size(); ++r)
    placed[r].reserve(perRank[r]);
  transfers.reserve(numTransfers);
  for (size_t r = 0; r < compute.ranks.size(); ++r) {
    const std::vector<Action> &actions = compute.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      const ActionTime &time = timeline->times[r][i];
      placed[r].push_back(
          {{time.start, 1, static_cast<int32_t>(r), static_cast<int32_t>(i)},
           actions[i],
           -1});
      std::optional<ActionPos> producer =
          remoteProducer(static_cast<int32_t>(r), actions[i]);
      if (!producer)
        continue;
      const Action &made =
          compute.ranks[producer->rank].actions[producer->index];
      const OrderKey key{timeline->times[producer->rank][producer->index].end,
                         0, producer->rank, producer->index};
      Action send = made;
      send.kind = ActionKind::Send;
      send.gradient = made.kind != ActionKind::Forward;
      send.peer = static_cast<int32_t>(r);
      send.bundle = 0;
      // The activation of the lower stage of the pair travels, or the
      // gradient of the same size.
      const int32_t lower = std::min(made.stage, actions[i].stage);
      if (!compute.stageCosts.empty())
        send.bytes = compute.stageCosts[lower].output;
      Action recv = send;
      recv.kind = ActionKind::Recv;
      recv.stage = actions[i].stage;
      recv.peer = producer->rank;
      const auto id = static_cast<int32_t>(transfers.size());
      transfers.push_back({producer->rank, static_cast<int32_t>(r), 0, 0});
      placed[producer->rank].push_back({key, send, id});
      placed[r].push_back({key, recv, id});
    }
  }
  for (size_t r = 0; r < placed.size(); ++r) {
    std::sort(placed[r].begin(), placed[r].end(),
              [](const Placed &a, const Placed &b) { return a.key < b.key; });
    for (size_t pos = 0; pos < placed[r].size(); ++pos) {
      const Placed &p = placed[r][pos];
      if (p.transfer < 0)
        continue;
      Transfer &t = transfers[p.transfer];
      (p.action.kind == ActionKind::Send ? t.sendPos : t.recvPos) = pos;
    }
  }
  return llvm::Error::success();
}

void TransferInserter::group() {
  auto otherEnd = [&](int32_t r, const Placed &p) {
    const Transfer &t = transfers[p.transfer];
    return t.sendRank == r ? std::pair{t.recvRank, t.recvPos}
                           : std::pair{t.sendRank, t.sendPos};
  };
  for (size_t r = 0; r < placed.size(); ++r) {
    std::vector<Placed> &here = placed[r];
    const auto rank = static_cast<int32_t>(r);
    for (size_t begin = 0; begin < here.size();) {
      if (here[begin].transfer < 0 ||
          otherEnd(rank, here[begin]).first < rank) {
        ++begin;
        continue;
      }
      // Extend while the next transfer goes to the same rank and sits right
      // after this one there too.
      auto [peer, peerPos] = otherEnd(rank, here[begin]);
      size_t end = begin + 1;
      while (end < here.size() && here[end].transfer >= 0 &&
             otherEnd(rank, here[end]) ==
                 std::pair{peer, peerPos + (end - begin)})
        ++end;
      if (end - begin >= 2) {
        const uint32_t bundle = nextBundle++;
        for (size_t k = begin; k < end; ++k) {
          here[k].action.bundle = bundle;
          placed[peer][peerPos + (k - begin)].action.bundle = bundle;
        }
      }
      begin = end;
    }
  }
}

Schedule TransferInserter::assemble() {
  // Placing and grouping are done: only the placed actions are left to copy.
  std::vector<Transfer>().swap(transfers);
  Schedule result;
  result.numStages = compute.numStages;
  result.numMicrobatches = compute.numMicrobatches;
  result.replicas = compute.replicas;
  result.stageCosts = compute.stageCosts;
  result.groups = compute.groups;
  // The computes keep their streams and events: their names go with them.
  result.streams = compute.streams;
  result.events = compute.events;
  for (size_t r = 0; r < compute.ranks.size(); ++r) {
    RankProgram program;
    program.id = compute.ranks[r].id;
    program.actions.reserve(placed[r].size());
    for (const Placed &p : placed[r])
      program.actions.push_back(p.action);
    // Each rank's placed actions (twice the size of its result) go as soon
    // as its program is written, which keeps the peak down.
    std::vector<Placed>().swap(placed[r]);
    result.ranks.push_back(std::move(program));
  }
  return result;
}

llvm::Expected<Schedule> TransferInserter::run() {
  if (llvm::Error error = indexActions())
    return std::move(error);
  if (llvm::Error error = checkInputs())
    return std::move(error);
  if (llvm::Error error = place())
    return std::move(error);
  if (options.group)
    group();
  return assemble();
}

llvm::Expected<Schedule>
sched::insertTransfers(const Schedule &compute,
                       const InsertTransfersOptions &options) {
  return TransferInserter(compute, options).run();
}

int64_t sched::countTransferGroups(const Schedule &lowered) {
  int64_t groups = 0;
  for (const RankProgram &rank : lowered.ranks) {
    uint32_t open = 0;
    for (const Action &action : rank.actions) {
      if (isCompute(action.kind)) {
        open = 0;
        continue;
      }
      groups += action.bundle != 0 && action.bundle != open;
      open = action.bundle;
    }
  }
  return groups;
}
