#include "sampler/python/value_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

namespace dapprof::sampler::python {
namespace {

constexpr int kDigitBits = 30;  // CPython's PyLong_SHIFT on 64-bit builds
// GCC's and Clang's 128-bit integer: ints of up to four digits print exactly.
constexpr std::uint32_t kDigitMask = (1u << kDigitBits) - 1;
__extension__ using Uint128 = unsigned __int128;

// One byte of a quoted literal, escaped as Python does; bytes >= 0x80 are kept when `utf8`
// (parts of a code point of a str), written as \xNN otherwise (bytes).
void append_escaped(std::string& out, unsigned char c, char quote, bool utf8) {
  switch (c) {
    case '\\':
      out += "\\\\";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      break;
  }
  if (c == static_cast<unsigned char>(quote)) {
    out += '\\';
    out += quote;
  } else if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8)) {
    out += fmt::format("\\x{:02x}", c);
  } else {
    out += static_cast<char>(c);
  }
}

// Python's choice: single quotes unless the text has one and no double quote.
char quote_for(std::string_view text) {
  const bool single = text.find('\'') != std::string_view::npos;
  const bool dbl = text.find('"') != std::string_view::npos;
  return single && !dbl ? '"' : '\'';
}

std::string quoted(std::string_view text, bool utf8, std::string_view prefix) {
  const char quote = quote_for(text);
  std::string out(prefix);
  out += quote;
  for (const char c : text) append_escaped(out, static_cast<unsigned char>(c), quote, utf8);
  out += quote;
  return out;
}

std::string decimal(Uint128 v) {
  if (v == 0) return "0";
  std::string s;
  while (v) {
    s += static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  }
  std::reverse(s.begin(), s.end());
  return s;
}

}  // namespace

std::string quoted_str(std::string_view utf8, std::size_t length) {
  // `utf8` holds at most kShownChars code points; cut further only at a code point boundary.
  std::size_t shown = 0, end = 0;
  while (end < utf8.size() && shown < kShownChars) {
    ++end;
    while (end < utf8.size() && (static_cast<unsigned char>(utf8[end]) & 0xC0) == 0x80) ++end;
    ++shown;
  }
  std::string out = quoted(utf8.substr(0, end), true, "");
  if (length > shown) out += fmt::format("... ({} chars)", length);
  return out;
}

std::string quoted_bytes(std::span<const std::uint8_t> shown, std::size_t length) {
  const std::size_t n = std::min(shown.size(), kShownChars);
  const std::string_view text(reinterpret_cast<const char*>(shown.data()), n);
  std::string out = quoted(text, false, "b");
  if (length > n) out += fmt::format("... ({} bytes)", length);
  return out;
}

std::string float_text(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  std::string s = fmt::format("{}", value);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string int_text(std::span<const std::uint32_t> digits, bool negative) {
  std::size_t used = digits.size();  // without leading zero digits
  while (used > 0 && (digits[used - 1] & kDigitMask) == 0) --used;
  digits = digits.first(used);
  if (used * kDigitBits > 120) {
    // An int of `bits` bits has floor(bits * log10(2)) + 1 decimal digits, give or take one.
    const auto bits = (used - 1) * kDigitBits + std::bit_width(digits.back() & kDigitMask);
    const auto decimals = static_cast<std::size_t>(static_cast<double>(bits) * 0.30103) + 1;
    return fmt::format("<int of about {} digits>", decimals);
  }
  Uint128 v = 0;
  for (std::size_t i = digits.size(); i-- > 0;) {
    v = (v << kDigitBits) | (digits[i] & kDigitMask);
  }
  return (negative && v != 0 ? "-" : "") + decimal(v);
}

}  // namespace dapprof::sampler::python
