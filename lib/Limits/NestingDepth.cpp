//===- NestingDepth.cpp - how deep an input may nest ----------------------===//

#include "lib/Limits/NestingDepth.h"

#include "llvm/Support/raw_ostream.h"

using namespace sched;

std::optional<size_t> sched::findTooDeepNesting(llvm::StringRef text) {
  return countBrackets(text).tooDeep;
}

BracketCount sched::countBrackets(llvm::StringRef text) {
  BracketCount count;
  unsigned depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    switch (text[i]) {
    case '"':
      // To the closing quote; a backslash escapes the next character.
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (i + 1 < text.size() && text[i + 1] == '/')
        i = std::min(text.find('\n', i), text.size());
      break;
    case '{':
    case '[':
    case '(':
      ++count.opened;
      if (++depth > kMaxNestingDepth) {
        count.tooDeep = i;
        return count;
      }
      break;
    case '}':
    case ']':
    case ')':
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return count;
}

bool sched::reportTooDeepNesting(llvm::SourceMgr &sourceMgr) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  std::optional<size_t> at = findTooDeepNesting(buffer->getBuffer());
  if (!at)
    return false;
  // The location alone: the offending line may be megabytes of brackets.
  auto [line, column] = sourceMgr.getLineAndColumn(
      llvm::SMLoc::getFromPointer(buffer->getBufferStart() + *at));
  llvm::errs() << buffer->getBufferIdentifier() << ":" << line << ":" << column
               << ": error: brackets nest deeper than " << kMaxNestingDepth
               << " levels here; schedc reads at most that many (schedules "
                  "and plans nest fewer than ten)\n";
  return true;
}
