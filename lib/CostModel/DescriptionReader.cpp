//===- DescriptionReader.cpp - fields of a JSON description ---------------===//

#include "lib/CostModel/DescriptionReader.h"

#include "lib/Limits/DiagnosticExcerpt.h"
#include "lib/Limits/JsonDuplicateKey.h"
#include "lib/Limits/JsonInteger.h"
#include "lib/Limits/NestingDepth.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace sched;

const llvm::json::Value *DescriptionReader::get(llvm::StringRef key,
                                                bool required) {
  const llvm::json::Value *value = object.get(key);
  if ((!value || value->kind() == llvm::json::Value::Null) && required)
    fail(key, "missing");
  if (value && value->kind() == llvm::json::Value::Null)
    return nullptr;
  return value;
}

void DescriptionReader::fail(llvm::StringRef key, const llvm::Twine &message) {
  if (error.empty())
    error = path(key) + ": " + message.str();
}

/// A number as messages quote it: 1048576, 1e+308, 4.94066e-324, 0.5.
static std::string quoteNumber(double value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (value == std::floor(value) && std::fabs(value) < 1e16)
    os << llvm::format("%.0f", value);
  else
    os << llvm::format("%g", value);
  return text;
}

int64_t DescriptionReader::integer(llvm::StringRef key, int64_t min,
                                   std::optional<int64_t> fallback,
                                   int64_t max) {
  const llvm::json::Value *value = get(key, !fallback);
  if (!value)
    return fallback.value_or(min);
  std::optional<int64_t> n = jsonInteger(*value);
  std::optional<double> d = value->getAsNumber();
  // A whole number written as 4096.0 is accepted too.
  if (!n && d && std::isfinite(*d) && *d == std::floor(*d) &&
      std::fabs(*d) < 9e15)
    n = static_cast<int64_t>(*d);
  if (!n || *n < min || *n > max) {
    std::string got = n   ? std::to_string(*n)
                      : d ? quoteNumber(*d)
                          : std::string("no number");
    if (max == kMaxDescriptionInteger)
      fail(key, "expected an integer >= " + llvm::Twine(min) + ", got " + got);
    else
      fail(key, "expected an integer in [" + llvm::Twine(min) + ", " +
                    llvm::Twine(max) + "], got " + got);
    return fallback.value_or(min);
  }
  return *n;
}

double DescriptionReader::number(llvm::StringRef key,
                                 std::optional<double> fallback,
                                 NumberRange range) {
  const llvm::json::Value *value = get(key, !fallback);
  if (!value)
    return fallback.value_or(range.min);
  std::optional<double> d = value->getAsNumber();
  // The negated comparisons refuse NaN as well.
  if (!d || (!(range.allowZero && *d == 0) &&
             !(*d >= range.min && *d <= range.max))) {
    fail(key, "expected a number in [" + quoteNumber(range.min) + ", " +
                  quoteNumber(range.max) + "]" +
                  (range.allowZero ? " or 0" : "") + ", got " +
                  (d ? quoteNumber(*d) : std::string("no number")));
    return fallback.value_or(range.min);
  }
  return *d;
}

double DescriptionReader::fraction(llvm::StringRef key, double fallback) {
  return number(key, fallback, {kMinFraction, 1});
}

const llvm::json::Array *DescriptionReader::array(llvm::StringRef key,
                                                  size_t maxSize) {
  const llvm::json::Value *value = get(key, false);
  if (!value)
    return nullptr;
  const llvm::json::Array *items = value->getAsArray();
  if (!items) {
    fail(key, "expected an array");
    return nullptr;
  }
  if (items->size() > maxSize) {
    fail(key, "more than " + llvm::Twine(maxSize) + " entries");
    return nullptr;
  }
  return items;
}

bool DescriptionReader::boolean(llvm::StringRef key, bool fallback) {
  const llvm::json::Value *value = get(key, false);
  if (!value)
    return fallback;
  std::optional<bool> b = value->getAsBoolean();
  if (!b) {
    fail(key, "expected true or false");
    return fallback;
  }
  return *b;
}

std::string DescriptionReader::string(llvm::StringRef key,
                                      std::optional<std::string> fallback) {
  const llvm::json::Value *value = get(key, !fallback);
  if (!value)
    return fallback.value_or("");
  std::optional<llvm::StringRef> s = value->getAsString();
  if (!s) {
    fail(key, "expected a string");
    return fallback.value_or("");
  }
  // Names and labels, echoed in tables, titles and messages: a 1 MB name
  // printed 1 MB lines, and a newline in one split them.
  if (s->size() > kMaxDescriptionString) {
    fail(key, llvm::formatv("a string of {0} characters; at most {1} (a "
                            "name, not a document)",
                            s->size(), kMaxDescriptionString)
                  .str());
    return fallback.value_or("");
  }
  if (llvm::any_of(*s, [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      })) {
    fail(key, "a control character (a newline, a tab) in a name");
    return fallback.value_or("");
  }
  return s->str();
}

const llvm::json::Object *DescriptionReader::nested(llvm::StringRef key) {
  const llvm::json::Value *value = get(key, false);
  if (!value)
    return nullptr;
  const llvm::json::Object *found = value->getAsObject();
  if (!found)
    fail(key, "expected an object");
  return found;
}

llvm::Error DescriptionReader::takeError() const {
  if (error.empty())
    return llvm::Error::success();
  return llvm::createStringError(error);
}

llvm::Expected<llvm::json::Value>
sched::parseDescriptionJson(llvm::StringRef text) {
  if (text.size() > kMaxDescriptionBytes)
    return llvm::createStringError(
        llvm::formatv("{0} bytes, more than the {1} a description may have",
                      text.size(), kMaxDescriptionBytes)
            .str());
  // llvm::json recurses per level: 35,000 '[' overflowed the stack.
  if (std::optional<size_t> at = findTooDeepNesting(text)) {
    llvm::StringRef before = text.take_front(*at);
    size_t line = before.count('\n') + 1;
    size_t column = *at - (before.rfind('\n') + 1) + 1;
    return llvm::createStringError(
        llvm::formatv("line {0}, column {1}: brackets nest deeper than {2} "
                      "levels here; a description nests fewer than five",
                      line, column, kMaxNestingDepth)
            .str());
  }
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value)
    return llvm::createStringError("malformed JSON: " +
                                   llvm::toString(value.takeError()));
  if (!value->getAsObject())
    return llvm::createStringError("expected a JSON object at the top level");
  // llvm::json keeps the last of a key given twice, silently.
  if (std::optional<DuplicateKey> duplicate = findDuplicateKey(text)) {
    size_t caret = 0;
    return llvm::createStringError(
        llvm::formatv("line {0}, column {1}: key \"{2}\" appears twice in "
                      "one object (first on line {3})",
                      duplicate->line, duplicate->column,
                      clipExcerpt(duplicate->key, 0, caret),
                      duplicate->firstLine)
            .str());
  }
  return value;
}

llvm::Expected<std::string> sched::readDescriptionFile(llvm::StringRef path) {
  // The size first: a description is read whole.
  uint64_t size = 0;
  if (!llvm::sys::fs::file_size(path, size) && size > kMaxDescriptionBytes)
    return llvm::createStringError(
        llvm::formatv("'{0}' has {1} bytes, more than the {2} a description "
                      "may have",
                      path, size, kMaxDescriptionBytes)
            .str());
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError("cannot read '" + path +
                                   "': " + buffer.getError().message());
  return (*buffer)->getBuffer().str();
}
