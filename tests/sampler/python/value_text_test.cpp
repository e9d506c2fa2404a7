// How dump --locals writes values, against what Python's repr() prints for the same values
// (each expected string below is repr() of the value in the comment, as CPython 3.11 prints it).
#include "sampler/python/value_text.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace dapprof::sampler::python {
namespace {

TEST(ValueText, StrQuotesAndEscapesAsRepr) {
  EXPECT_EQ(quoted_str("plain", 5), "'plain'");
  EXPECT_EQ(quoted_str("it's", 4), "\"it's\"");              // "it's"
  EXPECT_EQ(quoted_str("it's \"q\"", 8), "'it\\'s \"q\"'");  // 'it\'s "q"'
  EXPECT_EQ(quoted_str("a\nb\tc\\", 6), "'a\\nb\\tc\\\\'");  // 'a\nb\tc\\'
  EXPECT_EQ(quoted_str(std::string("\x01\x7f", 2), 2), "'\\x01\\x7f'");
  EXPECT_EQ(quoted_str("\xc3\xbc", 1), "'\xc3\xbc'");  // printable non-ASCII is kept
}

TEST(ValueText, LongStrIsCutAtACodePointWithItsLength) {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "\xc3\xbc";  // 60 code points of two bytes
  const std::string shown = quoted_str(text, 1000);
  std::string expected = "'";
  for (std::size_t i = 0; i < kShownChars; ++i) expected += "\xc3\xbc";
  EXPECT_EQ(shown, expected + "'... (1000 chars)");
}

TEST(ValueText, BytesAsRepr) {
  const std::vector<std::uint8_t> b{0, 'a', 'b', '\'', 0xff};
  EXPECT_EQ(quoted_bytes(b, b.size()), "b\"\\x00ab'\\xff\"");  // b"\x00ab'\xff"
  const std::vector<std::uint8_t> many(kShownChars, 'z');
  EXPECT_EQ(quoted_bytes(many, 4096), "b'" + std::string(kShownChars, 'z') + "'... (4096 bytes)");
}

TEST(ValueText, FloatsAsRepr) {
  EXPECT_EQ(float_text(1.0), "1.0");
  EXPECT_EQ(float_text(1.5), "1.5");
  EXPECT_EQ(float_text(0.1), "0.1");
  EXPECT_EQ(float_text(-2.0), "-2.0");
  EXPECT_EQ(float_text(1e-300), "1e-300");
  EXPECT_EQ(float_text(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(float_text(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(float_text(std::nan("")), "nan");
}

TEST(ValueText, IntsFromDigits) {
  EXPECT_EQ(int_text({}, false), "0");
  const std::vector<std::uint32_t> seven{7};
  EXPECT_EQ(int_text(seven, true), "-7");
  // 2**100 = digits (0, 0, 0, 1 << 10) of 30 bits.
  const std::vector<std::uint32_t> two_100{0, 0, 0, 1u << 10};
  EXPECT_EQ(int_text(two_100, false), "1267650600228229401496703205376");
  // 2**120 - 1: four full digits, the largest printed exactly.
  const std::vector<std::uint32_t> full(4, (1u << 30) - 1);
  EXPECT_EQ(int_text(full, false), "1329227995784915872903807060280344575");
  // 2**150: 46 decimal digits, given as a size.
  const std::vector<std::uint32_t> two_150{0, 0, 0, 0, 0, 1};
  EXPECT_EQ(int_text(two_150, false), "<int of about 46 digits>");
  // Leading zero digits do not count.
  const std::vector<std::uint32_t> padded{5, 0, 0, 0, 0, 0};
  EXPECT_EQ(int_text(padded, false), "5");
}

}  // namespace
}  // namespace dapprof::sampler::python
