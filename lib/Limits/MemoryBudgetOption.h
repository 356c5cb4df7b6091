//===- MemoryBudgetOption.h - the memory-budget pass option -----*- C++ -*-===//
//
// The `memory-budget` option of the sched-lower-* passes, sched-insert-p2p
// and the sched-generate-verify pipeline, through sched-opt and through
// mlir-opt with the plugin. Its value is read by parseMemorySize, as the
// command line's --memory-budget is: `memory-budget=2G` and
// `memory-budget=2147483648` mean the same, and a value under 1 byte (which
// used to switch the budget off) or one that is not a size is refused with
// one error line that names the option, the value and the limits.
//
// llvm::cl refuses an option value by printing to stderr itself, and MLIR
// then reports an empty `error:` and a "failed to add" line; so the option's
// parser keeps any text, and the pass refuses an invalid one when it runs
// (memoryBudgetBytes).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_LIMITS_MEMORYBUDGETOPTION_H
#define LIB_LIMITS_MEMORYBUDGETOPTION_H

#include "lib/Limits/ResourceLimits.h"

#include "llvm/Support/CommandLine.h"

#include <string>

namespace sched {

/// A working-memory budget as a pass option: the text as written, or the
/// bytes a C++ caller gave.
class MemoryBudgetOption {
public:
  /// A budget of `bytes` (as a C++ caller gives it: `createLowerGPipe({n})`).
  MemoryBudgetOption(int64_t bytes = kDefaultMemoryBudget)
      : text(std::to_string(bytes)) {}
  /// A budget as written in a pass option; not checked yet.
  static MemoryBudgetOption fromText(llvm::StringRef text) {
    MemoryBudgetOption option;
    option.text = text.str();
    return option;
  }

  /// The value as written (or the bytes given).
  const std::string &str() const { return text; }

  bool operator==(const MemoryBudgetOption &other) const {
    return text == other.text;
  }
  bool operator!=(const MemoryBudgetOption &other) const {
    return !(*this == other);
  }

private:
  std::string text;
};

/// The budget in bytes, or, for a value parseMemorySize refuses, its one
/// line after `memory-budget: ` (the value clipped to a screen line, the
/// limits: 1 byte to 8 EiB). Every pass and pipeline that takes the option
/// reads it through this.
llvm::Expected<int64_t> memoryBudgetBytes(const MemoryBudgetOption &option);

} // namespace sched

namespace llvm::cl {
/// Keeps any text: memoryBudgetBytes refuses an invalid one when the pass
/// runs, as one error line.
template <>
class parser<sched::MemoryBudgetOption>
    : public basic_parser<sched::MemoryBudgetOption> {
public:
  parser(Option &option) : basic_parser(option) {}
  /// `memory-budget` without `=SIZE` is an empty value, refused by
  /// memoryBudgetBytes as any other: as a required value, llvm::cl printed
  /// "requires a value!" itself and MLIR an empty `error:` after it.
  enum ValueExpected getValueExpectedFlagDefault() const {
    return ValueOptional;
  }
  bool parse(Option &, StringRef, StringRef arg,
             sched::MemoryBudgetOption &value) {
    value = sched::MemoryBudgetOption::fromText(arg);
    return false;
  }
  StringRef getValueName() const override { return "size"; }
  static void print(raw_ostream &os, const sched::MemoryBudgetOption &value) {
    os << value.str();
  }
  void printOptionDiff(const Option &option,
                       const sched::MemoryBudgetOption &value,
                       const OptVal &defaultValue, size_t globalWidth) const;
  void anchor() override;
};
} // namespace llvm::cl

#endif // LIB_LIMITS_MEMORYBUDGETOPTION_H
