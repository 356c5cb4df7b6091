//===- WrappedText.cpp - prose broken into lines of a width ---------------===//

#include "lib/Report/WrappedText.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cstdlib>
#include <vector>

using namespace sched;

size_t sched::reportWidth() {
  const char *columns = std::getenv("COLUMNS");
  unsigned long long width = 0;
  if (columns && !llvm::getAsUnsignedInteger(columns, 10, width) && width >= 40)
    return width;
  return kReportWidth;
}

/// Whether `word` is a unit written after a number ("s", "GB/s", "%,"), so
/// that a line never ends between "16.65" and "s".
static bool isUnit(llvm::StringRef word) {
  word = word.rtrim(",;:.)");
  return llvm::StringSwitch<bool>(word)
      .Cases("s", "ms", "us", "B", "KB", "MB", "GB", "TB", true)
      .Cases("GB/s", "TB/s", "GiB", "MiB", "%", "x", true)
      .Default(false);
}

namespace {
/// A piece a line may not be broken inside: a word, or a number and its
/// unit, with the spaces before it.
struct Piece {
  llvm::StringRef spaces;
  std::string text;
};
} // namespace

static std::vector<Piece> splitPieces(llvm::StringRef text) {
  std::vector<Piece> pieces;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = text.find_first_not_of(' ', pos);
    if (start == llvm::StringRef::npos)
      break;
    const size_t end = std::min(text.find(' ', start), text.size());
    llvm::StringRef spaces = text.slice(pos, start);
    llvm::StringRef word = text.slice(start, end);
    if (!pieces.empty() && isUnit(word) && spaces == " " &&
        llvm::isDigit(pieces.back().text.back()))
      pieces.back().text += " " + word.str();
    else
      pieces.push_back({spaces, word.str()});
    pos = end;
  }
  return pieces;
}

std::string sched::wrapText(llvm::StringRef text, size_t width,
                            llvm::StringRef indent) {
  std::string out;
  std::string line;
  bool first = true;
  for (const Piece &piece : splitPieces(text.rtrim())) {
    const bool empty = first ? line.empty() : line.size() == indent.size();
    if (!empty &&
        line.size() + piece.spaces.size() + piece.text.size() > width) {
      out += line + "\n";
      line = indent.str();
      first = false;
    } else if (!empty || first) {
      // Spaces between words, and the paragraph's own leading indent.
      line += piece.spaces.str();
    }
    line += piece.text;
  }
  return out + line + "\n";
}
