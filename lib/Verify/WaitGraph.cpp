//===- WaitGraph.cpp - who waits for whom in a schedule -------------------===//

#include "lib/Verify/WaitGraph.h"
#include "lib/Verify/StepRules.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <map>
#include <set>

using namespace sched;

const char *sched::waitReasonWords(WaitReason reason) {
  switch (reason) {
  case WaitReason::ProgramOrder:
    return "it comes next in the rank's program";
  case WaitReason::Data:
    return "it needs that action's output";
  case WaitReason::Transfer:
    return "it consumes the data that send carries";
  case WaitReason::AuxLoss:
    return "a global-batch aux head needs every forward of its stage before "
           "any backward there";
  case WaitReason::BiasUpdate:
    return "an aux-free head's bias update follows the last gradient of its "
           "stage";
  case WaitReason::CommunicatorCreation:
    return "a lazy communicator is created at its first use on each member, "
           "and creation returns only once every member reached it";
  case WaitReason::Rendezvous:
    return "a transfer completes only once its peer posted the match";
  case WaitReason::GroupCompletion:
    return "a p2p group completes only when all of its transfers completed";
  case WaitReason::Parameters:
    return "FSDP gathers the stage's parameters (UNSHARD) before its compute "
           "and frees them (RESHARD) after it";
  case WaitReason::GradientReduction:
    return "gradient reduction waits for every backward and weight gradient "
           "of its stage";
  case WaitReason::DeclaredCollective:
    return "the collective is declared to run at that compute";
  case WaitReason::ShardedReduction:
    return "on an FSDP stage a gradient sum over another group follows "
           "REDUCE_GRAD and moves the reduced shard";
  case WaitReason::OptimizerStep:
    return "the optimizer step waits for every action of its rank";
  case WaitReason::ShapeExchange:
    return "the receive allocates its buffer from the shape that exchange "
           "brought";
  }
  return "";
}

WaitGraph::WaitGraph(const ScheduleIndex &index, const VerifyOptions &options)
    : index(index), options(options) {}

uint32_t WaitGraph::find(uint32_t x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

void WaitGraph::merge(ActionRef a, ActionRef b) {
  uint32_t x = find(id(a)), y = find(id(b));
  if (x != y)
    parent[std::max(x, y)] = std::min(x, y);
}

uint32_t WaitGraph::addNode() {
  const uint32_t node = static_cast<uint32_t>(parent.size());
  parent.push_back(node);
  return node;
}

void WaitGraph::addNodeEdge(uint32_t from, ActionRef fromAction, uint32_t to,
                            ActionRef toAction, WaitReason reason) {
  edges.push_back({from, to, fromAction, toAction, reason});
}

void WaitGraph::addEdge(ActionRef from, ActionRef to, WaitReason reason) {
  // A wait on an earlier action of the same rank is implied by program
  // order, unless both run together in one bundle.
  if (reason != WaitReason::ProgramOrder && from.rank == to.rank &&
      from.index < to.index) {
    const Action &a = index.action(from), &b = index.action(to);
    if (a.bundle == 0 || a.bundle != b.bundle) {
      // On streams, program order implies nothing: StreamOrder checks it.
      if (index.schedule.hasStreams())
        implied.push_back({0, 0, from, to, reason});
      return;
    }
  }
  edges.push_back({id(from), id(to), from, to, reason});
}

bool WaitGraph::sameBundle(const Action &previous, const Action &next) const {
  // Overlaps always run together; p2p groups complete together under
  // rendezvous semantics, while under eager semantics their members are
  // posted one by one.
  return next.bundle != 0 && previous.bundle == next.bundle &&
         (isCompute(next.kind) || options.p2p == P2PSemantics::Rendezvous);
}

void WaitGraph::mergeTogether() {
  const Schedule &schedule = index.schedule;
  // Per group instance (group, member set, ordinal): its first member.
  llvm::DenseMap<uint64_t, ActionRef> collectiveFirst;
  std::vector<std::vector<uint32_t>> issued(
      schedule.ranks.size(), std::vector<uint32_t>(schedule.groups.size()));
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &a = actions[i];
      const ActionRef here{static_cast<int32_t>(r), static_cast<int32_t>(i)};
      if (i > 0 && sameBundle(actions[i - 1], a))
        merge(here, {here.rank, here.index - 1});
      if (a.group < 0 || isCompute(a.kind) || a.kind == ActionKind::Send ||
          a.kind == ActionKind::Recv)
        continue;
      const ProcessGroup &group = schedule.groups[a.group];
      uint64_t set = 0;
      while (set < group.members.size() &&
             !llvm::is_contained(group.members[set], static_cast<int32_t>(r)))
        ++set;
      const uint64_t key = (static_cast<uint64_t>(a.group) << 48) |
                           (set << 32) | issued[r][a.group]++;
      auto [it, inserted] = collectiveFirst.try_emplace(key, here);
      if (!inserted)
        merge(here, it->second);
    }
  }
}

void WaitGraph::linkRendezvous() {
  // NCCL's group semantics: a group posts all of its operations at once
  // (its members are one class), each operation completes once its peer
  // posted the match, and the rank goes on when all of them completed. A
  // lone send or receive is posted and completes in one step, so a pair of
  // lone operations is one class; a pair with a group member on either side
  // completes at a node of its own, which the group's completion waits for.
  if (options.p2p != P2PSemantics::Rendezvous)
    return;
  const Schedule &schedule = index.schedule;
  // The completion node of each group member's group.
  llvm::DenseMap<uint32_t, uint32_t> memberDone;
  llvm::DenseMap<uint32_t, ActionRef> doneLast;
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    for (size_t begin = 0; begin < actions.size();) {
      size_t end = begin + 1;
      const Action &a = actions[begin];
      if (a.bundle == 0 || isCompute(a.kind)) {
        begin = end;
        continue;
      }
      while (end < actions.size() && actions[end].bundle == a.bundle)
        ++end;
      const uint32_t done = addNode();
      const ActionRef last{static_cast<int32_t>(r),
                           static_cast<int32_t>(end - 1)};
      groupDone[id(last)] = done;
      doneLast[done] = last;
      for (size_t i = begin; i < end; ++i)
        memberDone[id({static_cast<int32_t>(r), static_cast<int32_t>(i)})] =
            done;
      begin = end;
    }
  }
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &a = actions[i];
      if (a.kind != ActionKind::Send)
        continue;
      const ActionRef send{static_cast<int32_t>(r), static_cast<int32_t>(i)};
      const int32_t far = a.gradient ? a.stage - 1 : a.stage + 1;
      const ActionRef recv = index.transfer(ActionKind::Recv, a.gradient, far,
                                            a.microbatch, a.shape);
      auto sendDone = memberDone.find(id(send));
      auto recvDone = memberDone.find(id(recv));
      const bool sendLone = sendDone == memberDone.end();
      const bool recvLone = recvDone == memberDone.end();
      if (sendLone && recvLone) {
        merge(send, recv);
        continue;
      }
      const uint32_t pair = sendLone   ? id(send)
                            : recvLone ? id(recv)
                                       : addNode();
      // The pair completes once both sides are posted; a group's
      // completion waits for each of its pairs.
      if (!sendLone) {
        addNodeEdge(id(send), send, pair, recv, WaitReason::Rendezvous);
        addNodeEdge(pair, send, sendDone->second, doneLast[sendDone->second],
                    WaitReason::GroupCompletion);
      }
      if (!recvLone) {
        addNodeEdge(id(recv), recv, pair, send, WaitReason::Rendezvous);
        addNodeEdge(pair, recv, recvDone->second, doneLast[recvDone->second],
                    WaitReason::GroupCompletion);
      }
    }
  }
}

void WaitGraph::addCommunicatorCreation() {
  const Schedule &schedule = index.schedule;
  const size_t numGroups = schedule.groups.size();
  // Per (group, member set): each member's first action on it.
  std::map<std::pair<int32_t, size_t>, std::vector<ActionRef>> firstUses;
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    std::set<int32_t> seen;
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action &a = actions[i];
      const bool transfer =
          a.kind == ActionKind::Send || a.kind == ActionKind::Recv;
      const int32_t g = transfer ? a.communicator : a.group;
      if (g < 0 || static_cast<size_t>(g) >= numGroups ||
          !schedule.groups[g].lazy || !seen.insert(g).second)
        continue;
      const std::vector<std::vector<int32_t>> &sets = schedule.groups[g].members;
      for (size_t k = 0; k < sets.size(); ++k)
        if (llvm::is_contained(sets[k], static_cast<int32_t>(r)))
          firstUses[{g, k}].push_back(
              {static_cast<int32_t>(r), static_cast<int32_t>(i)});
    }
  }
  // Per bundle (rank, first position): its members' creations, each with
  // the member that waits for it.
  std::map<std::pair<int32_t, int32_t>,
           std::vector<std::pair<ActionRef, uint32_t>>>
      bundleCreations;
  for (const auto &[key, uses] : firstUses) {
    // A member that never uses the communicator leaves the others in
    // creation; the rules of messages and collectives report that member.
    if (uses.size() != schedule.groups[key.first].members[key.second].size() ||
        uses.size() < 2)
      continue;
    const uint32_t created = addNode();
    for (ActionRef use : uses) {
      // A member reaches the creation once the action before the use's
      // bundle completed (the members of a p2p group may complete
      // together).
      const std::vector<Action> &actions = schedule.ranks[use.rank].actions;
      int32_t begin = use.index;
      while (begin > 0 && actions[use.index].bundle != 0 &&
             actions[begin - 1].bundle == actions[use.index].bundle)
        --begin;
      if (begin > 0) {
        // After the previous action completed: a p2p group's completion
        // under rendezvous, not its posting (found by check_mutants.py
        // --level streams: a lone first use after a group).
        const ActionRef previous{use.rank, begin - 1};
        auto done = groupDone.find(id(previous));
        addNodeEdge(done == groupDone.end() ? id(previous) : done->second,
                    previous, created, use,
                    WaitReason::CommunicatorCreation);
      }
      bundleCreations[{use.rank, begin}].push_back({use, created});
      addNodeEdge(created, use, id(use), use,
                  WaitReason::CommunicatorCreation);
    }
  }
  // batch_isend_irecv creates each operation's communicator as it issues
  // it, one by one: within a bundle, in the order of its members.
  for (auto &[bundle, creations] : bundleCreations) {
    llvm::sort(creations, [](const auto &x, const auto &y) {
      return x.first.index < y.first.index;
    });
    for (size_t k = 1; k < creations.size(); ++k)
      addNodeEdge(creations[k - 1].second, creations[k - 1].first,
                  creations[k].second, creations[k].first,
                  WaitReason::CommunicatorCreation);
  }
}

void WaitGraph::addProgramOrder() {
  const Schedule &schedule = index.schedule;
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    const std::vector<Action> &actions = schedule.ranks[r].actions;
    for (size_t i = 1; i < actions.size(); ++i) {
      if (sameBundle(actions[i - 1], actions[i]))
        continue;
      const ActionRef previous{static_cast<int32_t>(r),
                               static_cast<int32_t>(i - 1)};
      const ActionRef next{static_cast<int32_t>(r), static_cast<int32_t>(i)};
      // After a p2p group under rendezvous, the rank goes on once the whole
      // group completed.
      auto done = groupDone.find(id(previous));
      addNodeEdge(done == groupDone.end() ? id(previous) : done->second,
                  previous, id(next), next, WaitReason::ProgramOrder);
    }
  }
}

void WaitGraph::addInput(ActionRef producer, ActionRef consumer, bool gradient,
                         int32_t consumerStage, int32_t mb) {
  if (producer.rank == consumer.rank || !index.lowered) {
    addEdge(producer, consumer, WaitReason::Data);
    return;
  }
  const int32_t producerStage =
      gradient ? consumerStage + 1 : consumerStage - 1;
  ActionRef send =
      index.transfer(ActionKind::Send, gradient, producerStage, mb);
  ActionRef recv =
      index.transfer(ActionKind::Recv, gradient, consumerStage, mb);
  addEdge(producer, send, WaitReason::Data);
  addEdge(recv, consumer, WaitReason::Data);
  // Under rendezvous the send and the receive are one class; under eager
  // semantics the receive is only posted and its consumer waits for the
  // data itself.
  if (options.p2p == P2PSemantics::Eager)
    addEdge(send, consumer, WaitReason::Transfer);
  if (!index.shapes)
    return;
  // A shape exchange ahead of the data (Megatron's variable_seq_lengths):
  // its send reads the producer's output, and the data receive allocates
  // its buffer from the shape received (under eager semantics, from the
  // shape its send carries: the shape receive is only posted).
  const ActionRef shapeSend = index.transfer(ActionKind::Send, gradient,
                                             producerStage, mb, /*shape=*/true);
  const ActionRef shapeRecv = index.transfer(ActionKind::Recv, gradient,
                                             consumerStage, mb, /*shape=*/true);
  if (shapeSend.rank >= 0)
    addEdge(producer, shapeSend, WaitReason::Data);
  if (shapeRecv.rank < 0 || recv.rank < 0)
    return;
  addEdge(shapeRecv, recv, WaitReason::ShapeExchange);
  if (options.p2p == P2PSemantics::Eager && shapeSend.rank >= 0)
    addEdge(shapeSend, recv, WaitReason::ShapeExchange);
}

void WaitGraph::addDataEdges() {
  const Schedule &schedule = index.schedule;
  const int32_t perReplica = schedule.microbatchesPerReplica();
  for (int32_t s = 0; s < index.numStages; ++s)
    for (int32_t m = schedule.firstMicrobatchOf(s), end = m + perReplica;
         m < end; ++m) {
      const ActionRef forward = index.compute(ActionKind::Forward, s, m);
      if (!schedule.isFirstStage(s))
        addInput(index.compute(ActionKind::Forward, s - 1, m), forward,
                 /*gradient=*/false, s, m);
      const ActionRef backward = index.inputGradient(s, m);
      addEdge(forward, backward, WaitReason::Data);
      if (!schedule.isLastStage(s))
        addInput(index.inputGradient(s + 1, m), backward, /*gradient=*/true, s,
                 m);
      const ActionRef weight = index.compute(ActionKind::BackwardWeight, s, m);
      if (weight.rank >= 0)
        addEdge(backward, weight, WaitReason::Data);
    }
}

void WaitGraph::addAuxLossEdges() {
  const Schedule &schedule = index.schedule;
  const int32_t perStage = schedule.stagesPerReplica();
  // A global-batch loss couples every microbatch of the step: with several
  // replicas, the copies of the head's stage in every replica.
  std::vector<int32_t> modelStages;
  for (int32_t s : options.globalBatchAuxStages)
    if (s >= 0 && s < index.numStages)
      modelStages.push_back(s % perStage);
  for (const AuxLossHead &head : schedule.auxHeads)
    if (head.scope == AuxLossScope::GlobalBatch && head.stage >= 0 &&
        head.stage < index.numStages)
      modelStages.push_back(head.stage % perStage);
  llvm::sort(modelStages);
  modelStages.erase(llvm::unique(modelStages), modelStages.end());
  for (int32_t model : modelStages) {
    llvm::SmallVector<std::pair<ActionRef, ActionRef>, 2> copies;
    for (int32_t s = model; s < index.numStages; s += perStage) {
      const int32_t first = schedule.firstMicrobatchOf(s);
      ActionRef lastForward = index.compute(ActionKind::Forward, s, first);
      ActionRef firstBackward = index.inputGradient(s, first);
      for (int32_t m = first + 1,
                   end = first + schedule.microbatchesPerReplica();
           m < end; ++m) {
        ActionRef f = index.compute(ActionKind::Forward, s, m);
        ActionRef b = index.inputGradient(s, m);
        if (f.index > lastForward.index)
          lastForward = f;
        if (b.index < firstBackward.index)
          firstBackward = b;
      }
      copies.push_back({lastForward, firstBackward});
    }
    for (const auto &from : copies)
      for (const auto &to : copies)
        addEdge(from.first, to.second, WaitReason::AuxLoss);
  }
}

void WaitGraph::build() {
  const Schedule &schedule = index.schedule;
  offsets.assign(schedule.ranks.size() + 1, 0);
  for (size_t r = 0; r < schedule.ranks.size(); ++r)
    offsets[r + 1] = offsets[r] + schedule.ranks[r].actions.size();
  const uint32_t numActions = offsets.back();
  parent.resize(numActions);
  for (uint32_t i = 0; i < numActions; ++i)
    parent[i] = i;
  edges.reserve(3 * static_cast<size_t>(numActions));
  mergeTogether();
  linkRendezvous();
  addProgramOrder();
  addDataEdges();
  addAuxLossEdges();
  addCommunicatorCreation();
  StepRules(index, options.wholeStep)
      .addOrders([this](ActionRef from, ActionRef to, WaitReason reason) {
        addEdge(from, to, reason);
      });
  // Dense class ids, over the actions and the nodes added for rendezvous.
  const uint32_t numNodes = static_cast<uint32_t>(parent.size());
  std::vector<uint32_t> dense(numNodes, UINT32_MAX);
  classCount = 0;
  for (uint32_t i = 0; i < numNodes; ++i) {
    uint32_t root = find(i);
    if (dense[root] == UINT32_MAX)
      dense[root] = classCount++;
  }
  for (WaitEdge &e : edges) {
    e.from = dense[find(e.from)];
    e.to = dense[find(e.to)];
  }
}

bool WaitGraph::sort() {
  std::vector<uint32_t> start(classCount + 1, 0);
  remainingInDegree.assign(classCount, 0);
  for (const WaitEdge &e : edges) {
    ++start[e.from + 1];
    ++remainingInDegree[e.to];
  }
  for (uint32_t c = 0; c < classCount; ++c)
    start[c + 1] += start[c];
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  std::vector<uint32_t> out(edges.size());
  for (const WaitEdge &e : edges)
    out[fill[e.from]++] = e.to;
  std::vector<uint32_t> queue;
  queue.reserve(classCount);
  for (uint32_t c = 0; c < classCount; ++c)
    if (remainingInDegree[c] == 0)
      queue.push_back(c);
  order.assign(classCount, -1);
  for (size_t head = 0; head < queue.size(); ++head) {
    const uint32_t c = queue[head];
    order[c] = static_cast<int64_t>(head);
    for (uint32_t k = start[c]; k < start[c + 1]; ++k)
      if (--remainingInDegree[out[k]] == 0)
        queue.push_back(out[k]);
  }
  return queue.size() == classCount;
}

std::vector<size_t> WaitGraph::findCycle() const {
  // Every class left unsorted has an unsorted predecessor; walking back
  // through them must revisit a class.
  std::vector<int64_t> incoming(classCount, -1);
  for (size_t k = 0; k < edges.size(); ++k) {
    const WaitEdge &e = edges[k];
    if (order[e.from] < 0 && order[e.to] < 0 && incoming[e.to] < 0)
      incoming[e.to] = static_cast<int64_t>(k);
  }
  uint32_t start = 0;
  while (start < classCount && order[start] >= 0)
    ++start;
  std::vector<int64_t> seenAt(classCount, -1);
  std::vector<size_t> path;
  uint32_t c = start;
  while (seenAt[c] < 0) {
    seenAt[c] = static_cast<int64_t>(path.size());
    const size_t k = static_cast<size_t>(incoming[c]);
    path.push_back(k);
    c = edges[k].from;
  }
  // path holds edges walked backwards; the cycle is the tail from c.
  std::vector<size_t> cycle(path.begin() + seenAt[c], path.end());
  std::reverse(cycle.begin(), cycle.end());
  return cycle;
}

namespace {
using EdgeList = std::vector<std::pair<uint32_t, uint32_t>>;

/// Sorts `edges` (over nodes [0, numNodes)) by source, then target, and
/// drops repeats: two stable counting passes, by target and then by source,
/// in time linear in edges and nodes. A comparison sort of the millions of
/// edges of a 2^40-token plan's proof fell back to heapsort on their
/// pattern (a tenth of the proof's CPU).
void sortUnique(uint32_t numNodes, EdgeList &edges) {
  EdgeList sorted(edges.size());
  std::vector<uint32_t> start(static_cast<size_t>(numNodes) + 1);
  auto pass = [&](const EdgeList &from, EdgeList &to, bool bySource) {
    std::fill(start.begin(), start.end(), 0);
    for (auto [source, target] : from)
      ++start[(bySource ? source : target) + 1];
    for (uint32_t n = 0; n < numNodes; ++n)
      start[n + 1] += start[n];
    for (const auto &edge : from)
      to[start[bySource ? edge.first : edge.second]++] = edge;
  };
  pass(edges, sorted, /*bySource=*/false);
  pass(sorted, edges, /*bySource=*/true);
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
}

/// Contracts every edge that is its target's only incoming edge (or, with
/// `bySource`, its source's only outgoing edge). A cycle through that node
/// must use the edge, so the contracted graph has a cycle iff the original
/// has; an edge that would close a cycle stays, as a self loop.
uint32_t contract(uint32_t numNodes, EdgeList &edges, bool bySource) {
  std::vector<uint32_t> degree(numNodes, 0);
  for (auto [from, to] : edges)
    ++degree[bySource ? from : to];
  std::vector<uint32_t> root(numNodes);
  for (uint32_t n = 0; n < numNodes; ++n)
    root[n] = n;
  auto findRoot = [&](uint32_t x) {
    while (root[x] != x) {
      root[x] = root[root[x]];
      x = root[x];
    }
    return x;
  };
  std::vector<bool> contracted(edges.size(), false);
  for (size_t k = 0; k < edges.size(); ++k) {
    auto [from, to] = edges[k];
    if (from == to || degree[bySource ? from : to] != 1)
      continue;
    uint32_t a = findRoot(from), b = findRoot(to);
    if (a == b)
      continue;
    root[b] = a;
    contracted[k] = true;
  }
  std::vector<uint32_t> dense(numNodes, UINT32_MAX);
  uint32_t count = 0;
  for (uint32_t n = 0; n < numNodes; ++n)
    if (findRoot(n) == n)
      dense[n] = count++;
  EdgeList kept;
  for (size_t k = 0; k < edges.size(); ++k)
    if (!contracted[k])
      kept.emplace_back(dense[findRoot(edges[k].first)],
                        dense[findRoot(edges[k].second)]);
  sortUnique(count, kept);
  edges = std::move(kept);
  return count;
}

/// The longest-path depth of every node (0 for sources), or nothing if
/// there is a cycle. Depths satisfy every edge and take few distinct values
/// (the critical path's length), which keeps Z3's numerals few.
std::vector<int64_t> topologicalTimes(uint32_t numNodes,
                                      const EdgeList &edges) {
  std::vector<uint32_t> start(numNodes + 1, 0), inDegree(numNodes, 0);
  for (auto [from, to] : edges) {
    ++start[from + 1];
    ++inDegree[to];
  }
  for (uint32_t n = 0; n < numNodes; ++n)
    start[n + 1] += start[n];
  std::vector<uint32_t> out(edges.size());
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  for (auto [from, to] : edges)
    out[fill[from]++] = to;
  std::vector<uint32_t> queue;
  for (uint32_t n = 0; n < numNodes; ++n)
    if (inDegree[n] == 0)
      queue.push_back(n);
  std::vector<int64_t> depth(numNodes, 0);
  for (size_t head = 0; head < queue.size(); ++head) {
    const uint32_t n = queue[head];
    for (uint32_t k = start[n]; k < start[n + 1]; ++k) {
      depth[out[k]] = std::max(depth[out[k]], depth[n] + 1);
      if (--inDegree[out[k]] == 0)
        queue.push_back(out[k]);
    }
  }
  if (queue.size() != numNodes)
    return {};
  return depth;
}
} // namespace

ShrunkGraph WaitGraph::shrink() const {
  ShrunkGraph shrunk;
  shrunk.edges.reserve(edges.size());
  for (const WaitEdge &e : edges)
    shrunk.edges.emplace_back(e.from, e.to);
  sortUnique(classCount, shrunk.edges);
  shrunk.numNodes = contract(classCount, shrunk.edges, /*bySource=*/false);
  shrunk.numNodes = contract(shrunk.numNodes, shrunk.edges, /*bySource=*/true);
  shrunk.witness = topologicalTimes(shrunk.numNodes, shrunk.edges);
  return shrunk;
}
