//===- Verify.cpp - the sched-verify pass ---------------------------------===//

#include "lib/VerifyIR/VerifyIR.h"
#include "passes/Passes.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>

namespace sched {
#define GEN_PASS_DEF_VERIFYSCHEDULES
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

/// The flag spelling of the emit-smtlib option, for sched-opt command lines.
static llvm::cl::opt<std::string> emitSmtlibFlag(
    "sched-verify-emit-smtlib",
    llvm::cl::desc("Write the SMT-LIB 2 query of sched-verify to this file"),
    llvm::cl::value_desc("file"), llvm::cl::init(""));

namespace {
struct VerifyPass : impl::VerifySchedulesBase<VerifyPass> {
  using VerifySchedulesBase::VerifySchedulesBase;

  void runOnOperation() override {
    VerifyOptions options;
    if (p2p == "eager") {
      options.p2p = P2PSemantics::Eager;
    } else if (p2p != "rendezvous") {
      mlir::emitError(getOperation().getLoc())
          << "sched-verify: unknown p2p semantics '" << p2p
          << "'; expected eager or rendezvous";
      return signalPassFailure();
    }
    if (proof == "search") {
      options.proofMode = ProofMode::Search;
    } else if (proof != "witness") {
      mlir::emitError(getOperation().getLoc())
          << "sched-verify: unknown proof mode '" << proof
          << "'; expected witness or search";
      return signalPassFailure();
    }
    if (!memoryLimit.empty()) {
      llvm::Expected<MemoryLimit> limit = MemoryLimit::parse(memoryLimit);
      if (!limit) {
        mlir::emitError(getOperation().getLoc())
            << "sched-verify: memory-limit "
            << llvm::toString(limit.takeError());
        return signalPassFailure();
      }
      options.memoryLimit = *limit;
    }
    // As schedc verify's flag: outside [0, 1] (or NaN) the residue held
    // from I to W is negative and turns a memory violation into "verified".
    if (!weightGradFraction.parsed() ||
        !(weightGradFraction >= 0 && weightGradFraction <= 1)) {
      mlir::emitError(getOperation().getLoc())
          << "sched-verify: weight-grad-fraction must be a number in [0, 1], "
             "got "
          << weightGradFraction.describe();
      return signalPassFailure();
    }
    options.weightGradFraction = weightGradFraction;
    if (!timeout.parsed() || !(timeout >= 0 && std::isfinite(timeout))) {
      mlir::emitError(getOperation().getLoc())
          << "sched-verify: timeout must be a finite number of seconds >= 0 "
             "(0: no limit), got "
          << timeout.describe();
      return signalPassFailure();
    }
    options.timeoutSeconds = timeout;
    const std::string smtlibPath =
        emitSmtlibFlag.empty() ? std::string(emitSmtlib) : emitSmtlibFlag;
    std::unique_ptr<llvm::ToolOutputFile> smtlib;
    if (!smtlibPath.empty()) {
      std::error_code error;
      smtlib = std::make_unique<llvm::ToolOutputFile>(smtlibPath, error,
                                                      llvm::sys::fs::OF_Text);
      if (error) {
        mlir::emitError(getOperation().getLoc())
            << "sched-verify: cannot write the SMT-LIB file '" << smtlibPath
            << "': " << error.message();
        return signalPassFailure();
      }
      options.emitSmtlib = true;
    }
    bool failedAny = false;
    for (auto schedule : getOperation().getOps<ScheduleOp>()) {
      VerifyResult result = verifyScheduleOp(schedule, options);
      failedAny |= result.verdict != Verdict::Verified;
      if (smtlib)
        smtlib->os() << smtlibSection(schedule.getSymName(), result);
    }
    if (smtlib)
      smtlib->keep();
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
