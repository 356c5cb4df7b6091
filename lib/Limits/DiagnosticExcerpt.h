//===- DiagnosticExcerpt.h - how much input an error shows ------*- C++ -*-===//
//
// An error names where it is and quotes at most one screen line of the
// input around it: never a whole source line (29.8 MB of stderr for a
// minified 29 MB plan) and never the whole module (MLIR appends the
// operation an error is emitted on, in generic form: 5.2 MB for a 2.3 MB
// schedule).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_LIMITS_DIAGNOSTICEXCERPT_H
#define LIB_LIMITS_DIAGNOSTICEXCERPT_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace sched {

/// The most characters of input an error quotes.
inline constexpr size_t kMaxExcerptColumns = 80;

/// The part of `line` an error at 0-based `column` quotes: at most
/// kMaxExcerptColumns characters around the column, with "..." where it
/// was cut. `caretColumn` receives the column's 0-based position in it.
std::string clipExcerpt(llvm::StringRef line, size_t column,
                        size_t &caretColumn);

/// `value` as an error message quotes it: on one line (a newline, tab or
/// other control character written as an escape: `\n`, `\x01`), and at
/// most kMaxExcerptColumns characters of it, with "..." where it was cut.
std::string clipForMessage(llvm::StringRef value);

/// The most characters of one error message: a few screen lines.
inline constexpr size_t kMaxMessageColumns = 1024;

/// `message` on one line (control characters escaped as clipForMessage
/// does) and at most kMaxMessageColumns characters: the last guard of a
/// tool's error line, whatever value a message quotes.
std::string clipMessage(llvm::StringRef message);

/// Makes MLIR's --mlir-print-op-on-diagnostic default to false, so that an
/// error emitted on a module or a schedule does not print it whole; the
/// flag still turns it on. Call after mlir::registerMLIRContextCLOptions()
/// and before the command line is parsed.
void printNoOpOnDiagnosticByDefault();

} // namespace sched

#endif // LIB_LIMITS_DIAGNOSTICEXCERPT_H
