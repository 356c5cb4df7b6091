//===- MemoryLimitTest.cpp - memory limits read exactly -------------------===//
//
// A limit is the decimal as written: millionths and bytes are the floor of
// that decimal, never of the nearest double; bad text is an error.
//
//===----------------------------------------------------------------------===//

#include "lib/Verify/MemoryLimit.h"

#include "gtest/gtest.h"

using namespace sched;

namespace {

constexpr int64_t kMillionths = 1'000'000;

/// floor(limit x perUnit) of `text`, as a decimal string (gtest prints no
/// __int128).
std::string scaled(llvm::StringRef text, int64_t perUnit) {
  llvm::Expected<MemoryLimit> limit = MemoryLimit::parse(text);
  if (!limit)
    return "error: " + llvm::toString(limit.takeError());
  if (limit->isUnbounded())
    return "unbounded";
  __int128 value = limit->floorScaled(perUnit);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + value % 10));
    value /= 10;
  } while (value > 0);
  return digits;
}

TEST(MemoryLimit, DecimalsAreExact) {
  EXPECT_EQ(scaled("1.9", kMillionths), "1900000");
  EXPECT_EQ(scaled("1.9999995", kMillionths), "1999999");
  EXPECT_EQ(scaled("4", kMillionths), "4000000");
  EXPECT_EQ(scaled("007.50", kMillionths), "7500000");
  EXPECT_EQ(scaled("0.5E-3", kMillionths), "500");
  EXPECT_EQ(scaled(".25", kMillionths), "250000");
  EXPECT_EQ(scaled("3.", kMillionths), "3000000");
  EXPECT_EQ(scaled("+2e+1", kMillionths), "20000000");
  EXPECT_EQ(scaled("1e-400", kMillionths), "0");
  EXPECT_EQ(scaled("0", 1), "0");
}

TEST(MemoryLimit, BytesAreExactPastDoubles) {
  EXPECT_EQ(scaled("9007199254740993", 1), "9007199254740993");
  EXPECT_EQ(scaled("9223372036854775807", 1), "9223372036854775807");
  EXPECT_EQ(scaled("1e13", 1), "10000000000000");
  EXPECT_EQ(scaled("80e9", 1), "80000000000");
  EXPECT_EQ(scaled("1.5", 1), "1");
  // Far past anything a schedule holds: no bound.
  EXPECT_EQ(scaled("1e40", 1), "unbounded");
  EXPECT_EQ(scaled("1e400", 1), "unbounded");
  // Just under the old 2^126 millionths, one more digit overflowed 128 bits
  // (fuzz/regressions/pass-options/memory-limit-34-digits).
  EXPECT_EQ(scaled("5666666666666666666666666666666666", 1), "unbounded");
  EXPECT_EQ(scaled(std::string(2000, '9'), 1), "unbounded");
  EXPECT_EQ(scaled("inf", 1), "unbounded");
  EXPECT_EQ(scaled("Infinity", 1), "unbounded");
}

TEST(MemoryLimit, BadTextIsAnError) {
  for (const char *text : {"", " ", "-1", "-0.5", "nan", "e5", ".", "1e", "1e+",
                           "1.2.3", "4GB", "1 2", "0x10", "--1", "+"})
    EXPECT_EQ(scaled(text, 1).rfind("error: '", 0), 0u) << text;
}

TEST(MemoryLimit, DoublesMeanTheirShortestDecimal) {
  llvm::Expected<MemoryLimit> limit = MemoryLimit::fromDouble(1.9);
  ASSERT_TRUE(static_cast<bool>(limit));
  EXPECT_EQ(limit->floorScaled(kMillionths), 1'900'000);
  EXPECT_EQ(limit->str(), "1.9");
  limit = MemoryLimit::fromDouble(141e9);
  ASSERT_TRUE(static_cast<bool>(limit));
  EXPECT_EQ(limit->floorScaled(1), 141'000'000'000);
  EXPECT_FALSE(static_cast<bool>(MemoryLimit::fromDouble(-1)));
  llvm::consumeError(MemoryLimit::fromDouble(-1).takeError());
  EXPECT_EQ(MemoryLimit::fromInteger(4096).floorScaled(1), 4096);
  EXPECT_EQ(MemoryLimit::fromInteger(4096).str(), "4096");
}

} // namespace
