//===- InsertTransfersTest.cpp - send/recv insertion over strategies ------===//
//
// Every strategy over P in {2, 3, 4, 8}, each vpp from 1 to 3 it takes,
// M = 1 .. 2P, under unit, uneven, per-stage random and zero-weight costs:
// insertTransfers gives a schedule the verifier proves deadlock-free under
// rendezvous semantics, with exactly one send and one receive per
// cross-rank input, that runs in the simulator as fast as the compute order
// it came from (free communication, eager sends).
//
//===----------------------------------------------------------------------===//

#include "lib/Lower/InsertTransfers.h"
#include "lib/Generate/Strategy.h"
#include "lib/Simulate/Simulate.h"
#include "lib/Verify/Verifier.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include "gtest/gtest.h"

#include <random>

using namespace sched;

namespace {

enum class CostProfile { Unit, Uneven, Random, ZeroWeight };

std::vector<StageCost> makeCosts(CostProfile profile, int32_t stages,
                                 std::mt19937 &random) {
  std::vector<StageCost> costs;
  if (profile == CostProfile::Unit)
    return costs;
  std::uniform_real_distribution<double> time(0.25, 3.0);
  for (int32_t s = 0; s < stages; ++s) {
    StageCost cost;
    if (profile == CostProfile::Uneven) {
      cost.forward = 1;
      cost.backwardInput = 2;
      cost.backwardWeight = 0.5;
    } else if (profile == CostProfile::Random) {
      cost.forward = time(random);
      cost.backwardInput = time(random);
      cost.backwardWeight = time(random);
    } else {
      cost.backwardWeight = 0;
    }
    costs.push_back(cost);
  }
  return costs;
}

/// How many inputs cross ranks in a compute-only schedule: per
/// (stage, microbatch) one activation and one gradient per stage boundary
/// whose two stages sit on different ranks.
size_t crossRankInputs(const Schedule &compute) {
  std::vector<int64_t> stageRank(compute.numStages, -1);
  for (const RankProgram &rank : compute.ranks)
    for (const Action &action : rank.actions)
      stageRank[action.stage] = rank.id;
  // Boundaries inside a replica's chain of stages, each crossed by that
  // replica's microbatches.
  size_t boundaries = 0;
  for (int32_t s = 0; s + 1 < compute.numStages; ++s)
    boundaries += !compute.isLastStage(s) && stageRank[s] != stageRank[s + 1];
  return 2 * boundaries * compute.microbatchesPerReplica();
}

void checkOne(Strategy strategy, const PipelineShape &shape, bool group,
              CostProfile profile) {
  const std::string where =
      llvm::formatv("{0} pp={1} vpp={2} m={3} group={4} costs={5}",
                    strategyName(strategy), shape.pp, shape.vpp,
                    shape.microbatches, group, static_cast<int>(profile));
  llvm::Expected<Schedule> compute = generateSchedule(strategy, shape);
  ASSERT_TRUE(static_cast<bool>(compute)) << where;
  InsertTransfersOptions options;
  options.group = group;
  llvm::Expected<Schedule> lowered = insertTransfers(*compute, options);
  ASSERT_TRUE(static_cast<bool>(lowered))
      << where << ": " << llvm::toString(lowered.takeError());

  size_t sends = 0, recvs = 0, grouped = 0;
  for (const RankProgram &rank : lowered->ranks)
    for (const Action &action : rank.actions) {
      sends += action.kind == ActionKind::Send;
      recvs += action.kind == ActionKind::Recv;
      // Overlaps (DualPipeV) are compute bundles, not p2p groups.
      grouped += action.bundle != 0 && !isCompute(action.kind);
    }
  EXPECT_EQ(sends, crossRankInputs(*compute)) << where;
  EXPECT_EQ(recvs, sends) << where;
  if (!group) {
    EXPECT_EQ(grouped, 0u) << where;
  }

  VerifyOptions verify;
  verify.useZ3 = false;
  for (P2PSemantics p2p : {P2PSemantics::Rendezvous, P2PSemantics::Eager}) {
    verify.p2p = p2p;
    VerifyResult result = verifySchedule(*lowered, verify);
    EXPECT_EQ(result.verdict, Verdict::Verified)
        << where << " p2p=" << static_cast<int>(p2p) << ": "
        << (result.violations.empty() ? result.unknownReason
                                      : result.violations.front().message);
  }

  if (profile == CostProfile::ZeroWeight)
    return;
  llvm::Expected<Timeline> before = simulate(*compute, {});
  llvm::Expected<Timeline> after = simulate(*lowered, {});
  ASSERT_TRUE(before && after) << where;
  EXPECT_DOUBLE_EQ(after->makespan, before->makespan) << where;
}

TEST(InsertTransfers, EveryStrategyOverTheGrid) {
  std::mt19937 random(20261122);
  llvm::SmallVector<llvm::StringRef> names;
  const std::string all = strategyNames();
  llvm::SplitString(all, names, ", ");
  ASSERT_FALSE(names.empty());
  size_t checked = 0;
  for (llvm::StringRef name : names) {
    std::optional<Strategy> strategy = parseStrategy(name);
    ASSERT_TRUE(strategy.has_value()) << name.str();
    for (int32_t pp : {2, 3, 4, 8})
      for (int32_t vpp : {1, 2, 3})
        for (int32_t m = 1; m <= 2 * pp; ++m) {
          PipelineShape shape;
          shape.pp = pp;
          shape.vpp = vpp;
          shape.microbatches = m;
          if (!generateSchedule(*strategy, shape)) {
            // The strategy does not take this vpp; the error is expected.
            continue;
          }
          for (CostProfile profile :
               {CostProfile::Unit, CostProfile::Uneven, CostProfile::Random,
                CostProfile::ZeroWeight}) {
            shape.stageCosts = makeCosts(profile, shape.numStages(), random);
            checkOne(*strategy, shape, /*group=*/true, profile);
            ++checked;
          }
          shape.stageCosts.clear();
          checkOne(*strategy, shape, /*group=*/false, CostProfile::Unit);
        }
  }
  EXPECT_GT(checked, 1000u);
}

/// A compute-only schedule of two ranks, one stage each.
Schedule twoRanks() {
  PipelineShape shape;
  shape.pp = 2;
  shape.microbatches = 2;
  return cantFail(generateSchedule(Strategy::OneFOneB, shape));
}

void expectError(const Schedule &schedule, llvm::StringRef message,
                 int32_t rank, int32_t index) {
  llvm::Expected<Schedule> result = insertTransfers(schedule);
  ASSERT_FALSE(static_cast<bool>(result));
  llvm::handleAllErrors(
      result.takeError(), [&](const InsertTransfersError &error) {
        EXPECT_TRUE(llvm::StringRef(error.message).contains(message))
            << error.message;
        EXPECT_EQ(error.rank, rank);
        EXPECT_EQ(error.index, index);
      });
}

TEST(InsertTransfers, RefusesTransfersAlreadyThere) {
  Schedule once = cantFail(insertTransfers(twoRanks()));
  expectError(once, "already has transfers", 0, 1);
}

TEST(InsertTransfers, RefusesAStageOnTwoRanks) {
  Schedule schedule = twoRanks();
  // Move the forward and backward of (stage 1, mb 1) to a third rank.
  RankProgram third;
  third.id = 2;
  std::vector<Action> &rank1 = schedule.ranks[1].actions;
  third.actions = {rank1[2], rank1[3]};
  rank1.resize(2);
  schedule.ranks.push_back(third);
  expectError(schedule, "stage 1 runs on rank 1 and rank 2", 2, 0);
}

TEST(InsertTransfers, RefusesAMissingProducer) {
  Schedule schedule = twoRanks();
  // Rank 0 drops F(0, 1), which F(1, 1) on rank 1 needs.
  std::vector<Action> &rank0 = schedule.ranks[0].actions;
  rank0.erase(rank0.begin() + 1);
  expectError(schedule, "needs the activation of stage 0", 1, 2);
}

TEST(InsertTransfers, RefusesAnOrderThatCannotRun) {
  Schedule schedule = twoRanks();
  std::vector<Action> &rank0 = schedule.ranks[0].actions;
  std::swap(rank0[0], rank0[2]);
  expectError(schedule,
              "no order of transfers can make this compute order "
              "run",
              -1, -1);
}

} // namespace
