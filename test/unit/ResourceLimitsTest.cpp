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
  EXPECT_FALSE(static_cast<bool>(
      checkMemoryBudget(MemoryPath::Lower, 1000, 1000 * each, "x", "y")));
  llvm::Error over =
      checkMemoryBudget(MemoryPath::Lower, 1001, 1000 * each, "lowering",
                        "the pass option memory-budget=SIZE");
  ASSERT_TRUE(static_cast<bool>(over));
  const std::string message = llvm::toString(std::move(over));
  EXPECT_NE(message.find("lowering needs about"), std::string::npos);
  EXPECT_NE(
      message.find("(1001 actions at " + std::to_string(each) + " bytes each)"),
      std::string::npos);
  EXPECT_NE(message.find("memory-budget=SIZE"), std::string::npos);
  // Products past int64 saturate rather than wrap into a small estimate.
  llvm::Error huge = checkActionBudget(INT64_MAX, INT64_MAX, "import", "z");
  ASSERT_TRUE(static_cast<bool>(huge));
  EXPECT_NE(llvm::toString(std::move(huge)).find("more than 8 EiB"),
            std::string::npos);
}

TEST(ResourceLimits, ActionCountsBoundTheGenerators) {
  for (Strategy strategy :
       {Strategy::GPipe, Strategy::OneFOneB, Strategy::Interleaved1F1B,
        Strategy::LoopedBFS, Strategy::ZBH1, Strategy::ZBH2,
        Strategy::InterleavedZB, Strategy::ZBV, Strategy::VHalf, Strategy::VMin,
        Strategy::DualPipeV, Strategy::DualPipe, Strategy::NoPipeline,
        Strategy::Combined1F1B, Strategy::InterleavedCombined1F1B})
    for (int32_t pp : {1, 2, 4})
      for (int32_t vpp : {1, 2, 3})
        for (int32_t m : {1, 3, 8, 16}) {
          PipelineShape shape;
          shape.pp = pp;
          shape.vpp = vpp;
          shape.microbatches = m;
          llvm::Expected<Schedule> schedule = generateSchedule(strategy, shape);
          if (!schedule) {
            llvm::consumeError(schedule.takeError());
            continue;
          }
          const int64_t count = computeActionCount(strategy, shape);
          const auto actual = static_cast<int64_t>(schedule->numActions());
          EXPECT_GE(count, actual) << strategyName(strategy).str();
          // Exact for all but DualPipe's and DualPipeV's mix of full and
          // split backwards.
          if (strategy != Strategy::DualPipe &&
              strategy != Strategy::DualPipeV) {
            EXPECT_EQ(count, actual) << strategyName(strategy).str();
          }
        }
}

} // namespace
