//===- NestingDepth.h - how deep an input may nest --------------*- C++ -*-===//
//
// The MLIR and JSON parsers recurse once or more per level of nesting, so
// an input of a few kilobytes of '[' or nested regions exhausts the stack
// before they can report anything (a crash, not an error). Every reader of
// MLIR text or JSON plans checks the depth first, with this.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_LIMITS_NESTINGDEPTH_H
#define LIB_LIMITS_NESTINGDEPTH_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"

#include <optional>

namespace sched {

/// The most brackets an input may nest. Schedules, pipelines and runtime
/// plans nest fewer than ten; the parsers handle thousands.
inline constexpr unsigned kMaxNestingDepth = 512;

/// The brackets ('{', '[' or '(') of a text, outside string literals
/// ("...", with backslash escapes) and // comments.
struct BracketCount {
  /// How many open, up to the first too deep.
  size_t opened = 0;
  /// The offset of the first that opens past kMaxNestingDepth open ones.
  std::optional<size_t> tooDeep;
};
BracketCount countBrackets(llvm::StringRef text);

/// countBrackets(text).tooDeep: the offset of the first bracket past the
/// depth limit, std::nullopt when there is none.
std::optional<size_t> findTooDeepNesting(llvm::StringRef text);

/// Checks the main buffer of `sourceMgr`; when it nests too deep, prints
/// one error at that bracket (file:line:col, as the parsers' own errors)
/// and returns true.
bool reportTooDeepNesting(llvm::SourceMgr &sourceMgr);

} // namespace sched

#endif // LIB_LIMITS_NESTINGDEPTH_H
