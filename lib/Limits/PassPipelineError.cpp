//===- PassPipelineError.cpp - pipeline errors on one line ----------------===//

#include "lib/Limits/PassPipelineError.h"
#include "lib/Limits/DiagnosticExcerpt.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace sched;

/// What llvm::cl's pass-options parser writes before an unknown name.
static constexpr llvm::StringLiteral kNoSuchOption =
    "<Pass-Options-Parser>: no such option ";
/// What MLIR's pipeline parser writes for each element it failed to add.
static constexpr llvm::StringLiteral kFailedToAdd = "failed to add `";

std::vector<std::string> sched::passOptionNames(llvm::StringRef textualForm) {
  std::vector<std::string> names;
  const size_t open = textualForm.find('{');
  if (open == llvm::StringRef::npos)
    return names;
  llvm::StringRef rest = textualForm.drop_front(open + 1);
  rest.consume_back("}");
  // Each option is NAME=VALUE, separated by spaces; a value written by
  // the options' printers holds no space before its next NAME=.
  llvm::SmallVector<llvm::StringRef> words;
  rest.split(words, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef word : words) {
    const size_t equals = word.find('=');
    if (equals == 0 || equals == llvm::StringRef::npos)
      continue;
    llvm::StringRef name = word.take_front(equals);
    if (llvm::all_of(name, [](char c) {
          return llvm::isAlnum(c) || c == '-' || c == '_';
        }))
      names.push_back(name.str());
  }
  return names;
}

std::string sched::describePassOptionError(llvm::StringRef cause,
                                           llvm::ArrayRef<std::string> names) {
  cause = cause.trim();
  const size_t at = cause.find(kNoSuchOption);
  if (at == llvm::StringRef::npos)
    return clipMessage(cause);
  llvm::StringRef key = cause.drop_front(at + kNoSuchOption.size()).trim();
  std::string text = (cause.take_front(at) + "unknown option '" +
                      clipForMessage(key) + "'")
                         .str();
  if (!names.empty())
    text += "; expected one of: " + llvm::join(names, ", ");
  return clipMessage(text);
}

std::string sched::passPipelineErrorLine(
    llvm::StringRef message,
    llvm::function_ref<std::vector<std::string>(llvm::StringRef)>
        optionNames) {
  llvm::SmallVector<llvm::StringRef> lines;
  message.split(lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  std::string name;
  llvm::SmallVector<llvm::StringRef> causes;
  llvm::StringRef firstFailed;
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (line.empty())
      continue;
    if (!line.starts_with(kFailedToAdd)) {
      causes.push_back(line);
      continue;
    }
    // The innermost element comes first; the pipelines around it follow.
    if (firstFailed.empty()) {
      firstFailed = line;
      name = line.drop_front(kFailedToAdd.size()).split('`').first.str();
    }
  }
  // No element named: a pass given as a flag (`--sched-lower-1f1b=KEY=1`)
  // reports its unknown option alone; anything else (the pipeline's syntax,
  // with its excerpt and caret) stays as MLIR wrote it.
  if (firstFailed.empty())
    return message.contains(kNoSuchOption)
               ? describePassOptionError(message, {})
               : message.rtrim().str();
  // A cause printed elsewhere (or none): MLIR's own line is all there is.
  if (causes.empty())
    return clipMessage(firstFailed);
  const std::string cause = llvm::join(causes, "; ");
  std::string text = describePassOptionError(
      cause, name.empty() ? std::vector<std::string>() : optionNames(name));
  if (!name.empty() && !llvm::StringRef(text).starts_with(name + ":"))
    text = name + ": " + text;
  return clipMessage(text);
}
