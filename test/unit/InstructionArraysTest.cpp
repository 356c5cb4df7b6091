//===- InstructionArraysTest.cpp - cutting a plan's instructions out ------===//
//
// The JSON plan reader parses each instruction on its own from the spans
// cutInstructionArrays finds; the rest of the plan, as llvm::json sees it,
// keeps every offset.
//
//===----------------------------------------------------------------------===//

#include "lib/Import/InstructionArrays.h"

#include "gtest/gtest.h"

using namespace sched;

namespace {

std::vector<std::string> elementsOf(const InstructionArrays &cut,
                                    llvm::StringRef text, size_t rank) {
  std::vector<std::string> out;
  for (auto [begin, end] : cut.elements.at(rank))
    out.push_back(text.slice(begin, end).str());
  return out;
}

TEST(InstructionArrays, CutsEachRanksInstructions) {
  const std::string text =
      "{\"ranks\": [{\"rank\": 0, \"instructions\": [{\"op\": \"forward\"},\n"
      " {\"op\": \"x]}\"} ]},\n"
      " {\"instructions\": [], \"rank\": 1}],\n"
      " \"groups\": [{\"instructions\": [1]}]}";
  std::optional<InstructionArrays> cut = cutInstructionArrays(text);
  ASSERT_TRUE(cut.has_value());
  // Brackets in strings do not count; an empty array has no elements.
  EXPECT_EQ(
      elementsOf(*cut, text, 0),
      (std::vector<std::string>{"{\"op\": \"forward\"}", "{\"op\": \"x]}\"}"}));
  EXPECT_TRUE(cut->elements.at(1).empty());
  // Only the ranks' arrays are cut, not an "instructions" elsewhere.
  EXPECT_EQ(cut->elements.size(), 2u);
  // Same length, line breaks kept, the cut arrays emptied.
  ASSERT_EQ(cut->skeleton.size(), text.size());
  EXPECT_EQ(llvm::StringRef(cut->skeleton).count('\n'),
            llvm::StringRef(text).count('\n'));
  EXPECT_EQ(cut->skeleton.find("forward"), std::string::npos);
  EXPECT_NE(cut->skeleton.find("\"groups\": [{\"instructions\": [1]}]"),
            std::string::npos);
}

TEST(InstructionArrays, LeavesMalformedTextToTheParser) {
  for (const char *text :
       {"{\"ranks\": [{\"instructions\": [{}, ]}]}",
        "{\"ranks\": [{\"instructions\": [, {}]}]}",
        "{\"ranks\": [{\"instructions\": [{}]}]",
        "{\"ranks\": [{\"instructions\": [\"open]}]}",
        "{\"ranks\": [{\"instructions\": [], \"instructions\": []}]}",
        "{\"ranks\": [{\"instructions\": [}]}]}"})
    EXPECT_FALSE(cutInstructionArrays(text).has_value()) << text;
}

} // namespace
