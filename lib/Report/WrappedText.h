//===- WrappedText.h - prose broken into lines of a width -------*- C++ -*-===//
//
// The report's prose (the setting, the search, why, band) is broken at
// spaces into lines that fit a terminal of `width` columns, the lines after
// the first indented, so that `schedc plan` fits 120 columns (or the
// environment's COLUMNS).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_REPORT_WRAPPEDTEXT_H
#define LIB_REPORT_WRAPPEDTEXT_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace sched {

/// The columns the plan report fits in by default.
inline constexpr size_t kReportWidth = 120;

/// The columns prose is wrapped to: the environment's COLUMNS where it is a
/// number of at least 40 (the lit tests set it wide, to read a sentence on
/// one line), else kReportWidth.
size_t reportWidth();

/// `text` (one paragraph) broken at spaces into lines of at most `width`
/// columns, each line after the first starting with `indent`; each line
/// ends in "\n". A word longer than a line stays whole on a line of its
/// own. Runs of spaces inside a line are kept.
std::string wrapText(llvm::StringRef text, size_t width = reportWidth(),
                     llvm::StringRef indent = "  ");

} // namespace sched

#endif // LIB_REPORT_WRAPPEDTEXT_H
