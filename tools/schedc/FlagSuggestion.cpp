//===- FlagSuggestion.cpp - did you mean, for an unknown flag -------------===//

#include "tools/schedc/FlagSuggestion.h"
#include "tools/schedc/Commands.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"

#include <fmt/format.h>

#include <vector>

using namespace sched;
namespace cl = llvm::cl;

/// The subcommand named `name`, or the top level for "".
static cl::SubCommand *findSubCommand(llvm::StringRef name) {
  for (cl::SubCommand *sub : cl::getRegisteredSubcommands())
    if (sub->getName() == name)
      return sub;
  return name.empty() ? &cl::SubCommand::getTopLevel() : nullptr;
}

/// schedc's own flags of `sub` (its aliases included, --help's hidden
/// ones not).
static std::vector<llvm::StringRef> ownFlags(cl::SubCommand &sub) {
  std::vector<llvm::StringRef> names;
  for (const auto &entry : cl::getRegisteredOptions(sub)) {
    const cl::Option *option = entry.second;
    if (option->getOptionHiddenFlag() == cl::Hidden || option->isPositional() ||
        !option->hasArgStr() ||
        !llvm::is_contained(option->Categories, &schedcOptions))
      continue;
    names.push_back(entry.first);
  }
  llvm::sort(names);
  return names;
}

static std::string dashes(llvm::StringRef name) {
  return (name.size() == 1 ? "-" : "--") + name.str();
}

std::string sched::unknownFlagMessage(llvm::StringRef argument,
                                      llvm::StringRef command) {
  llvm::StringRef name = argument.ltrim('-').split('=').first;
  const std::string where =
      command.empty() ? "schedc" : ("schedc " + command).str();
  std::string message =
      fmt::format("unknown flag '{}' for '{}'", dashes(name), where);
  cl::SubCommand *sub = findSubCommand(command);
  if (!sub)
    return message;

  // The nearest of the subcommand's own flags: a third of the name's
  // letters changed at most (none for names of one or two letters).
  llvm::StringRef nearest;
  unsigned best = name.size() / 3 + 1;
  for (llvm::StringRef flag : ownFlags(*sub)) {
    const unsigned distance =
        name.edit_distance(flag, /*AllowReplacements=*/true, best);
    if (distance < best && name.size() > 2) {
      best = distance;
      nearest = flag;
    }
  }
  // The other subcommands that take it.
  std::vector<std::string> owners;
  for (cl::SubCommand *other : cl::getRegisteredSubcommands())
    if (other != sub && !other->getName().empty() &&
        llvm::is_contained(ownFlags(*other), name))
      owners.push_back(fmt::format("'schedc {}'", other->getName().str()));
  llvm::sort(owners);

  if (!nearest.empty())
    message += fmt::format("; did you mean '{}'?", dashes(nearest));
  if (!owners.empty()) {
    const std::string list =
        owners.size() == 1
            ? owners.front()
            : fmt::format("{} and {}",
                          fmt::join(owners.begin(), owners.end() - 1, ", "),
                          owners.back());
    message += fmt::format("{} {} is a flag of {}", nearest.empty() ? ";" : "",
                           dashes(name), list);
  }
  if (nearest.empty())
    message += fmt::format(" (see '{} --help')", where);
  return message;
}
