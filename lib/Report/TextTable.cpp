//===- TextTable.cpp - a text table with a unit per column ----------------===//

#include "lib/Report/TextTable.h"

#include <fmt/format.h>

#include <algorithm>

using namespace sched;

void TextTable::addColumn(llvm::StringRef heading, llvm::StringRef unit,
                          Align align) {
  columns.push_back({heading.str(), unit.str(), align});
}

void TextTable::addRow(std::vector<std::string> cells) {
  cells.resize(columns.size());
  rows.push_back(std::move(cells));
}

std::vector<size_t> TextTable::widths() const {
  std::vector<size_t> result(columns.size(), 0);
  for (size_t c = 0; c < columns.size(); ++c) {
    size_t cells = 0;
    for (const std::vector<std::string> &row : rows)
      cells = std::max(cells, row[c].size());
    if (cells == 0)
      continue;
    result[c] =
        std::max({cells, columns[c].heading.size(), columns[c].unit.size()});
  }
  return result;
}

/// One line of the table: each non-empty column's text aligned in its
/// width, a space between columns, trailing spaces trimmed.
static std::string formatLine(const std::vector<size_t> &widths,
                              const std::vector<std::string> &texts,
                              const std::vector<TextTable::Align> &aligns) {
  std::string line;
  for (size_t c = 0; c < widths.size(); ++c) {
    if (widths[c] == 0)
      continue;
    if (!line.empty())
      line += ' ';
    line += aligns[c] == TextTable::Align::Left
                ? fmt::format("{:<{}}", texts[c], widths[c])
                : fmt::format("{:>{}}", texts[c], widths[c]);
  }
  line.erase(line.find_last_not_of(' ') + 1);
  return line;
}

void TextTable::print(llvm::raw_ostream &os, llvm::StringRef indent) const {
  const std::vector<size_t> sizes = widths();
  std::vector<Align> aligns;
  std::vector<std::string> headings, units;
  bool anyUnit = false;
  for (const Column &column : columns) {
    aligns.push_back(column.align);
    headings.push_back(column.heading);
    units.push_back(column.unit);
    anyUnit |= !column.unit.empty();
  }
  os << indent << formatLine(sizes, headings, aligns) << "\n";
  if (anyUnit)
    os << indent << formatLine(sizes, units, aligns) << "\n";
  for (const std::vector<std::string> &row : rows)
    os << indent << formatLine(sizes, row, aligns) << "\n";
}

size_t TextTable::width() const {
  size_t total = 0, used = 0;
  for (size_t w : widths())
    if (w > 0) {
      total += w;
      ++used;
    }
  return used ? total + used - 1 : 0;
}
