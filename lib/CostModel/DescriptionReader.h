//===- DescriptionReader.h - fields of a JSON description -------*- C++ -*-===//
//
// Reads the fields of a model or cluster description (llvm::json) and
// keeps the first error, named by its path ("moe.top_k: expected a
// positive integer"). Unknown fields are allowed (docs/cost-model.md).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_COSTMODEL_DESCRIPTIONREADER_H
#define LIB_COSTMODEL_DESCRIPTIONREADER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>

namespace sched {

class DescriptionReader {
public:
  /// Reads the object `object`, whose fields are named `prefix` + key.
  DescriptionReader(const llvm::json::Object &object, std::string prefix = "")
      : object(object), prefix(std::move(prefix)) {}

  /// An integer field >= `min`; `fallback` when absent (an error when
  /// there is none).
  int64_t integer(llvm::StringRef key, int64_t min,
                  std::optional<int64_t> fallback = std::nullopt);
  /// A finite number > 0 (or >= 0 when `allowZero`).
  double number(llvm::StringRef key, std::optional<double> fallback,
                bool allowZero = false);
  /// A number in (0, 1].
  double fraction(llvm::StringRef key, double fallback);
  bool boolean(llvm::StringRef key, bool fallback);
  /// A string, or `fallback` when absent.
  std::string string(llvm::StringRef key,
                     std::optional<std::string> fallback = std::nullopt);
  /// Whether field `key` is present.
  bool has(llvm::StringRef key) const { return object.get(key) != nullptr; }
  /// An array field, or null when absent (an error when it is not an
  /// array or has more than `maxSize` elements).
  const llvm::json::Array *array(llvm::StringRef key, size_t maxSize);
  /// A nested object, or null when absent.
  const llvm::json::Object *nested(llvm::StringRef key);
  /// Records an error about field `key`.
  void fail(llvm::StringRef key, const llvm::Twine &message);
  /// The dotted path of field `key`.
  std::string path(llvm::StringRef key) const { return prefix + key.str(); }

  bool ok() const { return error.empty(); }
  /// The first error, as an llvm::Error (success when none).
  llvm::Error takeError() const;
  /// Carries an error found by a nested reader.
  void adopt(const DescriptionReader &nested) {
    if (error.empty())
      error = nested.error;
  }

private:
  const llvm::json::Value *get(llvm::StringRef key, bool required);

  const llvm::json::Object &object;
  std::string prefix;
  std::string error;
};

/// Parses `text` as a JSON object; the error says where it is malformed.
llvm::Expected<llvm::json::Value> parseDescriptionJson(llvm::StringRef text);

/// Reads the file at `path` (errors name the path).
llvm::Expected<std::string> readDescriptionFile(llvm::StringRef path);

} // namespace sched

#endif // LIB_COSTMODEL_DESCRIPTIONREADER_H
