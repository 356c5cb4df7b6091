//===- StepRules.h - the rest of the training step --------------*- C++ -*-===//
//
// Internal to lib/Verify. The rules of what a training step does besides
// the pipeline's compute and transfers (docs/verifier.md, section 5): FSDP
// UNSHARD/RESHARD around every compute of a sharded stage, gradient
// reduction after the stage's last gradient, declared collectives at the
// computes they serve, one optimizer step at the end of each rank. Counting
// and placement are checked here; every order becomes a wait-graph edge,
// so that a broken order is a cycle the graph path and Z3 both see.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_VERIFY_STEPRULES_H
#define LIB_VERIFY_STEPRULES_H

#include "lib/Verify/WaitGraph.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <map>

namespace sched {

/// The actions of a schedule's training step, sorted by rule.
class StepRules {
public:
  /// Indexes `index`'s schedule, which passed ScheduleIndex::check.
  /// `wholeStep` verifies it as a whole training step whatever it holds
  /// (VerifyOptions::wholeStep).
  explicit StepRules(const ScheduleIndex &index, bool wholeStep = false);

  /// Whether the engine takes collective `a` for a gradient reduction of
  /// its stage: an all_reduce or reduce_scatter that a declaration made
  /// after_backward could explain (kind, group, stage; the engine does not
  /// look at bytes). Every such action must come after the stage's last
  /// gradient, whichever declaration it is matched with.
  static bool reducesGradients(const Schedule &schedule, const Action &a);

  /// Counting and placement: indices in range; UNSHARD, RESHARD,
  /// REDUCE_GRAD and declared collectives on the rank of their stage; no
  /// UNSHARD while unsharded, no RESHARD while sharded; one REDUCE_GRAD
  /// per stage; declared collectives as often as declared; one optimizer
  /// step per rank. Returns false when it reported a violation.
  bool check(ViolationSink &sink) const;

  /// The collectives no declaration explains whose kind and group do not
  /// say what they do: reported as unchecked (warnings), not violations.
  std::vector<Violation> unchecked() const;

  /// The stages whose shared declarations matching left without an on-time
  /// reading where the exact search was not run (past kMaxExactReading
  /// actions, or in a fragment past kMaxSubsetSearch declarations), each
  /// with why: a reading may exist, so a violation they cause is no proof.
  const std::vector<std::string> &undecidedReadings() const {
    return undecided;
  }

  /// Calls `edge(from, to, reason)` for each "from before to" the rules
  /// impose, between actions of one rank.
  void addOrders(
      llvm::function_ref<void(ActionRef, ActionRef, WaitReason)> edge) const;

private:
  /// Whether collective `a` names one of the schedule's declarations.
  bool names(const Action &a) const;
  /// The declaration `a`, issued at `at`, serves, or -1.
  int32_t declarationOf(const Action &a, ActionRef at);
  /// Matching reads each action as the due-soonest declaration it can be
  /// on time; with actions that name their declaration among them, or in a
  /// pipeline fragment (which issues some declarations only), that choice
  /// can miss a reading that exists. Where it left a stage's shared
  /// declarations without an on-time reading, this looks for one exactly
  /// and takes it.
  void rereadShared();
  /// The most actions of one stage exactReading searches (its augmenting
  /// paths recurse once per action).
  static constexpr size_t kMaxExactReading = 8192;
  /// The most declarations sharing actions whose subsets a fragment's
  /// search tries (2^n sets).
  static constexpr size_t kMaxSubsetSearch = 12;
  /// rereadShared for one class of declarations that share actions:
  /// `members` are the positions of its actions in `stageActions` (the
  /// stage's, with their `stageCandidates`).
  void rereadClass(int32_t stage, const std::vector<ActionRef> &stageActions,
                   const std::vector<std::vector<int32_t>> &stageCandidates,
                   const std::vector<size_t> &members);
  /// The instances k of declaration `d` that action `at` (of `stage`, on
  /// its rank) is on time for: [first, second).
  std::pair<size_t, size_t> onTimeInstances(size_t d, int32_t stage,
                                            ActionRef at);
  /// A reading of `actions` (of `stage`, on its rank, in program order,
  /// each with the declarations it may be read as) in which the
  /// declarations of `chosen` have all their instances, each on time: the
  /// declaration of each action, or an empty vector when there is none (or
  /// the stage has more than kMaxExactReading such actions).
  std::vector<int32_t>
  exactReading(int32_t stage, const std::vector<ActionRef> &actions,
               const std::vector<std::vector<int32_t>> &candidates,
               const std::vector<int32_t> &chosen);
  /// servedComputes, computed once per stage and timing.
  const std::vector<ActionRef> &servedComputesCached(int32_t stage,
                                                     CollectiveTiming when);
  /// The stage's last gradient (B or W) in program order.
  ActionRef lastGradient(int32_t stage) const;
  /// lastGradient, computed once per stage: it walks every microbatch,
  /// and each shared after_backward candidate asks for it.
  ActionRef lastGradientCached(int32_t stage);
  /// How many instances of declaration `d` a stage issues in a complete
  /// step.
  size_t expectedInstances(const CollectiveDeclaration &d) const;
  /// The computes of `stage` a declaration of timing `when` is ordered
  /// with, in program order (forwards or backward starts).
  std::vector<ActionRef> servedComputes(int32_t stage,
                                        CollectiveTiming when) const;
  /// The instances of declaration `d` for `stage`.
  const std::vector<ActionRef> &issued(size_t d, int32_t stage) const;
  /// The stages declaration `d` applies to.
  std::vector<int32_t> stagesOf(const CollectiveDeclaration &d) const;
  std::string describe(ActionRef ref) const;
  int64_t rankId(int32_t rank) const;

  bool checkPlacement(ViolationSink &sink) const;
  bool checkSharding(ViolationSink &sink) const;
  bool checkReduceGrad(ViolationSink &sink) const;
  bool checkOptimizerStep(ViolationSink &sink) const;
  bool checkDeclarations(ViolationSink &sink) const;
  /// What the step's structure requires whether or not a declaration names
  /// it: a gradient reduction over the data-parallel replicas of every
  /// stage, and a sum over the pipeline replicas of every stage.
  bool checkStructuralReductions(ViolationSink &sink) const;
  /// With pipeline replicas, an aux-free head's bias update runs on a group
  /// whose member set holds the rank of every copy of its model stage.
  bool checkBiasSpansCopies(ViolationSink &sink) const;
  /// Each stage's gradients are reduced once per group: a second action the
  /// engine takes for a reduction over the same group sums them again.
  bool checkReducedOnce(ViolationSink &sink) const;
  /// Whether a compute of `stage` runs between `unshard` and `reshard`
  /// (actions of one rank).
  bool usedSince(ActionRef unshard, ActionRef reshard, int32_t stage) const;

  /// Reports that `stage` issues `refs` of declaration `decl`, not as many
  /// as it declares.
  Violation *reportDeclared(ViolationSink &sink,
                            const CollectiveDeclaration &decl, int32_t stage,
                            const std::vector<ActionRef> &refs) const;

  /// Reports that the bias update `decl` of an aux-free head is missing or
  /// issued more than once (`refs`).
  Violation *reportBiasUpdate(ViolationSink &sink,
                              const CollectiveDeclaration &decl,
                              const std::vector<ActionRef> &refs) const;

  /// The count of declaration `d`'s instances for `stage` as a rule over
  /// the stage's rank: the actions its declaration, and every declaration
  /// that explains one of the same actions, could take, number the
  /// instances they ask for. A rule whose count holds (the instances are
  /// as many, but no reading issues each on time) stays a fact (Form::None).
  StructuralRule declarationRule(size_t d, int32_t stage) const;
  /// The gradient reductions of `stage` the engine sees on a group
  /// `onGroup` accepts, as patterns (an all_reduce or reduce_scatter an
  /// after_backward declaration explains), with their words appended to
  /// `words`.
  std::vector<ActionPattern>
  reductionPatterns(int32_t stage, llvm::function_ref<bool(int32_t)> onGroup,
                    std::string &words) const;
  /// A pattern in words: "all_reduce (kind 6) on @dp (group 1) of stage 0".
  std::string patternWords(const ActionPattern &pattern) const;

  void addShardingOrders(
      llvm::function_ref<void(ActionRef, ActionRef, WaitReason)> edge) const;
  void addDeclarationOrders(
      llvm::function_ref<void(ActionRef, ActionRef, WaitReason)> edge) const;
  /// What an undeclared collective's kind and group say it does.
  enum class ImpliedRole : uint8_t {
    Unknown,
    GradientReduction,
    ParameterGather
  };
  ImpliedRole impliedRole(ActionRef ref) const;
  /// Whether `ref` is an all-reduce whose member set holds every copy of
  /// its stage in the pipeline replicas.
  bool isReplicaSum(ActionRef ref) const;
  /// The member set of `group` that holds `rank` (empty for none).
  const std::vector<int32_t> &memberSet(int32_t group, int32_t rank) const;
  void addUndeclaredOrders(
      llvm::function_ref<void(ActionRef, ActionRef, WaitReason)> edge) const;

  const ScheduleIndex &index;
  const Schedule &schedule;
  /// UNSHARD, RESHARD, REDUCE_GRAD, optimizer steps and declared
  /// collectives whose stage is out of range.
  std::vector<ActionRef> outOfRange;
  /// Per stage, in program order of each rank: its UNSHARDs and RESHARDs,
  /// and its REDUCE_GRADs.
  std::vector<std::vector<ActionRef>> sharding;
  std::vector<std::vector<ActionRef>> reduceGrads;
  /// Per rank: its optimizer steps.
  std::vector<std::vector<ActionRef>> optimizerSteps;
  /// Per (declaration, stage) that issues any: its instances in program
  /// order (sparse: declarations times stages may be large).
  std::map<std::pair<int32_t, int32_t>, std::vector<ActionRef>> instances;
  /// Per (declaration, stage): the actions on the stage's rank that name
  /// the declaration and that matching has not reached yet. Matching keeps
  /// their instances for them: an unnamed action read as the declaration
  /// in their place would leave one of them over.
  std::map<std::pair<int32_t, int32_t>, size_t> namedAhead;
  /// servedComputesCached's results.
  std::map<std::pair<int32_t, CollectiveTiming>, std::vector<ActionRef>>
      computesOf;
  /// lastGradientCached's results.
  std::map<int32_t, ActionRef> lastGradientOf;
  /// True when the schedule holds an optimizer step, says it is a whole
  /// step, or is verified as one: then every declaration must be issued in
  /// full and the structure's reductions are required.
  bool wholeStep = false;
  /// True when the schedule is a whole step by declaration (not only by
  /// holding an optimizer step): then the optimizer step is required too.
  bool declaredWholeStep = false;
  /// Per stage: its collectives that reduce gradients (reducesGradients).
  std::vector<std::vector<ActionRef>> gradientReductions;
  /// Collectives with a stage that no declaration explains, in program
  /// order of each rank. A reduce_scatter reduces the stage's gradients
  /// (FSDP), an all_gather on @dp gathers its parameters; the rest are
  /// unchecked.
  std::vector<ActionRef> undeclared;
  /// The schedule's collective declarations, then one per aux-free head
  /// with a bias update (an all-reduce after the stage's last gradient).
  std::vector<CollectiveDeclaration> declarations;
  /// Per declaration: the index of the aux head whose bias update it is,
  /// or -1.
  std::vector<int32_t> biasHeadOf;
  /// undecidedReadings().
  std::vector<std::string> undecided;
};

} // namespace sched

#endif // LIB_VERIFY_STEPRULES_H
