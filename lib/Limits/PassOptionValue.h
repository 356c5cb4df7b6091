//===- PassOptionValue.h - a number or flag pass option ---------*- C++ -*-===//
//
// The number and flag options of the sched passes (sched-verify's timeout,
// sched-synthesize's gap, sched-insert-p2p's group, ...), through sched-opt
// and through mlir-opt with the plugin.
//
// llvm::cl refuses a value it cannot parse ("timeout=abc") by printing to
// stderr itself, and MLIR then reports an empty `error:` and a "failed to
// add" line: three lines, none naming the limit. So these options keep the
// text they cannot parse, and the pass refuses it when it runs, in the one
// error line that states the option's range (`got 'abc'`), as the
// memory-budget option does (MemoryBudgetOption.h).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_LIMITS_PASSOPTIONVALUE_H
#define LIB_LIMITS_PASSOPTIONVALUE_H

#include "lib/Limits/DiagnosticExcerpt.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <type_traits>

namespace sched {

/// A pass option of type T (double, int64_t, unsigned or bool): its value,
/// or the text llvm::cl's parser for T would refuse.
template <typename T>
class PassOptionValue {
public:
  /// A valid value (as the option's default or a C++ caller gives it).
  PassOptionValue(T value = T()) : value(value) {}
  /// A value written as `text`, which does not parse as a T.
  static PassOptionValue unparsed(llvm::StringRef text) {
    PassOptionValue option;
    option.text = text.str();
    return option;
  }

  /// Whether the option holds a T (false: text that is not one).
  bool parsed() const { return !text.has_value(); }
  /// The value; T() for text that does not parse.
  operator T() const { return value; }
  T get() const { return value; }

  /// The value as an error message quotes it after "got ": the number
  /// (`-1`, `inf`), or the text, clipped and in quotes (`'abc'`).
  std::string describe() const {
    if (text)
      return "'" + clipForMessage(*text) + "'";
    if constexpr (std::is_same_v<T, bool>)
      return value ? "true" : "false";
    else if constexpr (std::is_floating_point_v<T>)
      return llvm::formatv("{0}", llvm::format("%g", value)).str();
    else
      return std::to_string(value);
  }

  bool operator==(const PassOptionValue &other) const {
    return value == other.value && text == other.text;
  }
  bool operator!=(const PassOptionValue &other) const {
    return !(*this == other);
  }

private:
  T value;
  std::optional<std::string> text;
};

/// Prints the value as a pipeline's text writes it back.
template <typename T>
llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                              const PassOptionValue<T> &option) {
  if (!option.parsed())
    return os << option.describe();
  if constexpr (std::is_same_v<T, bool>)
    return os << (option.get() ? "true" : "false");
  else
    return os << option.get();
}

/// The error of a flag option that holds no flag, after the pass's name:
/// "NAME must be true or false, got 'TEXT'"; none for a flag.
inline std::optional<std::string>
flagOptionError(llvm::StringRef name, const PassOptionValue<bool> &flag) {
  if (flag.parsed())
    return std::nullopt;
  return (name + " must be true or false, got " + flag.describe()).str();
}

/// `text` as llvm::cl reads a T, without printing anything: numbers as
/// strtod does (`inf`, `1e3`; not ""), integers in any base `getAsInteger(0)`
/// takes, flags as true/false/1/0 (any of cl's spellings; empty: true).
template <typename T>
std::optional<T> parsePassOptionText(llvm::StringRef text) {
  if constexpr (std::is_same_v<T, bool>) {
    if (text.empty() || text == "true" || text == "TRUE" || text == "True" ||
        text == "1")
      return true;
    if (text == "false" || text == "FALSE" || text == "False" || text == "0")
      return false;
    return std::nullopt;
  } else if constexpr (std::is_floating_point_v<T>) {
    // strtod reads "" as 0, and llvm::cl took `timeout=` for 0.
    double value = 0;
    if (text.empty())
      return std::nullopt;
    if (llvm::to_float(text, value))
      return static_cast<T>(value);
    return std::nullopt;
  } else {
    T value = 0;
    if (!text.getAsInteger(0, value))
      return value;
    return std::nullopt;
  }
}

} // namespace sched

namespace llvm::cl {
/// Keeps text that is not a T: the pass refuses it when it runs, as one
/// error line.
template <typename T>
class parser<sched::PassOptionValue<T>>
    : public basic_parser<sched::PassOptionValue<T>> {
public:
  parser(Option &option) : basic_parser<sched::PassOptionValue<T>>(option) {}
  bool parse(Option &, StringRef, StringRef arg,
             sched::PassOptionValue<T> &value) {
    if (std::optional<T> parsed = sched::parsePassOptionText<T>(arg))
      value = *parsed;
    else
      value = sched::PassOptionValue<T>::unparsed(arg);
    return false;
  }
  /// `timeout` without `=` reaches the pass as '' (llvm::cl's "requires a
  /// value!" was the three-line error).
  enum ValueExpected getValueExpectedFlagDefault() const {
    return ValueOptional;
  }
  StringRef getValueName() const override {
    if constexpr (std::is_same_v<T, bool>)
      return "bool";
    else if constexpr (std::is_floating_point_v<T>)
      return "number";
    else
      return "int";
  }
  void printOptionDiff(const Option &option,
                       const sched::PassOptionValue<T> &value,
                       const OptionValue<sched::PassOptionValue<T>> &defaultValue,
                       size_t globalWidth) const {
    this->printOptionName(option, globalWidth);
    outs() << "= " << value;
    if (defaultValue.hasValue())
      outs().indent(2) << " (default: " << defaultValue.getValue() << ")";
    outs() << "\n";
  }
};
} // namespace llvm::cl

#endif // LIB_LIMITS_PASSOPTIONVALUE_H
