//===- JsonDuplicateKey.h - a key twice in one JSON object ------*- C++ -*-===//
//
// llvm::json keeps the last value of a key given twice in one object and
// says nothing, so `"stages": 7, ..., "stages": 2` read as 2 and a plan or
// a description edited by hand, or merged, meant something else than it
// said. The plan and description readers refuse it with this.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_LIMITS_JSONDUPLICATEKEY_H
#define LIB_LIMITS_JSONDUPLICATEKEY_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace sched {

/// A key that one object of a JSON text holds twice.
struct DuplicateKey {
  /// The key, its escapes decoded.
  std::string key;
  /// The offsets of the opening quotes of its first and second occurrence.
  size_t first = 0;
  size_t second = 0;
  /// The line of the first (1-based), and the line and column of the
  /// second, for messages.
  size_t firstLine = 0;
  size_t line = 0;
  size_t column = 0;
};

/// The first key, in the order of the text, that appears a second time in
/// the same object of the JSON `text`; std::nullopt when there is none.
/// One pass, holding the keys of the open objects only. Text that is not
/// JSON is scanned as far as it goes, for the parser to report.
std::optional<DuplicateKey> findDuplicateKey(llvm::StringRef text);

} // namespace sched

#endif // LIB_LIMITS_JSONDUPLICATEKEY_H
