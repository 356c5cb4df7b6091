//===- FlagSuggestion.h - did you mean, for an unknown flag -----*- C++ -*-===//
//
// An unknown flag gets one error line that says what was meant: the
// subcommand's own flag nearest in spelling ("did you mean --strategy?"),
// or the subcommands that take it when it belongs to another one
// ("--pp is a flag of 'schedc generate' and 'schedc synthesize'").
//
//===----------------------------------------------------------------------===//

#ifndef TOOLS_SCHEDC_FLAGSUGGESTION_H
#define TOOLS_SCHEDC_FLAGSUGGESTION_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace sched {

/// The error line for `argument` ("--stratgy", "--pp=4"), which subcommand
/// `command` ("plan"; empty for none) does not take.
std::string unknownFlagMessage(llvm::StringRef argument,
                               llvm::StringRef command);

} // namespace sched

#endif // TOOLS_SCHEDC_FLAGSUGGESTION_H
