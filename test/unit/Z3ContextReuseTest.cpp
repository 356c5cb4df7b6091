//===- Z3ContextReuseTest.cpp - one Z3 context per thread, reused ---------===//
//
// solveWithZ3 and encodeSmtlib reuse one Z3 context per thread rather than
// making one per solve. Nothing of a solve may reach the next: each answer
// is the one a fresh context gives, after a satisfiable query, an
// unsatisfiable one, a printed encoding, a solve the deadline interrupted,
// and on two threads at once.
//
//===----------------------------------------------------------------------===//

#include "lib/Verify/Z3/Z3Prover.h"
#include "test/unit/Z3QueryTestSupport.h"

#include "gtest/gtest.h"

#include <thread>

using namespace sched;
using namespace sched::test;

namespace {

TEST(Z3ContextReuse, AnswersDoNotCarryOver) {
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(solveWithZ3(cycle(50), 0).answer, Z3Answer::Unsat);
    EXPECT_EQ(solveWithZ3(chain(50), 0).answer, Z3Answer::Sat);
    EXPECT_EQ(solveWithZ3(chainWithWitness(50), 0).answer, Z3Answer::Sat);
    Z3Query broken = chainWithWitness(50);
    std::swap(broken.witness[0], broken.witness[1]);
    EXPECT_EQ(solveWithZ3(broken, 0).answer, Z3Answer::Unsat);
    std::string error;
    const std::string text = encodeSmtlib(cycle(4), error);
    EXPECT_TRUE(error.empty()) << error;
    EXPECT_NE(text.find("(check-sat)"), std::string::npos);
    // The next solve's constraints are its own, not the printed ones too.
    EXPECT_EQ(solveWithZ3(chain(4), 0).answer, Z3Answer::Sat);
  }
}

TEST(Z3ContextReuse, AnInterruptedContextIsNotReused) {
  // A search over 20,000 nodes takes far longer than 10 microseconds: the
  // deadline interrupts it.
  const Z3Outcome interrupted = solveWithZ3(chain(20'000), 1e-5);
  ASSERT_EQ(interrupted.answer, Z3Answer::Unknown);
  EXPECT_EQ(interrupted.reason, "timeout");
  // What follows on this thread decides, as on a fresh context.
  EXPECT_EQ(solveWithZ3(chain(50), 0).answer, Z3Answer::Sat);
  EXPECT_EQ(solveWithZ3(cycle(50), 0).answer, Z3Answer::Unsat);
  EXPECT_EQ(solveWithZ3(chainWithWitness(50), 0).answer, Z3Answer::Sat);
}

TEST(Z3ContextReuse, ThreadsSolveApart) {
  Z3Answer other[20];
  std::thread worker([&] {
    for (int k = 0; k < 20; ++k)
      other[k] = solveWithZ3(k % 2 ? cycle(200) : chain(200), 0).answer;
  });
  for (int k = 0; k < 20; ++k)
    EXPECT_EQ(solveWithZ3(k % 2 ? chain(200) : cycle(200), 0).answer,
              k % 2 ? Z3Answer::Sat : Z3Answer::Unsat);
  worker.join();
  for (int k = 0; k < 20; ++k)
    EXPECT_EQ(other[k], k % 2 ? Z3Answer::Unsat : Z3Answer::Sat);
}

} // namespace
