//===- ResourceLimitsTest.cpp - the working-memory budget -----------------===//
//
// Memory sizes parse and print as docs/limits.md says, the budget check
// refuses exactly past the budget, and the action counts it is fed bound
// what the generators produce.
//
//===----------------------------------------------------------------------===//

#include "lib/Limits/ResourceLimits.h"
#include "lib/Generate/Strategy.h"

#include "gtest/gtest.h"

using namespace sched;

namespace {

int64_t parsed(llvm::StringRef text) {
  llvm::Expected<int64_t> size = parseMemorySize(text);
  if (!size) {
    llvm::consumeError(size.takeError());
    return -1;
  }
  return *size;
}

TEST(ResourceLimits, ParsesSizes) {
  EXPECT_EQ(parsed("1073741824"), int64_t(1) << 30);
  EXPECT_EQ(parsed("512M"), int64_t(512) << 20);
  EXPECT_EQ(parsed("2G"), kDefaultMemoryBudget);
  EXPECT_EQ(parsed(kDefaultMemoryBudgetText), kDefaultMemoryBudget);
  EXPECT_EQ(parsed("2GiB"), kDefaultMemoryBudget);
  EXPECT_EQ(parsed("3gb"), int64_t(3) << 30);
  EXPECT_EQ(parsed("1k"), 1024);
  EXPECT_EQ(parsed("4T"), int64_t(4) << 40);
  for (llvm::StringRef bad :
       {"", "0", "-1", "1.5G", "G", "2X", "2GiBs", "8388608T"})
    EXPECT_EQ(parsed(bad), -1) << bad.str();
}

TEST(ResourceLimits, FormatsSizes) {
  EXPECT_EQ(formatMemorySize(512), "512 bytes");
  EXPECT_EQ(formatMemorySize(1024), "1 KiB");
  EXPECT_EQ(formatMemorySize(1536), "1.5 KiB");
  EXPECT_EQ(formatMemorySize(kDefaultMemoryBudget), "2 GiB");
  EXPECT_EQ(formatMemorySize(int64_t(5) << 40), "5 TiB");
}

TEST(ResourceLimits, RefusesPastTheBudget) {
  const int64_t each = bytesPerAction(MemoryPath::Lower);
  EXPECT_FALSE(static_cast<bool>(checkMemoryBudget(
      MemoryPath::Lower, {/*actions=*/1000}, 1000 * each, "x", "y")));
  llvm::Error over =
      checkMemoryBudget(MemoryPath::Lower, {/*actions=*/1001}, 1000 * each,
                        "lowering", "the pass option memory-budget=SIZE");
  ASSERT_TRUE(static_cast<bool>(over));
  const std::string message = llvm::toString(std::move(over));
  EXPECT_NE(message.find("lowering needs about"), std::string::npos);
  EXPECT_NE(
      message.find("(1001 actions at " + std::to_string(each) + " bytes each)"),
      std::string::npos);
  EXPECT_NE(message.find("memory-budget=SIZE"), std::string::npos);
  // Products past int64 saturate rather than wrap into a small estimate.
  llvm::Error huge = checkMemoryBudget(MemoryPath::Import, {INT64_MAX},
                                       INT64_MAX, "import", "z");
  ASSERT_TRUE(static_cast<bool>(huge));
  EXPECT_NE(llvm::toString(std::move(huge)).find("more than 8 EiB"),
            std::string::npos);
}

TEST(ResourceLimits, ActionCountsAreExact) {
  // The budgets multiply these counts: an overcount refuses what fits (it
  // put --emit text at 1.65 times DualPipeV's use), an undercount admits
  // what does not.
  for (Strategy strategy : allStrategies())
    for (int32_t pp : {1, 2, 4, 6, 8})
      for (int32_t vpp : {1, 2, 3})
        for (int32_t m : {1, 3, 8, 16, 17, 40, 64}) {
          PipelineShape shape;
          shape.pp = pp;
          shape.vpp = vpp;
          shape.microbatches = m;
          llvm::Expected<Schedule> schedule = generateSchedule(strategy, shape);
          if (!schedule) {
            llvm::consumeError(schedule.takeError());
            continue;
          }
          EXPECT_EQ(computeActionCount(strategy, shape),
                    static_cast<int64_t>(schedule->numActions()))
              << strategyName(strategy).str() << " pp " << pp << " vpp " << vpp
              << " microbatches " << m;
          // Two actions share each overlap's bundle.
          int64_t overlapped = 0;
          for (const RankProgram &program : schedule->ranks)
            for (const Action &action : program.actions)
              overlapped += action.bundle != 0 && isCompute(action.kind);
          EXPECT_EQ(2 * computeOverlapCount(strategy, shape), overlapped)
              << strategyName(strategy).str() << " pp " << pp << " vpp " << vpp
              << " microbatches " << m;
        }
}

} // namespace
