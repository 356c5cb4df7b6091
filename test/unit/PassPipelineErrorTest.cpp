//===- PassPipelineErrorTest.cpp - pipeline errors on one line ------------===//
//
// MLIR's report of a pass pipeline it cannot build, as MLIR 22 writes it
// (the cause, a blank line, a "failed to add" line per element), said on
// one line that names the pass, the unknown option and the options it has.
//
//===----------------------------------------------------------------------===//

#include "lib/Limits/PassPipelineError.h"

#include "gtest/gtest.h"

using namespace sched;

namespace {

/// The options of sched-lower-1f1b, for any name asked.
std::vector<std::string> lowerOptions(llvm::StringRef) {
  return {"aux-conflicts", "memory-budget"};
}

std::vector<std::string> noOptions(llvm::StringRef) { return {}; }

TEST(PassPipelineError, OptionNamesFromTheTextualForm) {
  EXPECT_EQ(passOptionNames("sched-verify{emit-smtlib= memory-limit= "
                            "p2p=rendezvous timeout=0.000000e+00}"),
            (std::vector<std::string>{"emit-smtlib", "memory-limit", "p2p",
                                      "timeout"}));
  EXPECT_EQ(passOptionNames("{cost= strategy=1f1b}"),
            (std::vector<std::string>{"cost", "strategy"}));
  EXPECT_TRUE(passOptionNames("sched-assign-buffers").empty());
  EXPECT_TRUE(passOptionNames("x{}").empty());
}

TEST(PassPipelineError, UnknownOptionOfAPassInAPipeline) {
  const std::string line = passPipelineErrorLine(
      "<Pass-Options-Parser>: no such option bogus\n\n"
      "failed to add `sched-lower-1f1b` with options `bogus=1`\n",
      lowerOptions);
  EXPECT_EQ(line, "sched-lower-1f1b: unknown option 'bogus'; expected one "
                  "of: aux-conflicts, memory-budget");
}

TEST(PassPipelineError, NestedPipelinesNameTheInnermostPass) {
  const std::string line = passPipelineErrorLine(
      "<Pass-Options-Parser>: no such option grup\n\n"
      "failed to add `sched-insert-p2p` with options `grup=1`\n"
      "failed to add `builtin.module` with options `` to inner pipeline\n",
      noOptions);
  EXPECT_EQ(line, "sched-insert-p2p: unknown option 'grup'");
}

TEST(PassPipelineError, APipelineCauseKeepsItsOwnName) {
  const std::string line = passPipelineErrorLine(
      "sched-generate-verify: unknown strategy 'xx'; expected one of: 1f1b\n"
      "failed to add `sched-generate-verify` with options `strategy=xx`\n",
      noOptions);
  EXPECT_EQ(line,
            "sched-generate-verify: unknown strategy 'xx'; expected one of: "
            "1f1b");
}

TEST(PassPipelineError, AFlagNamesNoPass) {
  EXPECT_EQ(passPipelineErrorLine(
                "<Pass-Options-Parser>: no such option bogus\n", noOptions),
            "unknown option 'bogus'");
}

TEST(PassPipelineError, NoCauseKeepsMlirsLine) {
  EXPECT_EQ(passPipelineErrorLine(
                "\nfailed to add `sched-verify` with options `timeout`\n",
                noOptions),
            "failed to add `sched-verify` with options `timeout`");
}

TEST(PassPipelineError, ASyntaxErrorStaysAsWritten) {
  const std::string message =
      "MLIR Textual PassPipeline Parser:1:1: error: 'foo' does not refer "
      "to a registered pass or pass pipeline\nfoo\n^";
  EXPECT_EQ(passPipelineErrorLine(message + "\n", noOptions), message);
}

TEST(PassPipelineError, AnUnknownNameIsClippedToOneLine) {
  const std::string key = "a\nb" + std::string(5000, 'x');
  const std::string line = describePassOptionError(
      "<Pass-Options-Parser>: no such option " + key, {});
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_LT(line.size(), 200u);
  EXPECT_EQ(line.rfind("unknown option 'a", 0), 0u);
}

} // namespace
