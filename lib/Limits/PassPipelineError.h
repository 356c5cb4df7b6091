//===- PassPipelineError.h - pipeline errors on one line --------*- C++ -*-===//
//
// MLIR reports a pass pipeline it cannot build (`--pass-pipeline` with an
// option a pass does not have, or a value a pipeline refuses) as one
// diagnostic of several lines: the cause, a blank line, then "failed to add
// `NAME` with options `...`" for the pass and for each pipeline around it.
// An unknown option's cause is llvm::cl's "<Pass-Options-Parser>: no such
// option KEY", which names neither the pass nor the options it has.
// sched-opt reports the same as one line: "NAME: unknown option 'KEY';
// expected one of: a, b" (tools/sched-opt; docs/limits.md says why mlir-opt
// with the plugin keeps MLIR's lines).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_LIMITS_PASSPIPELINEERROR_H
#define LIB_LIMITS_PASSPIPELINEERROR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace sched {

/// The option names of a pass or pipeline written in its textual form with
/// every option (`sched-verify{p2p=rendezvous proof=witness}` or
/// `{cost= p2p=rendezvous}`), in order.
std::vector<std::string> passOptionNames(llvm::StringRef textualForm);

/// `cause`, an options parser's report, with llvm::cl's "<Pass-Options-
/// Parser>: no such option KEY" said as "unknown option 'KEY'; expected one
/// of: NAMES" (NAMES left out when empty); on one line, clipped.
std::string describePassOptionError(llvm::StringRef cause,
                                    llvm::ArrayRef<std::string> names);

/// MLIR's report of a pipeline it could not build (`message`, one diagnostic
/// of several lines) as one line: the cause, said by describePassOptionError
/// with `optionNames` of the pass it names (empty for a pipeline or a name
/// not registered), after "NAME: " unless it starts with it. A message
/// that names no element is said by describePassOptionError when it is an
/// unknown option, and kept as it is otherwise (a syntax error's excerpt).
std::string passPipelineErrorLine(
    llvm::StringRef message,
    llvm::function_ref<std::vector<std::string>(llvm::StringRef)>
        optionNames);

} // namespace sched

#endif // LIB_LIMITS_PASSPIPELINEERROR_H
