//===- TextTable.h - a text table with a unit per column --------*- C++ -*-===//
//
// A table of text cells printed in columns as wide as their widest cell:
// a heading row, a row of units under it (one unit per column: "s", "%",
// "GB"), then the rows. Columns left empty in every row are left out.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_REPORT_TEXTTABLE_H
#define LIB_REPORT_TEXTTABLE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace sched {

class TextTable {
public:
  enum class Align { Left, Right };

  /// Adds a column; `unit` is printed under the heading ("" for none).
  void addColumn(llvm::StringRef heading, llvm::StringRef unit = "",
                 Align align = Align::Right);
  /// Adds a row, one cell per column (missing cells are empty).
  void addRow(std::vector<std::string> cells);

  /// Prints the table, each line starting with `indent`; the units row only
  /// when some column has a unit. Trailing spaces are trimmed.
  void print(llvm::raw_ostream &os, llvm::StringRef indent = "") const;
  /// The width of the widest printed line, indent excluded.
  size_t width() const;

private:
  struct Column {
    std::string heading;
    std::string unit;
    Align align;
  };
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;

  /// Each column's width; 0 for a column empty in every row.
  std::vector<size_t> widths() const;
};

} // namespace sched

#endif // LIB_REPORT_TEXTTABLE_H
