//===- OutputPrefix.cpp - where schedc plan --write-plan writes -----------===//

#include "tools/schedc/OutputPrefix.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace sched;

std::string sched::checkOutputPrefix(llvm::StringRef prefix) {
  if (prefix.empty())
    return "the prefix is empty; give a path such as plans/llama";
  if (llvm::sys::path::is_separator(prefix.back()))
    return "'" + prefix.str() +
           "' names a directory; give a path and a file name stem, such as " +
           prefix.str() + "plan";
  llvm::StringRef directory = llvm::sys::path::parent_path(prefix);
  if (directory.empty())
    directory = ".";
  if (!llvm::sys::fs::is_directory(directory))
    return "'" + directory.str() + "' is not an existing directory";
  if (llvm::sys::fs::access(directory, llvm::sys::fs::AccessMode::Write))
    return "directory '" + directory.str() + "' is not writable";
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(prefix, status) &&
      status.type() != llvm::sys::fs::file_type::regular_file)
    return "'" + prefix.str() +
           "' exists and is not a regular file; the prefix names the files "
           "PREFIX.mlir, PREFIX.json and PREFIX.svg";
  return "";
}

std::string sched::fileNameComponent(llvm::StringRef name) {
  constexpr size_t kMaxLength = 64;
  std::string component;
  for (char c : name.take_front(kMaxLength)) {
    const bool kept = llvm::isAlnum(c) || c == '-' || c == '_' ||
                      (c == '.' && !component.empty());
    component += kept ? c : '_';
  }
  return component.empty() ? "_" : component;
}
