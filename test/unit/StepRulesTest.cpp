//===- StepRulesTest.cpp - the rest of the training step, proved ---------===//
//
// Every strategy over a small grid, lowered with sched-insert-p2p and
// sched-insert-collectives (with and without FSDP, with declared
// collectives of every timing, with hybrid sharding's two reductions),
// verifies; and each way of breaking the step (docs/verifier.md, section 5)
// is a violation that the graph path and Z3 agree on.
//
//===----------------------------------------------------------------------===//

#include "StrategyTestSupport.h"

#include "lib/ScheduleIR/ScheduleIR.h"
#include "lib/Verify/Verifier.h"
#include "passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

using namespace sched;

namespace {

/// Declarations of every timing on a data-parallel group of single-rank
/// sets (no cross-rank matching involved).
constexpr const char *kDeclarations = R"(
  sched.collective all_gather @dp bytes 64 when before_forward
  sched.collective all_to_all @dp bytes 8 when after_forward stage 0
  sched.collective all_to_all @dp bytes 16 when before_backward
  sched.collective reduce_scatter @dp bytes 64 when after_backward
  sched.collective barrier @dp bytes 0 when step
)";

/// A single-threaded context with the sched dialect loaded.
std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  registerSchedDialect(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  context->disableMultithreading();
  return context;
}

/// The name of every strategy schedc generates.
std::vector<std::string> strategyList() {
  llvm::SmallVector<llvm::StringRef> names;
  const std::string list = strategyNames();
  llvm::SplitString(list, names, ", ");
  return {names.begin(), names.end()};
}

/// Hybrid sharding: two shard groups of two replicas, each stage's
/// gradients reduce-scattered in its shard group and the shard all-reduced
/// across the groups.
constexpr const char *kHybridDeclarations = R"(
  sched.mesh dp_replicate = 2, dp_shard = 2
  sched.collective reduce_scatter @dp_shard bytes 64 when after_backward
  sched.collective all_reduce @dp_replicate bytes 32 when after_backward
)";

/// `compute` written as a sched.schedule with `declarations` (by default
/// the ones above) and a group of single-rank sets for each of `groups`,
/// run through sched-insert-p2p and sched-insert-collectives, read back.
Schedule lowerStep(mlir::MLIRContext &context, const Schedule &compute,
                   bool fsdp, llvm::StringRef declarations = kDeclarations,
                   llvm::ArrayRef<llvm::StringRef> groups = {"dp"}) {
  std::string sets;
  for (const RankProgram &rank : compute.ranks)
    sets += llvm::formatv("{0}[{1}]", sets.empty() ? "" : ", ", rank.id);
  std::string groupOps;
  for (llvm::StringRef group : groups)
    groupOps += llvm::formatv("  sched.group @{0} members [{1}]\n", group,
                              sets);
  const std::string text = llvm::formatv(
      "sched.schedule @step stages {0} microbatches {1} replicas {2} {{\n"
      "{3}{4}}\n",
      compute.numStages, compute.numMicrobatches, compute.replicas, groupOps,
      declarations);
  // The groups name ranks that the schedule gets only below.
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(
          text, mlir::ParserConfig(&context, /*verifyAfterParse=*/false));
  EXPECT_TRUE(module) << text;
  if (!module)
    return {};
  auto op = *module->getOps<ScheduleOp>().begin();
  mlir::OpBuilder builder(&context);
  writeRankPrograms(builder, op, compute);
  mlir::PassManager pm(&context);
  pm.addPass(createInsertP2P());
  InsertCollectivesOptions options;
  options.fsdp = fsdp;
  pm.addPass(createInsertCollectives(options));
  EXPECT_TRUE(mlir::succeeded(pm.run(*module)));
  mlir::FailureOr<Schedule> step =
      readSchedule(*module->getOps<ScheduleOp>().begin());
  EXPECT_TRUE(mlir::succeeded(step));
  return mlir::succeeded(step) ? *step : Schedule();
}

std::string firstProblem(const VerifyResult &result) {
  return result.violations.empty() ? result.unknownReason
                                   : result.violations.front().message;
}

/// The first action of the bundle `i` belongs to, and one past its last.
size_t bundleBegin(const std::vector<Action> &actions, size_t i) {
  while (i > 0 && actions[i].bundle != 0 &&
         actions[i - 1].bundle == actions[i].bundle)
    --i;
  return i;
}
size_t bundleEnd(const std::vector<Action> &actions, size_t i) {
  while (i + 1 < actions.size() && actions[i].bundle != 0 &&
         actions[i + 1].bundle == actions[i].bundle)
    ++i;
  return i + 1;
}

/// Position of the first (or last) action of `actions` that `match` accepts
/// at or after `from`, or -1.
int64_t findFirst(const std::vector<Action> &actions,
                  const std::function<bool(const Action &)> &match,
                  size_t from = 0) {
  for (size_t i = from; i < actions.size(); ++i)
    if (match(actions[i]))
      return static_cast<int64_t>(i);
  return -1;
}
int64_t findLast(const std::vector<Action> &actions,
                 const std::function<bool(const Action &)> &match) {
  for (size_t i = actions.size(); i-- > 0;)
    if (match(actions[i]))
      return static_cast<int64_t>(i);
  return -1;
}

/// Moves the action at `from` so that it lands before position `to` of the
/// program as it was.
void move(std::vector<Action> &actions, size_t from, size_t to) {
  Action moved = actions[from];
  actions.erase(actions.begin() + from);
  actions.insert(actions.begin() + (to > from ? to - 1 : to), moved);
}

/// Moves the first action of `kind` after the next forward of its stage;
/// false when the rank issues none.
bool moveAfterItsForward(std::vector<Action> &actions, ActionKind kind) {
  const int64_t first =
      findFirst(actions, [&](const Action &a) { return a.kind == kind; });
  if (first < 0)
    return false;
  const int32_t stage = actions[first].stage;
  const int64_t forward = findFirst(
      actions,
      [&](const Action &a) {
        return a.kind == ActionKind::Forward && a.stage == stage;
      },
      first);
  move(actions, first, bundleEnd(actions, forward));
  return true;
}

bool isGradient(const Action &a, int32_t stage) {
  return a.stage == stage && (a.kind == ActionKind::Backward ||
                              a.kind == ActionKind::BackwardWeight);
}

/// A way to break a training step; false when the step offers no place.
struct Mutation {
  const char *name;
  bool fsdpOnly;
  std::function<bool(std::vector<Action> &)> apply;
};

std::vector<Mutation> mutations() {
  auto is = [](ActionKind kind) {
    return [kind](const Action &a) { return a.kind == kind; };
  };
  return {
      {"REDUCE_GRAD before the last backward", true,
       [is](std::vector<Action> &actions) {
         const int64_t reduce = findFirst(actions, is(ActionKind::ReduceGrad));
         if (reduce < 0)
           return false;
         const int32_t stage = actions[reduce].stage;
         const int64_t last = findLast(
             actions, [&](const Action &a) { return isGradient(a, stage); });
         move(actions, reduce, bundleBegin(actions, last));
         return true;
       }},
      {"REDUCE_GRAD twice", true,
       [is](std::vector<Action> &actions) {
         const int64_t reduce = findFirst(actions, is(ActionKind::ReduceGrad));
         if (reduce < 0)
           return false;
         actions.insert(actions.begin() + reduce, actions[reduce]);
         return true;
       }},
      {"UNSHARD after a forward", true,
       [](std::vector<Action> &actions) {
         return moveAfterItsForward(actions, ActionKind::Unshard);
       }},
      {"UNSHARD dropped", true,
       [is](std::vector<Action> &actions) {
         const int64_t unshard = findFirst(actions, is(ActionKind::Unshard));
         if (unshard < 0)
           return false;
         actions.erase(actions.begin() + unshard);
         return true;
       }},
      {"OPTIMIZER_STEP twice", false,
       [is](std::vector<Action> &actions) {
         const int64_t step = findFirst(actions, is(ActionKind::OptimizerStep));
         actions.insert(actions.begin() + step, actions[step]);
         return true;
       }},
      {"OPTIMIZER_STEP before the last compute", false,
       [is](std::vector<Action> &actions) {
         const int64_t step = findFirst(actions, is(ActionKind::OptimizerStep));
         const int64_t last = findLast(
             actions, [](const Action &a) { return isCompute(a.kind); });
         move(actions, step, bundleBegin(actions, last));
         return true;
       }},
      {"compute after OPTIMIZER_STEP", false,
       [](std::vector<Action> &actions) {
         const int64_t last = findLast(
             actions, [](const Action &a) { return isCompute(a.kind); });
         const size_t begin = bundleBegin(actions, last),
                      end = bundleEnd(actions, last);
         std::vector<Action> bundle(actions.begin() + begin,
                                    actions.begin() + end);
         actions.erase(actions.begin() + begin, actions.begin() + end);
         actions.insert(actions.end(), bundle.begin(), bundle.end());
         return true;
       }},
      {"before_forward all_gather after its forward", false,
       [](std::vector<Action> &actions) {
         return moveAfterItsForward(actions, ActionKind::AllGather);
       }},
  };
}

TEST(StepRules, GeneratedStepsVerifyAndMutationsAreViolated) {
  std::unique_ptr<mlir::MLIRContext> owned = makeContext();
  mlir::MLIRContext &context = *owned;
  const std::vector<std::string> names = strategyList();
  ASSERT_FALSE(names.empty());
  size_t verified = 0, violated = 0, agreed = 0;
  for (const std::string &name : names) {
    std::optional<Strategy> strategy = parseStrategy(name);
    ASSERT_TRUE(strategy) << name;
    size_t accepted = 0;
    for (int32_t pp : {1, 2, 4})
      for (int32_t vpp : {1, 2})
        for (int32_t m : {pp, 2 * pp}) {
          const PipelineShape shape = test::makeShape(pp, vpp, m);
          llvm::Expected<Schedule> compute = generateSchedule(*strategy, shape);
          if (!compute) {
            llvm::consumeError(compute.takeError());
            continue;
          }
          ++accepted;
          for (bool fsdp : {false, true}) {
            const std::string where =
                test::describe(*strategy, shape) + (fsdp ? " fsdp" : "");
            const Schedule step = lowerStep(context, *compute, fsdp);
            ASSERT_FALSE(step.ranks.empty()) << where;
            VerifyOptions options;
            // Z3 (one call costs tens of milliseconds, mostly its setup)
            // proves each strategy's first shape and judges the mutations
            // of its FSDP step, every one of which applies there.
            options.useZ3 = accepted == 1;
            VerifyResult result = verifySchedule(step, options);
            ASSERT_EQ(result.verdict, Verdict::Verified)
                << where << ": " << firstProblem(result);
            ++verified;
            for (const Mutation &mutation : mutations()) {
              if (mutation.fsdpOnly && !fsdp)
                continue;
              Schedule broken = step;
              if (!mutation.apply(broken.ranks.front().actions))
                continue;
              // The graph path judges every mutation.
              VerifyOptions graphOnly;
              graphOnly.useZ3 = false;
              const VerifyResult graph = verifySchedule(broken, graphOnly);
              EXPECT_EQ(graph.verdict, Verdict::Violated)
                  << where << ", " << mutation.name;
              if (options.useZ3 && fsdp) {
                const VerifyResult proved = verifySchedule(broken, options);
                EXPECT_EQ(proved.verdict, Verdict::Violated)
                    << where << ", " << mutation.name << ": "
                    << proved.unknownReason;
                if (!graph.violations.empty() && !proved.violations.empty()) {
                  EXPECT_EQ(graph.violations.front().kind,
                            proved.violations.front().kind)
                      << where << ", " << mutation.name;
                }
                ++agreed;
              }
              ++violated;
            }
          }
        }
    EXPECT_GT(accepted, 0u) << name << " accepts no shape of the grid";
  }
  std::printf("training steps verified: %zu, mutations violated: %zu (Z3 "
              "agreed on %zu)\n",
              verified, violated, agreed);
}

/// The compute of the first small shape `strategy` accepts, described in
/// `where`.
std::optional<Schedule> firstAccepted(Strategy strategy, std::string &where) {
  for (int32_t pp : {2, 1, 4})
    for (int32_t vpp : {1, 2})
      for (int32_t m : {pp, 2 * pp}) {
        const PipelineShape shape = test::makeShape(pp, vpp, m);
        llvm::Expected<Schedule> generated = generateSchedule(strategy, shape);
        if (!generated) {
          llvm::consumeError(generated.takeError());
          continue;
        }
        where = test::describe(strategy, shape);
        return std::move(*generated);
      }
  return std::nullopt;
}

/// Whether some violation of `result` says `words`.
bool saysSomewhere(const VerifyResult &result, llvm::StringRef words) {
  return llvm::any_of(result.violations, [&](const Violation &v) {
    return llvm::StringRef(v.message).contains(words);
  });
}

TEST(StepRules, HybridShardingNeedsBothAxesAndNoMore) {
  std::unique_ptr<mlir::MLIRContext> owned = makeContext();
  mlir::MLIRContext &context = *owned;
  const std::vector<std::string> names = strategyList();
  size_t checked = 0;
  for (const std::string &name : names) {
    std::optional<Strategy> strategy = parseStrategy(name);
    ASSERT_TRUE(strategy) << name;
    std::string where;
    std::optional<Schedule> compute = firstAccepted(*strategy, where);
    ASSERT_TRUE(compute) << name;
    where += " hsdp";
    const Schedule step =
        lowerStep(context, *compute, /*fsdp=*/false, kHybridDeclarations,
                  {"dp_shard", "dp_replicate"});
    ASSERT_FALSE(step.ranks.empty()) << where;
    ASSERT_EQ(step.dataParallel, 4) << where;
    ASSERT_EQ(step.shardGroupSize, 2) << where;
    VerifyOptions options;
    VerifyResult result = verifySchedule(step, options);
    ASSERT_EQ(result.verdict, Verdict::Verified)
        << where << ": " << firstProblem(result);

    // Each break, judged by the graph path and by Z3 alike.
    auto judge = [&](Schedule broken, llvm::StringRef what,
                     llvm::StringRef words) {
      for (bool z3 : {false, true}) {
        VerifyOptions judged;
        judged.useZ3 = z3;
        const VerifyResult verdict = verifySchedule(broken, judged);
        EXPECT_EQ(verdict.verdict, Verdict::Violated)
            << where << ", " << what.str() << (z3 ? " (Z3)" : "");
        EXPECT_TRUE(saysSomewhere(verdict, words))
            << where << ", " << what.str() << ": " << firstProblem(verdict);
      }
    };
    auto without = [&](ActionKind kind) {
      Schedule broken = step;
      for (RankProgram &rank : broken.ranks)
        llvm::erase_if(rank.actions,
                       [&](const Action &a) { return a.kind == kind; });
      return broken;
    };
    judge(without(ActionKind::AllReduce), "no all_reduce @dp_replicate",
          "reduces its gradients over @dp_shard but not over @dp_replicate "
          "(across the 2 shard groups)");
    judge(without(ActionKind::ReduceScatter), "no reduce_scatter @dp_shard",
          "reduces its gradients over @dp_replicate but not over @dp_shard "
          "(the 2 replicas of each shard group)");
    // REDUCE_GRAD sums over every replica: beside the two reductions (of
    // every stage: once one stage has a REDUCE_GRAD, all need one) it sums
    // again.
    Schedule twice = step;
    for (RankProgram &rank : twice.ranks)
      for (size_t i = rank.actions.size(); i-- > 0;)
        if (rank.actions[i].kind == ActionKind::ReduceScatter) {
          Action reduceGrad;
          reduceGrad.kind = ActionKind::ReduceGrad;
          reduceGrad.stage = rank.actions[i].stage;
          rank.actions.insert(rank.actions.begin() + i, reduceGrad);
        }
    judge(twice, "REDUCE_GRAD beside them",
          "over @dp_shard a second time");
    ++checked;
  }
  std::printf("hybrid-sharding steps checked: %zu\n", checked);
}

} // namespace

namespace {

/// A one-stage, one-rank step: forwards, then backwards, with collectives
/// of one signature (all_to_all @g, 8 bytes) at `slots[k]` = the number of
/// computes that precede the k-th one.
Schedule sharedSignatureStep(int32_t microbatches,
                             const std::vector<CollectiveTiming> &timings,
                             const std::vector<int32_t> &slots) {
  Schedule schedule;
  schedule.numStages = 1;
  schedule.numMicrobatches = microbatches;
  schedule.groups.push_back({"g", {{0}}});
  for (CollectiveTiming when : timings) {
    CollectiveDeclaration decl;
    decl.kind = ActionKind::AllToAll;
    decl.group = 0;
    decl.bytes = 8;
    decl.when = when;
    schedule.collectives.push_back(decl);
  }
  Action collective;
  collective.kind = ActionKind::AllToAll;
  collective.stage = 0;
  collective.group = 0;
  collective.bytes = 8;
  RankProgram rank;
  size_t next = 0;
  for (int32_t c = 0; c <= 2 * microbatches; ++c) {
    while (next < slots.size() && slots[next] == c) {
      rank.actions.push_back(collective);
      ++next;
    }
    if (c < 2 * microbatches)
      rank.actions.push_back(Action::compute(
          c < microbatches ? ActionKind::Forward : ActionKind::Backward, 0,
          c % microbatches));
  }
  rank.actions.push_back(Action{ActionKind::OptimizerStep});
  schedule.ranks.push_back(std::move(rank));
  return schedule;
}

/// Whether the collectives at `slots` can be read as issuing every
/// declaration on time, tried over every assignment.
bool someReadingIsOnTime(int32_t microbatches,
                         const std::vector<CollectiveTiming> &timings,
                         const std::vector<int32_t> &slots) {
  const size_t n = slots.size();
  size_t assignments = 1;
  for (size_t k = 0; k < n; ++k)
    assignments *= timings.size();
  for (size_t code = 0; code < assignments; ++code) {
    std::vector<int32_t> issued(timings.size(), 0);
    bool onTime = true;
    size_t rest = code;
    for (size_t k = 0; k < n && onTime; ++k) {
      const size_t d = rest % timings.size();
      rest /= timings.size();
      const int32_t instance = issued[d]++;
      const int32_t slot = slots[k];
      switch (timings[d]) {
      case CollectiveTiming::BeforeForward:
        onTime = slot <= instance;
        break;
      case CollectiveTiming::AfterForward:
        onTime = slot > instance;
        break;
      case CollectiveTiming::BeforeBackward:
        onTime = slot <= microbatches + instance;
        break;
      case CollectiveTiming::AfterBackward:
        onTime = slot == 2 * microbatches;
        break;
      case CollectiveTiming::Step:
        break;
      }
    }
    for (size_t d = 0; d < timings.size() && onTime; ++d) {
      const bool perCompute = timings[d] != CollectiveTiming::AfterBackward &&
                              timings[d] != CollectiveTiming::Step;
      onTime = issued[d] == (perCompute ? microbatches : 1);
    }
    if (onTime)
      return true;
  }
  return false;
}

} // namespace

// Declarations that share kind, group and bytes: the verifier accepts a
// schedule exactly when some assignment of its actions to the declarations
// is on time (every placement of up to six collectives, two forwards and
// two backwards, over pairs and triples of timings), and Z3 agrees (on
// every 8th).
TEST(StepRules, SharedSignatureVerifiesExactlyWhenSomeReadingIsOnTime) {
  using T = CollectiveTiming;
  const std::vector<std::vector<T>> timingSets = {
      {T::BeforeForward, T::AfterForward},
      {T::AfterForward, T::BeforeForward},
      {T::BeforeForward, T::Step},
      {T::AfterForward, T::AfterBackward},
      {T::AfterBackward, T::Step},
      {T::BeforeBackward, T::AfterForward},
      {T::BeforeForward, T::AfterForward, T::Step},
      {T::Step, T::AfterBackward, T::BeforeBackward},
  };
  const int32_t microbatches = 2;
  size_t verified = 0, violated = 0;
  for (const std::vector<T> &timings : timingSets) {
    size_t expected = 0;
    for (T when : timings)
      expected += when == T::AfterBackward || when == T::Step ? 1 : 2;
    // Every multiset of slots (0..4) for `expected` collectives, and for
    // one fewer and one more.
    for (size_t count = expected - 1; count <= expected + 1; ++count) {
      std::vector<int32_t> slots(count, 0);
      while (true) {
        const bool onTime = someReadingIsOnTime(microbatches, timings, slots);
        // Z3 on every 8th (a context costs milliseconds), the graph path on
        // all.
        VerifyOptions options;
        options.useZ3 = (verified + violated) % 8 == 0;
        VerifyResult result = verifySchedule(
            sharedSignatureStep(microbatches, timings, slots), options);
        std::string where = llvm::join(
            llvm::map_range(slots, [](int32_t s) { return std::to_string(s); }),
            ",");
        EXPECT_EQ(result.verdict,
                  onTime ? Verdict::Verified : Verdict::Violated)
            << "slots " << where << ", " << timings.size()
            << " declarations: " << firstProblem(result);
        (onTime ? verified : violated) += 1;
        // The next nondecreasing sequence of slots.
        size_t k = count;
        while (k > 0 && slots[k - 1] == 2 * microbatches)
          --k;
        if (k == 0)
          break;
        ++slots[k - 1];
        for (size_t j = k; j < count; ++j)
          slots[j] = slots[k - 1];
      }
    }
  }
  // Both verdicts occur, so the comparison says something.
  std::cout << verified << " verified, " << violated << " violated\n";
  EXPECT_GT(verified, 20u);
  EXPECT_GT(violated, 100u);
}
