//===- JsonDuplicateKey.cpp - a key twice in one JSON object --------------===//

#include "lib/Limits/JsonDuplicateKey.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/JSON.h"

#include <forward_list>
#include <vector>

using namespace sched;

namespace {
/// An open object or array.
struct Container {
  bool isObject = false;
  /// Objects: whether the next string is a key.
  bool expectKey = false;
  /// Objects: their keys so far, with the offset of each.
  llvm::SmallDenseMap<llvm::StringRef, size_t, 8> keys;
};
} // namespace

std::optional<DuplicateKey> sched::findDuplicateKey(llvm::StringRef text) {
  std::vector<Container> open;
  // Keys with escapes, decoded. They live here, not in their Container: the
  // vector copies Containers when it grows (SmallDenseMap's move is not
  // noexcept), and a key must outlive every copy of the map naming it. The
  // list keeps its strings in place and allocates nothing while empty.
  std::forward_list<std::string> decoded;
  for (size_t i = 0; i < text.size(); ++i) {
    switch (text[i]) {
    case '{':
      open.emplace_back().isObject = true;
      open.back().expectKey = true;
      break;
    case '[':
      open.emplace_back();
      break;
    case '}':
    case ']':
      if (!open.empty())
        open.pop_back();
      break;
    case ',':
      if (!open.empty() && open.back().isObject)
        open.back().expectKey = true;
      break;
    case '"': {
      const size_t begin = i;
      // To the closing quote; a backslash escapes the next character.
      bool escaped = false;
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') {
          escaped = true;
          ++i;
        }
      if (i >= text.size())
        return std::nullopt;
      if (open.empty() || !open.back().isObject || !open.back().expectKey)
        break;
      Container &object = open.back();
      object.expectKey = false;
      llvm::StringRef key = text.slice(begin + 1, i);
      if (escaped) {
        // "a" and "\u0061" are one key.
        llvm::Expected<llvm::json::Value> value =
            llvm::json::parse(text.slice(begin, i + 1));
        if (!value) {
          llvm::consumeError(value.takeError());
          return std::nullopt;
        }
        key = decoded.emplace_front(value->getAsString()->str());
      }
      auto [it, inserted] = object.keys.try_emplace(key, begin);
      if (!inserted) {
        const llvm::StringRef before = text.take_front(begin);
        return DuplicateKey{key.str(),
                            it->second,
                            begin,
                            text.take_front(it->second).count('\n') + 1,
                            before.count('\n') + 1,
                            begin - (before.rfind('\n') + 1) + 1};
      }
      break;
    }
    default:
      break;
    }
  }
  return std::nullopt;
}
