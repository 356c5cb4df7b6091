//===- ReportTest.cpp - the plan report's wrapping, table and units -------===//
//
// wrapText keeps lines within the width and a number with its unit, a
// TextTable sizes columns to their cells and drops empty ones, and the
// report's durations carry one unit each.
//
//===----------------------------------------------------------------------===//

#include "lib/Report/PlanReport.h"
#include "lib/Report/TextTable.h"
#include "lib/Report/WrappedText.h"

#include "llvm/ADT/StringExtras.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace sched;

namespace {

std::vector<std::string> lines(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, '\n');
  std::vector<std::string> out;
  for (llvm::StringRef part : parts)
    out.push_back(part.str());
  return out;
}

TEST(WrappedText, LinesFitAndKeepTheirWords) {
  const std::string text =
      "why: PP: the best layout without it is 18.7% slower; most of the gap "
      "is tensor-parallel communication (2.41 s more)";
  const std::string wrapped = wrapText(text, 40, "  ");
  std::vector<std::string> got = lines(wrapped);
  ASSERT_EQ(got.back(), "");
  got.pop_back();
  ASSERT_GT(got.size(), 2u);
  std::string joined;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_LE(got[i].size(), 40u) << got[i];
    if (i > 0) {
      EXPECT_TRUE(llvm::StringRef(got[i]).starts_with("  ")) << got[i];
      joined += " ";
    }
    joined += llvm::StringRef(got[i]).trim().str();
  }
  EXPECT_EQ(joined, text);
}

TEST(WrappedText, NeverSplitsANumberFromItsUnit) {
  // "2.41" ends at column 39 of 40: the unit would start the next line
  // alone, so the number goes with it.
  const std::string text = std::string(34, 'a') + " 2.41 s more";
  const std::vector<std::string> got = lines(wrapText(text, 40, "  "));
  EXPECT_EQ(got[0], std::string(34, 'a'));
  EXPECT_EQ(got[1], "  2.41 s more");
}

TEST(WrappedText, ALongWordStandsAlone) {
  const std::string path(60, 'p');
  const std::vector<std::string> got =
      lines(wrapText("wrote " + path + " (verified)", 40, "  "));
  EXPECT_EQ(got[0], "wrote");
  EXPECT_EQ(got[1], "  " + path);
  EXPECT_EQ(got[2], "  (verified)");
}

TEST(WrappedText, KeepsALeadingIndent) {
  EXPECT_EQ(wrapText("  why (a): b", 40, "    "), "  why (a): b\n");
  EXPECT_EQ(wrapText("", 40, "  "), "\n");
}

TEST(TextTable, ColumnsFitTheirCellsAndEmptyOnesGo) {
  TextTable table;
  table.addColumn("#");
  table.addColumn("schedule", "", TextTable::Align::Left);
  table.addColumn("step", "s");
  table.addColumn("note", "", TextTable::Align::Left);
  table.addRow({"1", "interleaved-1f1b", "16.37", ""});
  table.addRow({"10", "1f1b", "6.4", ""});
  std::string text;
  llvm::raw_string_ostream os(text);
  table.print(os);
  EXPECT_EQ(text, " # schedule          step\n"
                  "                        s\n"
                  " 1 interleaved-1f1b 16.37\n"
                  "10 1f1b               6.4\n");
  EXPECT_EQ(table.width(), 25u);
}

TEST(PlanReport, DurationsCarryOneUnit) {
  EXPECT_EQ(formatDuration(16.371), "16.37 s");
  EXPECT_EQ(formatDuration(0.5722), "572.2 ms");
  EXPECT_EQ(formatDuration(85e-6), "85 us");
  EXPECT_EQ(formatDuration(1234.4), "1,234 s");
  EXPECT_EQ(formatDuration(0), "0 s");
}

TEST(PlanReport, HeadroomIsTheUsableMemoryLeft) {
  Candidate c;
  c.memory.peak = 76.1e9;
  c.memory.limit = 77.2e9;
  EXPECT_NEAR(memoryHeadroom(c), 1.1 / 77.2, 1e-12);
  EXPECT_LT(memoryHeadroom(c), kLowMemoryHeadroom);
  c.memory.limit = 0;
  EXPECT_TRUE(std::isnan(memoryHeadroom(c)));
}

} // namespace
