//===- WaitGraph.h - who waits for whom in a schedule -----------*- C++ -*-===//
//
// Internal to lib/Verify. Turns a schedule into a graph of "must happen
// before" edges between classes of actions that complete together
// (rendezvous pairs and groups, overlaps, collective instances). The
// schedule can run to the end iff the graph is acyclic; a topological order
// is a candidate execution, a cycle is a deadlock or a dependency
// violation.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_VERIFY_WAITGRAPH_H
#define LIB_VERIFY_WAITGRAPH_H

#include "lib/Verify/ScheduleIndex.h"

#include "llvm/ADT/DenseMap.h"

namespace sched {

/// Why one action must wait for another.
enum class WaitReason : uint8_t {
  /// The next action of the same rank.
  ProgramOrder,
  /// The consumer needs the producer's output.
  Data,
  /// A receive's consumer waits for the matching send (eager semantics).
  Transfer,
  /// A global-batch auxiliary loss holds every backward of a stage until
  /// every forward of that stage ran.
  AuxLoss,
  /// Rendezvous: a transfer of a p2p group completes once its peer posted
  /// the match.
  Rendezvous,
  /// Rendezvous: a p2p group completes when all of its transfers did.
  GroupCompletion,
  /// FSDP: a compute of a sharded stage runs between an UNSHARD and the
  /// next RESHARD of the stage.
  Parameters,
  /// REDUCE_GRAD or a collective declared after_backward waits for every
  /// backward and weight gradient of its stage.
  GradientReduction,
  /// On an FSDP stage, REDUCE_GRAD and a later sum over another group (the
  /// replica sum), which then moves the reduced shard.
  ShardedReduction,
  /// A collective declared before (after) the forwards or backwards of a
  /// stage and the compute it serves.
  DeclaredCollective,
  /// The optimizer step waits for every other action of its rank.
  OptimizerStep,
  /// An aux-free head's bias update waits for every backward and weight
  /// gradient of its stage.
  BiasUpdate,
  /// A lazy communicator is created at its first use on each member, and
  /// creation completes only once every member reached it.
  CommunicatorCreation,
  /// A data receive allocates its buffer from the shape its shape exchange
  /// brought (Megatron-LM's variable_seq_lengths).
  ShapeExchange,
};

/// Why an edge waits, in words: "it needs that action's output".
const char *waitReasonWords(WaitReason reason);

struct WaitEdge {
  /// Classes (dense ids after build()).
  uint32_t from = 0;
  uint32_t to = 0;
  ActionRef fromAction;
  ActionRef toAction;
  WaitReason reason = WaitReason::ProgramOrder;
};

/// A graph small enough for Z3: the wait graph with chains contracted.
struct ShrunkGraph {
  uint32_t numNodes = 0;
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  /// A time per node satisfying every edge (a topological position), when
  /// the graph is acyclic; empty otherwise.
  std::vector<int64_t> witness;
};

class WaitGraph {
public:
  WaitGraph(const ScheduleIndex &index, const VerifyOptions &options);

  /// Builds classes and edges.
  void build();

  /// Orders the classes topologically. Returns false if there is a cycle.
  bool sort();

  /// A cycle of edge indices, in order, after sort() returned false.
  std::vector<size_t> findCycle() const;

  /// The graph with chains contracted, plus a witness when it is acyclic.
  ShrunkGraph shrink() const;

  uint32_t numClasses() const { return classCount; }
  const std::vector<WaitEdge> &getEdges() const { return edges; }
  /// The waits on an earlier action of the same rank that program order
  /// implies, left out of the graph; kept (with no class ids) only for a
  /// schedule with streams, whose program order is no execution order.
  const std::vector<WaitEdge> &getImpliedEdges() const { return implied; }

private:
  uint32_t id(ActionRef ref) const { return offsets[ref.rank] + ref.index; }
  uint32_t find(uint32_t x);
  void merge(ActionRef a, ActionRef b);
  /// A node that stands for no action (a transfer pair's or a p2p group's
  /// completion under rendezvous).
  uint32_t addNode();
  void addEdge(ActionRef from, ActionRef to, WaitReason reason);
  /// An edge between nodes; the refs name the actions it is reported at.
  void addNodeEdge(uint32_t from, ActionRef fromAction, uint32_t to,
                   ActionRef toAction, WaitReason reason);
  /// Under rendezvous: the completion node of the p2p group that ends at
  /// `last`, and the completion nodes of transfer pairs.
  void linkRendezvous();
  /// True if `next` runs together with the `previous` action of its rank.
  bool sameBundle(const Action &previous, const Action &next) const;
  void mergeTogether();
  void addProgramOrder();
  void addDataEdges();
  /// Edges that bring the output of `producer` to `consumer`, through the
  /// transfer pair when they sit on different ranks of a lowered schedule.
  void addInput(ActionRef producer, ActionRef consumer, bool gradient,
                int32_t consumerStage, int32_t mb);
  void addAuxLossEdges();
  /// A node per lazy communicator used in the step: each member's action
  /// before its first use of it comes before the node, the first use after.
  void addCommunicatorCreation();

  const ScheduleIndex &index;
  const VerifyOptions &options;
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> parent;
  /// Under rendezvous, per p2p group (by the id of its last member): the
  /// node that completes when all of its transfers completed.
  llvm::DenseMap<uint32_t, uint32_t> groupDone;
  std::vector<WaitEdge> edges;
  std::vector<WaitEdge> implied;
  uint32_t classCount = 0;
  /// Topological position of each class, when sorted.
  std::vector<int64_t> order;
  std::vector<uint32_t> remainingInDegree;
};

} // namespace sched

#endif // LIB_VERIFY_WAITGRAPH_H
