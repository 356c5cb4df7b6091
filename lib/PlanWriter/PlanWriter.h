//===- PlanWriter.h - the recommended plan, through the IR ------*- C++ -*-===//
//
// `schedc plan --write-plan` (docs/planner.md): a candidate becomes a
// sched.pipeline with the cost model's stage times and sizes and the
// device's usable memory, is lowered by sched-lower-<strategy>,
// sched-insert-p2p, sched-insert-collectives and sched-assign-buffers, and
// verified by sched-verify; the IR, the runtime plan (runtime-plan.md) and
// a timeline at the simulated times are written. It runs the pass
// manager, so it is a library of its own beside lib/Planner.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_PLANWRITER_PLANWRITER_H
#define LIB_PLANWRITER_PLANWRITER_H

#include "lib/CostModel/CostModel.h"
#include "lib/Export/LaunchPlan.h"
#include "lib/Planner/Candidate.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace sched {

/// Where writePlan writes each form of the plan; a form without a stream
/// is not written.
struct PlanOutputs {
  /// The lowered and verified module (PREFIX.mlir).
  llvm::raw_ostream *ir = nullptr;
  /// The verified runtime plan (PREFIX.json).
  llvm::raw_ostream *runtimePlan = nullptr;
  /// An SVG timeline of the lowered schedule at the simulated times, in
  /// seconds, with the step's time after the pipeline (PREFIX.svg).
  llvm::raw_ostream *timeline = nullptr;
  /// The same as a Chrome trace in real time (PREFIX.trace).
  llvm::raw_ostream *trace = nullptr;
  /// PyTorch pipelining CSV with a SEND/RECV cell per transfer
  /// (PREFIX.csv): the lowered schedule without the data-parallel
  /// reductions and the optimizer step, which PyTorch's training loop runs
  /// (DDP/FSDP and optimizer.step()).
  llvm::raw_ostream *torchCsv = nullptr;
  /// Where a form the plan cannot be stated in (a CSV of DualPipe's two
  /// replicas) says why, "--emit torch-csv: ..."; that form is then not
  /// written and the others are. Without it, such a form fails writePlan.
  std::vector<std::string> *refusals = nullptr;
};

/// `candidate` in the terms launchers take (lib/Export/LaunchPlan.h).
LaunchPlan launchPlan(const CostModel &model, const Candidate &candidate);

/// The title of a plan's pictures: model, devices, cluster, layout,
/// schedule and step time.
std::string planTitle(const CostModel &model, const Candidate &candidate);

/// A failure already reported as diagnostics through the MLIR context:
/// the passes rejected the plan (`rejected`), or its lowered IR could not
/// be read back as a runtime plan.
class PlanDiagnosedError : public llvm::ErrorInfo<PlanDiagnosedError> {
public:
  static char ID;

  explicit PlanDiagnosedError(bool rejected) : rejected(rejected) {}

  void log(llvm::raw_ostream &os) const override {
    os << (rejected ? "the plan was rejected" : "the plan cannot be read");
  }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

  bool rejected;
};

/// Whether the written plan of `candidate` gathers parameters (ZeRO-3
/// sharded across data-parallel replicas): an UNSHARD of each stage before
/// each of its computes and a RESHARD after it. Its memory is then the
/// planner's, not checked again by the verifier (docs/planner.md,
/// "Written plans").
bool gathersParameters(const Candidate &candidate);

/// Lowers `candidate` through the IR in `context` (which must have the
/// sched dialect loaded and a diagnostic handler), verifies it, and writes
/// the forms `outputs` asks for. The stage times are seconds
/// (`sched.time_unit = "s"`) and the pipeline declares the planner's
/// transfer time (`sched.transfer_time`), so that simulating the written IR
/// gives the planner's makespan. Fails with PlanDiagnosedError, or with a
/// one-line message when the schedule cannot be built or drawn.
llvm::Error writePlan(mlir::MLIRContext &context, const CostModel &model,
                      const Candidate &candidate, PlanOutputs outputs);

} // namespace sched

#endif // LIB_PLANWRITER_PLANWRITER_H
