//===- Z3Prover.h - the Z3 encoding of a schedule ---------------*- C++ -*-===//
//
// Internal to lib/Verify. Encodes "there is an execution of the schedule"
// as integer difference constraints: a time per class of actions, t_u < t_v
// for every wait edge, and per rank a memory value at each local maximum,
// m_k = m_{k-1} + step_k, m_k <= limit. Satisfiable iff the schedule runs
// to the end within its memory. Built with exceptions: z3::exception is
// caught here and becomes an unknown answer.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_VERIFY_Z3_Z3PROVER_H
#define LIB_VERIFY_Z3_Z3PROVER_H

#include "lib/Verify/MemoryCheck.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sched {

/// A counting rule over actions: of `actions` (each (kind, stage,
/// microbatch, direction), kinds as ActionKind codes, direction 1 for a
/// gradient transfer, plus 2 for a shape exchange), the number that have `kind`
/// (and `stage`, `microbatch`, `direction` where >= 0) must be `required`, or
/// at least `required` when `atLeast` is set.
struct CountRule {
  /// The rule in words, for the SMT-LIB file's comments.
  std::string description;
  std::vector<std::array<int64_t, 4>> actions;
  int64_t kind = 0, stage = -1, microbatch = -1, direction = -1;
  int64_t required = 0;
  bool atLeast = false;
};

/// A range rule: an action's stage lies in [0, stages) and its microbatch,
/// when it has one (`hasMicrobatch`), in [0, microbatches). With
/// `stagesPerReplica` > 0 (several pipeline replicas), the microbatch also
/// belongs to the stage's replica: stage div stagesPerReplica equals
/// microbatch div microbatchesPerReplica.
struct RangeRule {
  std::string description;
  int64_t stage = 0, microbatch = 0;
  bool hasMicrobatch = false;
  int64_t stages = 0, microbatches = 0;
  int64_t stagesPerReplica = 0, microbatchesPerReplica = 0;
};

/// An action's attributes as a structural rule states them: the encoder
/// declares a constant equal to each it uses (kinds as ActionKind codes,
/// -1 where the action has none).
struct RuleAction {
  int64_t kind = 0, stage = -1, microbatch = -1, peer = -1, group = -1;
  /// Transfers: 1 for a gradient (backward), 0 for an activation.
  int64_t direction = 0;
  /// Transfers: 1 for a shape exchange, 0 for data.
  int64_t payload = 0;
  int64_t bytes = -1;
  /// Collectives: 1 when the stage is a matching key (a gradient
  /// reduction, a bias update, a collective no declaration explains).
  int64_t stageKey = 0;
  /// Collectives: the declaration the plan names, -1 for none.
  int64_t declaration = -1;
};

/// A pairing rule between the programs of two ranks, `left` and `right`
/// (every action of each, in issue order). Message: the sends of left to
/// `rightRank` and the receives of right from `leftRank` are as many, and
/// the k-th of each agree on payload (data or shape), direction, stage (the
/// receive's is the send's + 1 forward, - 1 backward), microbatch and bytes
/// (when both are known). Collective: the collectives of both on `group` are as
/// many, and the k-th of each agree on kind, model stage (stage mod
/// `stagesPerReplica`, when either's stage is a matching key) and bytes
/// (when both are known).
struct PairingRule {
  enum class Form : uint8_t { Message, Collective };
  Form form = Form::Message;
  std::string description;
  std::vector<RuleAction> left, right;
  int64_t leftRank = 0, rightRank = 0, group = -1;
  int64_t stagesPerReplica = 1;
};

/// A placement rule over rank programs. Holds: a compute (F, B, I, W) of
/// the stage of action `subjectAction` of program `subjectProgram` appears
/// in `programs`. OneHolder: the programs in which a compute of `stage`
/// appears number exactly one.
struct PlacementRule {
  enum class Form : uint8_t { Holds, OneHolder };
  Form form = Form::Holds;
  std::string description;
  std::vector<std::vector<RuleAction>> programs;
  size_t subjectProgram = 0, subjectAction = 0;
  int64_t stage = 0;
};

/// A transfer's peer rule over rank programs (`programs[q]` is rank q's,
/// every rank's listed): the send or receive `subjectAction` of program
/// `subjectProgram` carries data to or from the stage on its far side
/// (its stage + 1 for a forward send or a backward receive, - 1
/// otherwise), which lies in the same pipeline replica (the same stage div
/// `stagesPerReplica`), is computed (F, B, I or W) on the rank its peer
/// names, and that rank is not its own.
struct TransferRule {
  std::string description;
  std::vector<std::vector<RuleAction>> programs;
  size_t subjectProgram = 0, subjectAction = 0;
  int64_t stagesPerReplica = 1;
};

/// A selection rule over one rank's program (every action, in issue
/// order): the actions that match any of `patterns` number `required`
/// (Exactly, AtLeast, AtMost), or any of `orCounts`. With a
/// `premiseName`, the rule applies when that constant, equal to
/// `premiseValue`, is above 1.
struct SelectionRule {
  enum class Bound : uint8_t { Exactly, AtLeast, AtMost };
  std::string description;
  std::vector<RuleAction> program;
  std::vector<ActionPattern> patterns;
  Bound bound = Bound::Exactly;
  std::vector<int64_t> orCounts;
  int64_t required = 0;
  std::string premiseName;
  int64_t premiseValue = 0;
};

/// The backward rule of (`stage`, `microbatch`) over `actions` (each
/// (kind, stage, microbatch, direction), every rank's): one B and no I or
/// W, or one I and one W and no B.
struct BackwardRule {
  std::string description;
  std::vector<std::array<int64_t, 4>> actions;
  int64_t stage = 0, microbatch = 0;
};

/// A sharding rule over one rank's program (each action's kind and
/// stage). Alternation: after each action, the UNSHARDs of `stage` so far
/// less its RESHARDs are 0 or 1. Use: every RESHARD of `stage` that closes
/// an UNSHARD follows a compute (F, B, I or W) of the stage since that
/// UNSHARD; a constant `used` per action is 0 after an UNSHARD of the
/// stage, 1 after a compute or a RESHARD of it (and before the first
/// action), else the previous one.
struct ShardingRule {
  enum class Form : uint8_t { Alternation, Use };
  Form form = Form::Alternation;
  std::string description;
  std::vector<RuleAction> program;
  int64_t stage = 0;
};

/// A reading rule over one rank's program (every action, in issue order):
/// each action that one of `declarations` explains is read as one of them
/// (a free constant `reads` per action, the declaration's position in
/// `declarations`), such that each has its instances and each instance is
/// on time: the k-th of a before_forward (before_backward) declaration
/// before the k-th forward (backward start, B or I) of `stage`, the k-th of
/// an after_forward one after the k-th forward, an after_backward one after
/// the stage's last gradient (B or W), a step one anywhere. Constants
/// chained along the program count them: `inst` per declaration, `fw`,
/// `bs` and `grad` for the computes. With `orNone` (a pipeline fragment),
/// each declaration has its instances or none.
struct ReadingRule {
  std::string description;
  std::vector<RuleAction> program;
  std::vector<DeclarationPattern> declarations;
  int64_t stage = 0;
  bool orNone = false;
};

/// One action of a StreamRule's program: its stream, the event it waits
/// for and the one it records (-1 for none), its communicator (-1 for
/// none) and its bundle (0 for none), each numbered densely on its rank,
/// the events by slot (StreamOrder::rule: events live at different times
/// share one).
struct StreamStep {
  int64_t stream = 0, wait = -1, record = -1, communicator = -1, bundle = 0;
};

/// A stream rule over one rank's program (its actions in issue order, up
/// to the last one the rule reads): happens-before under its streams and
/// events as vector clocks, a constant `clk` per action and stream (the
/// last position of that stream that happens before the action: the
/// action's own on its stream, else the larger of its stream's previous
/// action's and the one of the latest record of the event it waits for),
/// carried along the program by constants `cur` (per stream and column)
/// and `ev` (per event and column). The rule: each pair of `ordered`
/// (earlier, later) is ordered (the later action's clock at the earlier
/// one's stream reaches it, or both are in one bundle), and each operation
/// of a communicator is ordered after that communicator's previous one on
/// the rank (chained as constants `op`, `opst` and `opbd`: its position,
/// stream and bundle).
struct StreamRule {
  std::string description;
  std::vector<StreamStep> program;
  int64_t streams = 1, events = 0, communicators = 0;
  /// Links each event's chain (`ev`) only at the actions that record it,
  /// a wait reading the chain of the event it names, and each
  /// communicator's (`op`, `opst`, `opbd`) only at its operations: linear
  /// in the program where the full form is quadratic in the events live
  /// at once, and the same clocks at the schedule's attributes (another
  /// value of an action's `wait`, `record` or `comm` constant reads or
  /// links no chain, where the full form re-routes them).
  bool sparse = false;
  std::vector<std::pair<int64_t, int64_t>> ordered;
};

/// The replica rule: `replicas` is at least 1 and divides `stages` and
/// `microbatches`.
struct DividesRule {
  std::string description;
  int64_t stages = 0, microbatches = 0, replicas = 1;
};

/// A structural violation stated as its outcome: a constant equal to what
/// the schedule has (`observed`) and to what its rule requires.
struct StructuralFact {
  int64_t observed = 1, required = 0;
  /// The violation, and why its rule is not stated over the actions.
  std::string description;
};

struct Z3Query {
  uint32_t numNodes = 0;
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  /// Candidate times (one per node): when given, Z3 checks the candidate
  /// (with the chain values of each MemoryChain) against every constraint
  /// instead of searching.
  std::vector<int64_t> witness;
  std::vector<MemoryChain> chains;
  std::optional<MemoryAmount> limit;
  /// Structural facts: each states that what the schedule has is what a
  /// rule requires (see Violation::observed).
  std::vector<StructuralFact> facts;
  /// Structural rules stated over the schedule's actions (a count, a
  /// range): the encoding declares each action's attributes and the rule.
  std::vector<CountRule> counts;
  std::vector<RangeRule> ranges;
  std::vector<PairingRule> pairings;
  std::vector<PlacementRule> placements;
  std::vector<TransferRule> transfers;
  std::vector<SelectionRule> selections;
  std::vector<BackwardRule> backwards;
  std::vector<DividesRule> divides;
  std::vector<ShardingRule> shardings;
  std::vector<ReadingRule> readings;
  std::vector<StreamRule> streams;
  /// Rules left out of the encoding (past their limits), in words, for the
  /// SMT-LIB file's comments.
  std::vector<std::string> unstated;
};

enum class Z3Answer : uint8_t { Sat, Unsat, Unknown };

struct Z3Outcome {
  Z3Answer answer = Z3Answer::Unknown;
  /// The solver's reason when unknown (timeout, resource limit, error).
  std::string reason;
  double seconds = 0;
  /// Z3's resource units (its `rlimit` count) the solve spent: a measure of
  /// its work that does not depend on the machine or its load.
  uint64_t resources = 0;
  size_t variables = 0;
  size_t constraints = 0;
};

/// Asks Z3 whether `query` is satisfiable, within `timeoutSeconds` on the
/// clock and `resourceLimit` of Z3's resource units (each 0 for none).
/// Running out of either is Unknown, with the reason "timeout" or
/// "resource limit of N units reached". Where the resource limit is the
/// one reached, the answer is the same on every machine and under any
/// load: each solver call gets the units the solve has left, and a solve
/// whose work passes the limit (Z3's simplifier, which takes no limit, is
/// checked after it ran) is Unknown.
Z3Outcome solveWithZ3(const Z3Query &query, double timeoutSeconds,
                      uint64_t resourceLimit = 0);

/// The SMT-LIB 2 text of `query` without any candidate (Z3's own
/// printing), ending in (check-sat); `error` is set if Z3 failed.
std::string encodeSmtlib(const Z3Query &query, std::string &error);

} // namespace sched

#endif // LIB_VERIFY_Z3_Z3PROVER_H
