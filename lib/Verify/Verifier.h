//===- Verifier.h - the schedule verifier -----------------------*- C++ -*-===//
//
// Proves a schedule complete, dependency-correct, free of deadlock and
// within its memory limit (docs/verifier.md states the contract). A fast
// graph path finds violations and a candidate execution; Z3 is the
// decision procedure of record for every verdict it gives.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_VERIFY_VERIFIER_H
#define LIB_VERIFY_VERIFIER_H

#include "lib/Schedule/Schedule.h"
#include "lib/Verify/MemoryLimit.h"

#include <optional>
#include <string>
#include <vector>

namespace sched {

/// When a point-to-point send completes.
enum class P2PSemantics : uint8_t {
  /// A send never blocks; a receive is posted and its consumer waits for
  /// the data (PyTorch's pipelining runtime).
  Eager,
  /// A send completes only together with its matching receive, and a p2p
  /// group only when every member's peer reached its match (NCCL-like).
  Rendezvous,
};

/// How Z3 is asked.
enum class ProofMode : uint8_t {
  /// Z3 checks the full encoding together with the candidate execution the
  /// graph path found (a model is a proof of satisfiability); violations
  /// are proved from their cycle or memory chain.
  Witness,
  /// Z3 solves the full encoding with no help.
  Search,
};

struct VerifyOptions {
  P2PSemantics p2p = P2PSemantics::Rendezvous;
  /// Device memory: bytes, or stage-microbatch activation units when no
  /// stage declares sizes. No limit: memory is measured, not checked.
  std::optional<MemoryLimit> memoryLimit;
  /// Part of an activation the weight gradient keeps after I (units mode).
  double weightGradFraction = 0.5;
  /// Solver budget in seconds; 0 means none. Reaching it is "unknown",
  /// which therefore depends on the machine and its load: a safety limit.
  double timeoutSeconds = 0;
  /// Solver budget in Z3's resource units (its `rlimit` count) for the
  /// whole verification, each query taking what the ones before left; 0
  /// means none. Reaching it is "unknown" on every machine alike.
  uint64_t resourceLimit = 0;
  ProofMode proofMode = ProofMode::Witness;
  /// Skip Z3 (the graph path's verdict only); for differential testing.
  bool useZ3 = true;
  /// When set, VerifyResult::smtlib receives the SMT-LIB 2 text of the
  /// full encoding (without any candidate), whose satisfiability is the
  /// verdict.
  bool emitSmtlib = false;
  /// Stages carrying a global-batch auxiliary loss, besides the heads of
  /// the schedule (Schedule::auxHeads).
  std::vector<int32_t> globalBatchAuxStages;
  /// Actions a reader left out of the schedule because an index of theirs
  /// is out of range (a PyTorch CSV cell past --stages): (stage,
  /// microbatch, -1 for none). Each is a violation, and the encoding states
  /// its range rule.
  std::vector<std::pair<int64_t, int64_t>> outOfRangeActions;
  /// Verify the schedule as one whole training step, as if it said so
  /// (Schedule::wholeStep): what writes a runtime plan asks for this.
  bool wholeStep = false;
};

enum class Verdict : uint8_t { Verified, Violated, Unknown };

enum class ViolationKind : uint8_t {
  /// A (stage, microbatch) lacks an F, B, I or W.
  Missing,
  /// An action appears twice.
  Duplicate,
  /// A stage runs on two ranks, or a transfer is issued by a rank that does
  /// not hold its stage.
  Placement,
  /// An action runs before an action it depends on (on one rank).
  Dependency,
  /// A cross-rank input has no transfer, or a transfer has no partner or
  /// names the wrong peer.
  Transfer,
  /// Ranks wait for each other in a cycle.
  Deadlock,
  /// Members of a group issue different collectives or orders.
  Collective,
  /// Memory over the limit.
  Memory,
};

/// An action of the schedule: rank index and position; index -1 means the
/// rank as a whole, rank -1 the schedule as a whole.
struct ActionRef {
  int32_t rank = -1;
  int32_t index = -1;
};

/// An action a Selection rule counts: of `kind`, and of `stage` and on
/// `group` where >= 0; with `ofBytes`, of `bytes` or of unknown bytes (an
/// instance of a declaration of `bytes`); with `holds` non-empty, every
/// rank of `holds` is among `members`, the member set of `group` that holds
/// the counting rank (a replica sum joins the ranks of every copy); with
/// `declarations` non-empty, the action names none of the schedule's
/// declarations or one of these (a pattern that stands for declarations).
struct ActionPattern {
  ActionKind kind = ActionKind::AllReduce;
  int32_t stage = -1;
  int32_t group = -1;
  bool ofBytes = false;
  int64_t bytes = -1;
  std::vector<int32_t> members;
  std::vector<int32_t> holds;
  std::vector<int32_t> declarations;
};

/// A declaration as a Reading rule reads actions: an instance is an action
/// `pattern` matches, of timing `when`, `instances` of them per step.
struct DeclarationPattern {
  ActionPattern pattern;
  CollectiveTiming when = CollectiveTiming::Step;
  int64_t instances = 0;
};

/// The rule a structural violation breaks, stated over the schedule's
/// actions so that the SMT-LIB encoding carries the rule, not only its
/// outcome. Count: among the actions of `rank` (every rank when -1), those
/// of `kind` (and `stage`, `microbatch` when >= 0) number `required`.
/// Range: the stage and microbatch of the violation's action lie in range.
/// Message: the sends of `rank` to `otherRank` and the receives of
/// `otherRank` from `rank` pair up in issue order and agree. Collective:
/// the collectives of `rank` and `otherRank` on `group` agree in order.
/// Placement: the rank that issues the violation's action (or, with
/// `group` >= 0, the member set of that group holding it) computes the
/// action's stage. OneHolder: the computes of `stage` run on one rank.
/// Replica: the violation's action's microbatch runs through its stage's
/// pipeline replica. Peer: the violation's transfer names as its peer
/// another rank, which computes the stage on its far side (in the same
/// replica). A count of transfers also matches `direction` (1 gradient, 0
/// activation) when >= 0, and with `atLeast` requires at least `required`.
/// Selection: among the actions of `rank`, those matching any of
/// `patterns` number `required` (at least with `atLeast`, at most with
/// `atMost`, or any of `orCounts`), where `premiseName`'s value
/// `premiseValue` is above 1 when a premise is named (data parallelism,
/// pipeline replicas). Backward: (`stage`, `microbatch`) has one B and no
/// I or W, or one I and one W and no B, among every rank's actions.
/// Divides: the schedule's replicas (at least 1) divide its stages and
/// microbatches. Alternation: along the program of `rank`, the UNSHARDs of
/// `stage` so far less its RESHARDs are 0 or 1 after every action (no
/// UNSHARD while unsharded, no RESHARD while sharded). UnshardUse: along
/// the program of `rank`, every RESHARD of `stage` that closes an UNSHARD
/// follows a compute of the stage since it. Reading: the actions of `rank`
/// that `readings` explain (for `stage`) can each be read as one of them so
/// that each has its instances (with `orNone`, its instances or none), each
/// on time. Streams: the streams and events of `rank` order every
/// dependency between two of its actions and every two operations of one
/// communicator on it (StreamOrder's rule). Elided: the line
/// that stands for violations past the
/// report's limit, which states nothing (the violations shown state their
/// rules).
struct StructuralRule {
  enum class Form : uint8_t {
    None,
    Count,
    Range,
    Message,
    Collective,
    Placement,
    OneHolder,
    Replica,
    Peer,
    Selection,
    Backward,
    Divides,
    Alternation,
    UnshardUse,
    Reading,
    Streams,
    Elided
  };
  Form form = Form::None;
  int32_t rank = -1;
  int32_t otherRank = -1;
  int32_t group = -1;
  ActionKind kind = ActionKind::Forward;
  int32_t stage = -1;
  int32_t microbatch = -1;
  int64_t required = 0;
  int32_t direction = -1;
  bool atLeast = false;
  bool atMost = false;
  /// Reading: a pipeline fragment's, in which each declaration has its
  /// instances or none.
  bool orNone = false;
  std::vector<int64_t> orCounts;
  std::vector<ActionPattern> patterns;
  /// Reading: the declarations, each with its pattern.
  std::vector<DeclarationPattern> readings;
  std::string premiseName;
  int64_t premiseValue = 0;
  /// What the selection counts, in words (the SMT-LIB file's comment).
  std::string selects;
  /// Form::None: why the violation is stated as its fact, when known.
  std::string why;
  /// Range of an action left out of the schedule (VerifyOptions::
  /// outOfRangeActions): its indices, `microbatch` -1 for none.
  bool leftOut = false;

  static StructuralRule count(int32_t rank, ActionKind kind, int32_t stage,
                              int32_t microbatch, int64_t required) {
    StructuralRule rule;
    rule.form = Form::Count;
    rule.rank = rank;
    rule.kind = kind;
    rule.stage = stage;
    rule.microbatch = microbatch;
    rule.required = required;
    return rule;
  }
  static StructuralRule range() {
    StructuralRule rule;
    rule.form = Form::Range;
    return rule;
  }
  static StructuralRule message(int32_t sender, int32_t receiver) {
    StructuralRule rule;
    rule.form = Form::Message;
    rule.rank = sender;
    rule.otherRank = receiver;
    return rule;
  }
  static StructuralRule collectiveOrder(int32_t group, int32_t member,
                                        int32_t lead) {
    StructuralRule rule;
    rule.form = Form::Collective;
    rule.group = group;
    rule.rank = member;
    rule.otherRank = lead;
    return rule;
  }
  static StructuralRule placement(int32_t memberSetOf = -1) {
    StructuralRule rule;
    rule.form = Form::Placement;
    rule.group = memberSetOf;
    return rule;
  }
  static StructuralRule oneHolder(int32_t stage) {
    StructuralRule rule;
    rule.form = Form::OneHolder;
    rule.stage = stage;
    return rule;
  }
  static StructuralRule replica() {
    StructuralRule rule;
    rule.form = Form::Replica;
    return rule;
  }
  static StructuralRule peer() {
    StructuralRule rule;
    rule.form = Form::Peer;
    return rule;
  }
  /// A count of the transfers of `kind` in `direction` (1 gradient, 0
  /// activation) of `stage` and `microbatch` among the actions of `rank`
  /// (every rank when -1): `required`, or at least that with `atLeast`.
  /// `direction` as transferDirection (lib/Verify/ScheduleIndex.h) has it.
  static StructuralRule transferCount(int32_t rank, ActionKind kind,
                                      int32_t direction, int32_t stage,
                                      int32_t microbatch, int64_t required,
                                      bool atLeast) {
    StructuralRule rule = count(rank, kind, stage, microbatch, required);
    rule.direction = direction;
    rule.atLeast = atLeast;
    return rule;
  }
  /// Among the actions of `rank`, those matching any of `patterns` (in
  /// words, `selects`) number `required`.
  static StructuralRule selection(int32_t rank,
                                  std::vector<ActionPattern> patterns,
                                  std::string selects, int64_t required) {
    StructuralRule rule;
    rule.form = Form::Selection;
    rule.rank = rank;
    rule.patterns = std::move(patterns);
    rule.selects = std::move(selects);
    rule.required = required;
    return rule;
  }
  static StructuralRule backward(int32_t stage, int32_t microbatch) {
    StructuralRule rule;
    rule.form = Form::Backward;
    rule.stage = stage;
    rule.microbatch = microbatch;
    return rule;
  }
  static StructuralRule alternation(int32_t rank, int32_t stage) {
    StructuralRule rule;
    rule.form = Form::Alternation;
    rule.rank = rank;
    rule.stage = stage;
    return rule;
  }
  static StructuralRule unshardUse(int32_t rank, int32_t stage) {
    StructuralRule rule = alternation(rank, stage);
    rule.form = Form::UnshardUse;
    return rule;
  }
  static StructuralRule reading(int32_t rank, int32_t stage,
                                std::vector<DeclarationPattern> readings,
                                std::string selects) {
    StructuralRule rule;
    rule.form = Form::Reading;
    rule.rank = rank;
    rule.stage = stage;
    rule.readings = std::move(readings);
    rule.selects = std::move(selects);
    return rule;
  }
  static StructuralRule divides() {
    StructuralRule rule;
    rule.form = Form::Divides;
    return rule;
  }
  static StructuralRule leftOutRange(int64_t stage, int64_t microbatch) {
    StructuralRule rule = range();
    rule.leftOut = true;
    rule.stage = static_cast<int32_t>(std::min<int64_t>(stage, INT32_MAX));
    rule.microbatch =
        static_cast<int32_t>(std::min<int64_t>(microbatch, INT32_MAX));
    return rule;
  }
};

struct ViolationNote {
  ActionRef at;
  std::string message;
};

struct Violation {
  ViolationKind kind = ViolationKind::Missing;
  ActionRef at;
  std::string message;
  std::vector<ViolationNote> notes;
  /// For a structural violation (found by counting, not by search): the
  /// quantity the schedule has and the one the rule requires (a count, a
  /// microbatch, a size), which the Z3 encoding states as a fact. By
  /// default one occurrence of something the rule forbids.
  int64_t observed = 1;
  int64_t required = 0;
  /// The stage of the aux-loss head the violation is about, or -1 (the IR
  /// front end notes the head's declaration).
  int32_t auxHeadStage = -1;
  /// The rule it breaks, for the SMT-LIB encoding; Form::None states the
  /// fact observed = required instead.
  StructuralRule rule;
};

struct VerifyResult {
  Verdict verdict = Verdict::Unknown;
  std::vector<Violation> violations;
  /// Why the verdict is unknown, when it is.
  std::string unknownReason;
  /// Per rank: the highest memory reached, in bytes or activation units.
  std::vector<double> peakMemory;
  bool memoryInBytes = false;
  /// Wall time of the graph path and of Z3, in seconds.
  double graphSeconds = 0;
  double z3Seconds = 0;
  /// Z3's resource units spent (VerifyOptions::resourceLimit counts them).
  uint64_t z3Resources = 0;
  /// Size of what went to Z3 after shrinking.
  size_t z3Variables = 0;
  size_t z3Constraints = 0;
  /// The SMT-LIB 2 encoding, when VerifyOptions::emitSmtlib is set.
  std::string smtlib;
  /// Actions the verifier could not check (a collective no declaration
  /// explains, whose kind and group do not say what it does): warnings,
  /// which do not change the verdict.
  std::vector<Violation> unchecked;
};

/// Verifies `schedule` under `options`.
VerifyResult verifySchedule(const Schedule &schedule,
                            const VerifyOptions &options);

/// The word for a violation kind, as used in --json output.
const char *violationKindName(ViolationKind kind);

/// The word for a verdict.
const char *verdictName(Verdict verdict);

} // namespace sched

#endif // LIB_VERIFY_VERIFIER_H
