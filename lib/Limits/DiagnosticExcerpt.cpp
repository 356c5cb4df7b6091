//===- DiagnosticExcerpt.cpp - how much input an error shows --------------===//

#include "lib/Limits/DiagnosticExcerpt.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace sched;

std::string sched::clipExcerpt(llvm::StringRef line, size_t column,
                               size_t &caretColumn) {
  column = std::min(column, line.size());
  if (line.size() <= kMaxExcerptColumns) {
    caretColumn = column;
    return line.str();
  }
  // Keep the column a third of the way in: what led to it matters less
  // than what follows.
  const size_t width = kMaxExcerptColumns - 6;
  size_t begin = column > width / 3 ? column - width / 3 : 0;
  begin = std::min(begin, line.size() - width);
  std::string excerpt;
  if (begin > 0)
    excerpt += "...";
  caretColumn = excerpt.size() + (column - begin);
  excerpt += line.substr(begin, width).str();
  if (begin + width < line.size())
    excerpt += "...";
  return excerpt;
}

/// `value` on one line and at most `columns` characters.
static std::string clipToColumns(llvm::StringRef value, size_t columns) {
  std::string clipped;
  llvm::raw_string_ostream os(clipped);
  const size_t width = columns - 3;
  for (char c : value) {
    if (clipped.size() >= width) {
      clipped += "...";
      return clipped;
    }
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n')
      os << "\\n";
    else if (c == '\t')
      os << "\\t";
    else if (byte < 0x20 || byte == 0x7f)
      os << llvm::formatv("\\x{0:x-2}", unsigned(byte));
    else
      os << c;
  }
  return clipped;
}

std::string sched::clipForMessage(llvm::StringRef value) {
  return clipToColumns(value, kMaxExcerptColumns);
}

std::string sched::clipMessage(llvm::StringRef message) {
  return clipToColumns(message, kMaxMessageColumns);
}

void sched::printNoOpOnDiagnosticByDefault() {
  auto options = llvm::cl::getRegisteredOptions();
  auto found = options.find("mlir-print-op-on-diagnostic");
  // MLIRContext.cpp declares it as a cl::opt<bool>.
  if (found != options.end())
    static_cast<llvm::cl::opt<bool> *>(found->second)->setInitialValue(false);
}
