//===- PlanArrays.cpp - a plan's arrays one element at a time -------------===//

#include "lib/Import/PlanArrays.h"

#include "llvm/ADT/StringExtras.h"

using namespace sched;

namespace {

/// An open object or array of the scan.
struct Frame {
  bool isArray = false;
  /// Objects: the key whose value comes next.
  llvm::StringRef key;
  /// Arrays: the elements begun so far; whether the next non-blank begins
  /// one.
  size_t elements = 0;
  bool expectElement = true;
  /// The key or element index of this container in its parent.
  llvm::StringRef keyInParent;
  size_t indexInParent = 0;
  /// An array cut out (one of the root object's, or a rank's
  /// instructions): where it goes, and where its current element began.
  CutArray *cut = nullptr;
  size_t elementBegin = 0;
};

bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// The end of `text` before `end` with blanks trimmed, from `begin`.
size_t trimEnd(llvm::StringRef text, size_t begin, size_t end) {
  while (end > begin && isBlank(text[end - 1]))
    --end;
  return end;
}

} // namespace

std::optional<PlanArrays> sched::cutPlanArrays(llvm::StringRef text) {
  PlanArrays result;
  std::vector<Frame> stack;
  // Ends the current element of the innermost cut array at `at`.
  auto endElement = [&](Frame &frame, size_t at) {
    const size_t end = trimEnd(text, frame.elementBegin, at);
    if (end == frame.elementBegin)
      return false;
    frame.cut->elements.emplace_back(frame.elementBegin, end);
    return true;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (isBlank(c))
      continue;
    // A value begins in an array: count it, and mark a cut array's.
    if (!stack.empty() && stack.back().isArray && stack.back().expectElement &&
        c != ']') {
      Frame &array = stack.back();
      array.expectElement = false;
      ++array.elements;
      array.elementBegin = i;
    }
    switch (c) {
    case '"': {
      const size_t begin = i + 1;
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      if (i >= text.size())
        return std::nullopt;
      const size_t next = text.find_first_not_of(" \t\r\n", i + 1);
      if (!stack.empty() && !stack.back().isArray && next != text.npos &&
          text[next] == ':')
        stack.back().key = text.slice(begin, i);
      break;
    }
    case '{':
    case '[': {
      Frame frame;
      frame.isArray = c == '[';
      if (!stack.empty() && stack.back().isArray)
        frame.indexInParent = stack.back().elements - 1;
      else if (!stack.empty())
        frame.keyInParent = stack.back().key;
      if (frame.isArray && stack.size() == 1 && !stack[0].isArray) {
        // root { "KEY": [
        auto [entry, added] = result.root.try_emplace(frame.keyInParent);
        if (!added)
          return std::nullopt;
        frame.cut = &entry->second;
      } else if (frame.isArray && stack.size() == 3 && !stack[0].isArray &&
                 stack[1].isArray && stack[1].keyInParent == "ranks" &&
                 !stack[2].isArray && frame.keyInParent == "instructions") {
        // root { "ranks": [ { "instructions": [
        auto [entry, added] =
            result.instructions.try_emplace(stack[2].indexInParent);
        if (!added)
          return std::nullopt;
        frame.cut = &entry->second;
      }
      if (frame.cut)
        frame.cut->open = i;
      stack.push_back(frame);
      break;
    }
    case '}':
    case ']': {
      if (stack.empty() || stack.back().isArray != (c == ']'))
        return std::nullopt;
      Frame &frame = stack.back();
      if (frame.cut) {
        // After a comma another element must come: `[{...},]` is for
        // llvm::json to report.
        if (frame.expectElement ? frame.elements > 0 : !endElement(frame, i))
          return std::nullopt;
        frame.cut->close = i;
      }
      stack.pop_back();
      break;
    }
    case ',':
      if (stack.empty())
        return std::nullopt;
      if (stack.back().isArray) {
        if (stack.back().cut && !endElement(stack.back(), i))
          return std::nullopt;
        stack.back().expectElement = true;
      }
      break;
    default:
      break;
    }
  }
  if (!stack.empty())
    return std::nullopt;
  result.skeleton = text.str();
  for (const auto &entry : result.root)
    for (size_t k = entry.second.open + 1; k < entry.second.close; ++k)
      if (result.skeleton[k] != '\n' && result.skeleton[k] != '\r')
        result.skeleton[k] = ' ';
  return result;
}

std::string sched::textWithoutArray(llvm::StringRef text, size_t begin,
                                    size_t end, const CutArray &inner) {
  std::string out = text.slice(begin, end).str();
  for (size_t k = inner.open + 1; k < inner.close; ++k)
    if (k >= begin && k < end && text[k] != '\n' && text[k] != '\r')
      out[k - begin] = ' ';
  return out;
}
