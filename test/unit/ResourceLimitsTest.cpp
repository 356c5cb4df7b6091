//===- ResourceLimitsTest.cpp - the working-memory budget -----------------===//
//
// Memory sizes parse and print as docs/limits.md says, the budget check
// refuses exactly past the budget, and the action counts it is fed bound
// what the generators produce.
//
//===----------------------------------------------------------------------===//

#include "lib/Limits/ResourceLimits.h"
#include "lib/Limits/DiagnosticExcerpt.h"
#include "lib/Limits/MemoryBudgetOption.h"
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

// A budget under 1 byte is refused, not compared as a huge unsigned one
// (a negative memory-budget pass option switched the check off).
TEST(ResourceLimits, RefusesBudgetsUnderOneByte) {
  for (int64_t budget : {int64_t(0), int64_t(-1), INT64_MIN}) {
    llvm::Error error = checkMemoryBudget(MemoryPath::Lower, {/*actions=*/1},
                                          budget, "lowering", "memory-budget");
    ASSERT_TRUE(static_cast<bool>(error)) << budget;
    EXPECT_NE(llvm::toString(std::move(error)).find("at least 1 byte"),
              std::string::npos);
    llvm::Error json = checkJsonBudget(1, budget, "plan");
    ASSERT_TRUE(static_cast<bool>(json)) << budget;
    llvm::consumeError(std::move(json));
  }
}

// The pass option reads what the command line reads, suffixes included,
// and refuses the same values.
TEST(ResourceLimits, MemoryBudgetOptionReadsAsTheFlag) {
  auto bytes = [](const MemoryBudgetOption &option) -> int64_t {
    llvm::Expected<int64_t> value = memoryBudgetBytes(option);
    if (!value) {
      llvm::consumeError(value.takeError());
      return -1;
    }
    return *value;
  };
  EXPECT_EQ(bytes(MemoryBudgetOption()), kDefaultMemoryBudget);
  EXPECT_EQ(bytes(MemoryBudgetOption(4096)), 4096);
  EXPECT_EQ(bytes(MemoryBudgetOption::fromText("2G")), kDefaultMemoryBudget);
  EXPECT_EQ(bytes(MemoryBudgetOption::fromText("512MiB")), int64_t(512) << 20);
  for (llvm::StringRef bad : {"-1", "0", "", "abc", "1.5G", "99999999T"})
    EXPECT_EQ(bytes(MemoryBudgetOption::fromText(bad)), -1) << bad.str();
  EXPECT_EQ(bytes(MemoryBudgetOption(-1)), -1);
  llvm::Expected<int64_t> negative =
      memoryBudgetBytes(MemoryBudgetOption::fromText("-1"));
  ASSERT_FALSE(static_cast<bool>(negative));
  EXPECT_EQ(llvm::toString(negative.takeError()),
            "memory-budget: invalid memory size '-1': expected bytes, or a "
            "number with a K, M, G or T suffix (e.g. 512M, 4G), from 1 byte "
            "to 8 EiB");
}

// A value an error quotes stays on one screen line.
TEST(ResourceLimits, ClipsQuotedValues) {
  EXPECT_EQ(clipForMessage("2G"), "2G");
  EXPECT_EQ(clipForMessage("a\nb\tc\x01"), "a\\nb\\tc\\x01");
  const std::string clipped = clipForMessage(std::string(1 << 20, 'x'));
  EXPECT_EQ(clipped.size(), kMaxExcerptColumns);
  EXPECT_EQ(clipped.substr(clipped.size() - 3), "...");
  EXPECT_EQ(clipForMessage(std::string(kMaxExcerptColumns, 'y')).size(),
            kMaxExcerptColumns);
}

} // namespace
