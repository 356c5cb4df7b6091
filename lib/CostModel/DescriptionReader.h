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

/// The largest integer a description field may hold: every count and size
/// is far below it, and doubles hold it exactly.
inline constexpr int64_t kMaxDescriptionInteger = int64_t(1) << 53;

/// The smallest efficiency or share: below it a device does no work, and
/// dividing by it overflows the cost model's times (5e-324 gave a
/// "verified" plan at 1,296,368% MFU).
inline constexpr double kMinFraction = 1e-3;

/// The longest string field of a description (names, labels: the longest
/// real one, a calibrated profile, is under 100).
inline constexpr size_t kMaxDescriptionString = 256;

/// The range of a number field: [min, max], and 0 as well when `allowZero`
/// (an absent feature, as an fp8 peak of 0). `min` > 0 keeps denormals,
/// and the infinities a quotient by them gives, out of the cost model.
struct NumberRange {
  double min;
  double max;
  bool allowZero = false;
};

class DescriptionReader {
public:
  /// Reads the object `object`, whose fields are named `prefix` + key.
  DescriptionReader(const llvm::json::Object &object, std::string prefix = "")
      : object(object), prefix(std::move(prefix)) {}

  /// An integer field in [`min`, `max`]; `fallback` when absent (an error
  /// when there is none).
  int64_t integer(llvm::StringRef key, int64_t min,
                  std::optional<int64_t> fallback = std::nullopt,
                  int64_t max = kMaxDescriptionInteger);
  /// A number field in `range`; `fallback` when absent (an error when there
  /// is none). Non-finite values and denormals are refused with the range.
  double number(llvm::StringRef key, std::optional<double> fallback,
                NumberRange range);
  /// An efficiency or share: a number in [kMinFraction, 1].
  double fraction(llvm::StringRef key, double fallback);
  bool boolean(llvm::StringRef key, bool fallback);
  /// A string, or `fallback` when absent: at most kMaxDescriptionString
  /// characters, none of them a control character.
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

/// The largest description file: real ones are under 2 KB.
inline constexpr size_t kMaxDescriptionBytes = size_t(1) << 20;

/// Parses `text` as a JSON object; the error says where it is malformed.
/// Text over kMaxDescriptionBytes, or nesting deeper than
/// kMaxNestingDepth, is refused before the parser sees it.
llvm::Expected<llvm::json::Value> parseDescriptionJson(llvm::StringRef text);

/// Reads the file at `path` (errors name the path).
llvm::Expected<std::string> readDescriptionFile(llvm::StringRef path);

} // namespace sched

#endif // LIB_COSTMODEL_DESCRIPTIONREADER_H
