//===- JsonPlan.h - import JSON runtime plans -------------------*- C++ -*-===//
//
// Reads the JSON runtime plan of docs/runtime-plan.md back: into the plain
// form, every instruction located at its `{` in the file, for schedc verify
// and simulate; or into a module holding one sched.schedule, for
// sched-translate. Malformed input (bad JSON, a missing or mistyped field,
// an unknown op, group or key) is an error at the offending spot; a
// well-formed plan that is wrong reads fine, for the verifier to judge.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_IMPORT_JSONPLAN_H
#define LIB_IMPORT_JSONPLAN_H

#include "lib/Schedule/RuntimePlan.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace sched {

/// A JSON plan read into the plain form. A transfer whose peer names no
/// rank of the plan has peer -1.
class JsonPlanInput {
public:
  JsonPlanInput(mlir::MLIRContext *context, llvm::StringRef file);

  RuntimePlan plan;
  /// Per rank and instruction: the 1-based line and column of its `{`;
  /// empty when they could not be told apart in the text.
  std::vector<std::vector<std::pair<unsigned, unsigned>>> positions;

  /// Where instruction `index` of rank `rank` is; the file when unknown.
  mlir::Location locateAction(int32_t rank, int32_t index) const;
  mlir::Location locate(unsigned line, unsigned column) const;

private:
  mlir::StringAttr file;
};

/// True when `text` looks like a JSON plan (its first non-blank is `{`).
bool looksLikeJsonPlan(llvm::StringRef text);

/// Reads the main buffer of `sourceMgr`, building no IR. Emits a
/// diagnostic and fails on malformed input.
mlir::FailureOr<JsonPlanInput> readJsonPlan(llvm::SourceMgr &sourceMgr,
                                            mlir::MLIRContext *context);

/// Imports the main buffer of `sourceMgr` as a module holding one
/// sched.schedule (with its mesh, groups, declarations and slots). Emits
/// diagnostics and returns null on malformed input, and on a transfer whose
/// peer the IR cannot name.
mlir::OwningOpRef<mlir::ModuleOp> importJsonPlan(llvm::SourceMgr &sourceMgr,
                                                 mlir::MLIRContext *context);

} // namespace sched

#endif // LIB_IMPORT_JSONPLAN_H
