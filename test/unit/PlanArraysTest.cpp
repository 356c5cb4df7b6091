//===- PlanArraysTest.cpp - cutting a plan's arrays out -------------------===//
//
// The JSON plan reader parses each element of the root's arrays, and each
// instruction, on its own from the spans cutPlanArrays finds; the rest of
// the plan, as llvm::json sees it, keeps every offset.
//
//===----------------------------------------------------------------------===//

#include "lib/Import/PlanArrays.h"

#include "gtest/gtest.h"

using namespace sched;

namespace {

std::vector<std::string> elementsOf(const CutArray &array,
                                    llvm::StringRef text) {
  std::vector<std::string> out;
  for (auto [begin, end] : array.elements)
    out.push_back(text.slice(begin, end).str());
  return out;
}

TEST(PlanArrays, CutsEachRanksInstructions) {
  const std::string text =
      "{\"ranks\": [{\"rank\": 0, \"instructions\": [{\"op\": \"forward\"},\n"
      " {\"op\": \"x]}\"} ]},\n"
      " {\"instructions\": [], \"rank\": 1}],\n"
      " \"groups\": [{\"instructions\": [1]}]}";
  std::optional<PlanArrays> cut = cutPlanArrays(text);
  ASSERT_TRUE(cut.has_value());
  // Brackets in strings do not count; an empty array has no elements.
  EXPECT_EQ(
      elementsOf(cut->instructions.at(0), text),
      (std::vector<std::string>{"{\"op\": \"forward\"}", "{\"op\": \"x]}\"}"}));
  EXPECT_TRUE(cut->instructions.at(1).elements.empty());
  // Only the ranks' instructions, not an "instructions" elsewhere.
  EXPECT_EQ(cut->instructions.size(), 2u);
  // Same length, line breaks kept, the root's arrays emptied.
  ASSERT_EQ(cut->skeleton.size(), text.size());
  EXPECT_EQ(llvm::StringRef(cut->skeleton).count('\n'),
            llvm::StringRef(text).count('\n'));
  EXPECT_EQ(cut->skeleton.find("forward"), std::string::npos);
  EXPECT_EQ(cut->skeleton.find("\"rank\""), std::string::npos);
  EXPECT_EQ(cut->skeleton.find("\"groups\": [ "), text.find("\"groups\""));
}

TEST(PlanArrays, CutsTheRootArraysOnly) {
  const std::string text = "{\"groups\": [{\"name\": \"a\", \"members\": "
                           "[[0], [1]]} , {\"name\": \"[\"}],\n"
                           " \"stage_ranks\": [0, null],\n"
                           " \"verdict\": {\"list\": [{\"x\": 1}]},\n"
                           " \"mesh\": []}";
  std::optional<PlanArrays> cut = cutPlanArrays(text);
  ASSERT_TRUE(cut.has_value());
  ASSERT_EQ(cut->root.size(), 3u);
  EXPECT_EQ(
      elementsOf(cut->root["groups"], text),
      (std::vector<std::string>{"{\"name\": \"a\", \"members\": [[0], [1]]}",
                                "{\"name\": \"[\"}"}));
  EXPECT_EQ(elementsOf(cut->root["stage_ranks"], text),
            (std::vector<std::string>{"0", "null"}));
  EXPECT_TRUE(cut->root["mesh"].elements.empty());
  // An array inside another value stays in the skeleton, for llvm::json.
  EXPECT_EQ(cut->root.count("list"), 0u);
  EXPECT_NE(cut->skeleton.find("{\"list\": [{\"x\": 1}]}"), std::string::npos);
  EXPECT_EQ(text[cut->root["groups"].open], '[');
  EXPECT_EQ(text[cut->root["groups"].close], ']');
}

TEST(PlanArrays, BlanksARanksInstructions) {
  const std::string text = "{\"ranks\": [{\"instructions\": [{\"op\":\n"
                           "\"forward\"}], \"rank\": 3}]}";
  std::optional<PlanArrays> cut = cutPlanArrays(text);
  ASSERT_TRUE(cut.has_value());
  auto [begin, end] = cut->root["ranks"].elements.at(0);
  const std::string rank =
      textWithoutArray(text, begin, end, cut->instructions.at(0));
  // The rank's own text, its instructions blanked, its line break kept.
  EXPECT_EQ(rank, "{\"instructions\": [      \n          ], \"rank\": 3}");
}

TEST(PlanArrays, LeavesMalformedTextToTheParser) {
  for (const char *text :
       {"{\"ranks\": [{\"instructions\": [{}, ]}]}",
        "{\"ranks\": [{\"instructions\": [, {}]}]}",
        "{\"ranks\": [{\"instructions\": [{}]}]",
        "{\"ranks\": [{\"instructions\": [\"open]}]}",
        "{\"ranks\": [{\"instructions\": [], \"instructions\": []}]}",
        "{\"ranks\": [{\"instructions\": [}]}]}", "{\"groups\": [1, ]}",
        "{\"groups\": [], \"groups\": [1]}"})
    EXPECT_FALSE(cutPlanArrays(text).has_value()) << text;
}

} // namespace
