//===- OutputPrefix.h - where schedc plan --write-plan writes ---*- C++ -*-===//
//-*-===//
//
// `--write-plan PREFIX` writes PREFIX.mlir, PREFIX.json and PREFIX.svg, and
// PREFIX-<cluster>.* with several clusters. The prefix must name files in a
// writable directory, and a cluster's name, read from a description, must
// not add a directory to it ("x/../../escaped" wrote outside).
//
//===----------------------------------------------------------------------===//

#ifndef TOOLS_SCHEDC_OUTPUTPREFIX_H
#define TOOLS_SCHEDC_OUTPUTPREFIX_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace sched {

/// Why files `prefix`.ext cannot be written, or "" when they can: its
/// directory (before the last '/', "." when none) must be an existing,
/// writable directory, and `prefix` itself a file name that is not a
/// directory or a special file (`/dev/full` created `/dev/full.mlir`).
std::string checkOutputPrefix(llvm::StringRef prefix);

/// `name` as one component of a file name: every character other than a
/// letter, a digit, '-', '_' and '.' becomes '_', and so does a leading
/// '.' (no "..", no hidden file); at most 64 characters; "_" when empty.
std::string fileNameComponent(llvm::StringRef name);

} // namespace sched

#endif // TOOLS_SCHEDC_OUTPUTPREFIX_H
