//===- GeneratedSchedulesVerifyTest.cpp - every generated schedule verifies =//
//
// Over the reference grid (P in {2,3,4,8,16}, vpp in {1..4}, M from 1 to
// 4P), every schedule each strategy generates is proved by the verifier,
// compute-only and lowered with transfers (rendezvous semantics). Shapes a
// strategy rejects are skipped; the test insists that each strategy accepts
// some.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/Strategy.h"
#include "lib/Lower/InsertTransfers.h"
#include "lib/Verify/Verifier.h"

#include "llvm/ADT/StringExtras.h"
#include "gtest/gtest.h"

using namespace sched;

namespace {

TEST(GeneratedSchedules, VerifyOverTheGrid) {
  llvm::SmallVector<llvm::StringRef> names;
  const std::string list = strategyNames();
  llvm::SplitString(list, names, ", ");
  ASSERT_FALSE(names.empty());
  size_t proved = 0;
  for (llvm::StringRef name : names) {
    std::optional<Strategy> strategy = parseStrategy(name);
    ASSERT_TRUE(strategy) << name.str();
    size_t accepted = 0;
    for (int32_t pp : {1, 2, 3, 4, 8, 16})
      for (int32_t vpp = 1; vpp <= 4; ++vpp)
        for (int32_t m = 1; m <= 4 * pp; ++m) {
          PipelineShape shape;
          shape.pp = pp;
          shape.vpp = vpp;
          shape.microbatches = m;
          llvm::Expected<Schedule> compute =
              generateSchedule(*strategy, shape);
          if (!compute) {
            llvm::consumeError(compute.takeError());
            continue;
          }
          ++accepted;
          // Z3 proves a sample; the graph path judges every schedule (the
          // differential test holds the two to the same answers).
          VerifyOptions options;
          options.useZ3 = accepted % 7 == 1;
          VerifyResult result = verifySchedule(*compute, options);
          ASSERT_EQ(result.verdict, Verdict::Verified)
              << name.str() << " pp=" << pp << " vpp=" << vpp << " m=" << m
              << ": "
              << (result.violations.empty()
                      ? result.unknownReason
                      : result.violations.front().message);
          llvm::Expected<Schedule> lowered = insertTransfers(*compute);
          ASSERT_TRUE(static_cast<bool>(lowered))
              << name.str() << ": " << llvm::toString(lowered.takeError());
          result = verifySchedule(*lowered, options);
          ASSERT_EQ(result.verdict, Verdict::Verified)
              << name.str() << " lowered, pp=" << pp << " vpp=" << vpp
              << " m=" << m << ": "
              << (result.violations.empty()
                      ? result.unknownReason
                      : result.violations.front().message);
          proved += 2;
        }
    EXPECT_GT(accepted, 0u) << name.str() << " accepts no shape of the grid";
  }
  std::printf("generated schedules verified: %zu\n", proved);
}

} // namespace
