#pragma once
// How `dump --locals` writes the values it reads: as Python would print them where that is
// short (repr of numbers, quoted strings and bytes), cut after a few dozen characters.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace dapprof::sampler::python {

inline constexpr std::size_t kShownChars = 48;

// A str as Python's repr() quotes it, from its first code points (UTF-8) and its full length
// in code points: "'text'", or "'first chars'... (1000 chars)" when longer than shown.
std::string quoted_str(std::string_view utf8, std::size_t length);
// The same for bytes: "b'\x00ab'", "b'...'... (4096 bytes)".
std::string quoted_bytes(std::span<const std::uint8_t> shown, std::size_t length);
// repr() of a float: shortest round-trip digits, ".0" on integral values, inf, nan.
std::string float_text(double value);
// An int from its 30-bit digits, least significant first: exact up to 120 bits, its number of
// decimal digits beyond.
std::string int_text(std::span<const std::uint32_t> digits, bool negative);

}  // namespace dapprof::sampler::python
