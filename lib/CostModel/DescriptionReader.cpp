//===- DescriptionReader.cpp - fields of a JSON description ---------------===//

#include "lib/CostModel/DescriptionReader.h"

#include "llvm/Support/MemoryBuffer.h"

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

int64_t DescriptionReader::integer(llvm::StringRef key, int64_t min,
                                   std::optional<int64_t> fallback) {
  const llvm::json::Value *value = get(key, !fallback);
  if (!value)
    return fallback.value_or(min);
  std::optional<int64_t> n = value->getAsInteger();
  // A whole number written as 4096.0 is accepted too.
  if (!n)
    if (std::optional<double> d = value->getAsNumber())
      if (std::isfinite(*d) && *d == std::floor(*d) && std::fabs(*d) < 9e15)
        n = static_cast<int64_t>(*d);
  if (!n || *n < min) {
    fail(key, "expected an integer >= " + llvm::Twine(min));
    return fallback.value_or(min);
  }
  return *n;
}

double DescriptionReader::number(llvm::StringRef key,
                                 std::optional<double> fallback,
                                 bool allowZero) {
  const llvm::json::Value *value = get(key, !fallback);
  if (!value)
    return fallback.value_or(1);
  std::optional<double> d = value->getAsNumber();
  if (!d || !std::isfinite(*d) || *d < 0 || (!allowZero && *d == 0)) {
    fail(key, allowZero ? "expected a finite number >= 0"
                        : "expected a finite number > 0");
    return fallback.value_or(1);
  }
  return *d;
}

double DescriptionReader::fraction(llvm::StringRef key, double fallback) {
  double value = number(key, fallback);
  if (value > 1) {
    fail(key, "expected a fraction in (0, 1]");
    return fallback;
  }
  return value;
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
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value)
    return llvm::createStringError("malformed JSON: " +
                                   llvm::toString(value.takeError()));
  if (!value->getAsObject())
    return llvm::createStringError("expected a JSON object at the top level");
  return value;
}

llvm::Expected<std::string> sched::readDescriptionFile(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError("cannot read '" + path +
                                   "': " + buffer.getError().message());
  return (*buffer)->getBuffer().str();
}
