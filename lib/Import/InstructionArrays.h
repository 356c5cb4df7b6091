//===- InstructionArrays.h - instructions one at a time ---------*- C++ -*-===//
//
// llvm::json gives every object a hash table of 64 slots at its first key,
// some 5.5 KB however small the object: a plan's instructions, most of its
// objects, would cost 5.5 KB each. The plan reader parses the plan with its
// "instructions" arrays emptied and then each instruction on its own, so
// that its memory follows the document. Internal to lib/Import.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_IMPORT_INSTRUCTIONARRAYS_H
#define LIB_IMPORT_INSTRUCTIONARRAYS_H

#include "llvm/ADT/StringRef.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sched {

/// The "instructions" arrays of a plan's ranks, cut out of its text.
struct InstructionArrays {
  /// The text with each rank's instructions array emptied: `[]`, then
  /// spaces, its line breaks kept, so that every offset, line and column
  /// of the rest is the text's own.
  std::string skeleton;
  /// By the rank's index in "ranks": the [begin, end) offsets in the text
  /// of each element of its instructions array.
  std::map<size_t, std::vector<std::pair<size_t, size_t>>> elements;
};

/// Finds the instructions arrays of the ranks of plan `text` (root object,
/// "ranks" array, rank objects, "instructions" arrays); std::nullopt when
/// the text is not well-formed enough to tell (unbalanced brackets, an open
/// string, an empty element, a key twice), for llvm::json to report.
std::optional<InstructionArrays> cutInstructionArrays(llvm::StringRef text);

} // namespace sched

#endif // LIB_IMPORT_INSTRUCTIONARRAYS_H
