//===- PlanArrays.h - a plan's arrays one element at a time -----*- C++ -*-===//
//
// llvm::json gives every object a hash table of 64 slots at its first key,
// some 5.5 KB however small the object: a plan's instructions, groups,
// collective declarations and stage costs, nearly all of its objects, would
// cost 5.5 KB each. The plan reader parses the root object with its arrays
// emptied and then each element of those arrays on its own (a rank with
// its instructions emptied, each instruction on its own), dropping each
// once read, so that its memory follows the document. Cutting keeps
// llvm::json as the one parser of every value, with its error messages;
// what is cut is only where the elements begin and end. Internal to
// lib/Import.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_IMPORT_PLANARRAYS_H
#define LIB_IMPORT_PLANARRAYS_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sched {

/// An array of a plan, located in its text.
struct CutArray {
  /// The offsets of its '[' and its ']'.
  size_t open = 0;
  size_t close = 0;
  /// The [begin, end) offsets of each element, blanks trimmed.
  std::vector<std::pair<size_t, size_t>> elements;
};

/// The arrays of a plan's root object and its ranks' instructions arrays,
/// cut out of its text.
struct PlanArrays {
  /// The text with each array of the root object emptied: `[]`, then
  /// spaces, its line breaks kept, so that every offset, line and column
  /// of the rest is the text's own.
  std::string skeleton;
  /// The arrays of the root object, by key ("groups", "ranks", ...).
  llvm::StringMap<CutArray> root;
  /// By the rank's index in "ranks": its instructions array.
  std::map<size_t, CutArray> instructions;
};

/// Finds the arrays of the root object of plan `text` and the instructions
/// arrays of its ranks (root object, "ranks" array, rank objects,
/// "instructions" arrays); std::nullopt when the text is not well-formed
/// enough to tell (unbalanced brackets, an open string, an empty element,
/// a key twice), for llvm::json to report.
std::optional<PlanArrays> cutPlanArrays(llvm::StringRef text);

/// The text [begin, end) of `text` with the inside of `inner` (an array
/// within that range) blanked as in PlanArrays::skeleton: a rank's object
/// without its instructions.
std::string textWithoutArray(llvm::StringRef text, size_t begin, size_t end,
                             const CutArray &inner);

} // namespace sched

#endif // LIB_IMPORT_PLANARRAYS_H
