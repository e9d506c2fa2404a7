#pragma once
// CPython str objects (PEP 393) to UTF-8. Pure functions over bytes already read from the target,
// so they can be tested without a process.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "common/result.hpp"
#include "sampler/python/layout.hpp"

namespace dapprof::sampler::python {

struct UnicodeHeader {
  std::uint64_t length = 0;  // in code points
  int kind = 1;              // bytes per code point: 1 (latin-1), 2 (UCS-2), 4 (UCS-4)
  bool compact = true;
  bool ascii = true;
  // Where the characters are: an offset from the object (compact) or, for legacy strings, a
  // pointer read from the object (data_pointer_offset).
  std::uint64_t data_offset = 0;
  bool data_is_pointer = false;
};

// Parses the header of a str object (`header` holds at least layout.unicode_compact_size bytes
// from its start). TornRead if it cannot be a valid str.
Result<UnicodeHeader> parse_unicode_header(std::span<const std::byte> header, const Layout& layout);

// Encodes `length` code points of width `kind` as UTF-8. Invalid code points (lone surrogates,
// beyond U+10FFFF) become U+FFFD.
std::string code_points_to_utf8(std::span<const std::byte> data, int kind, std::uint64_t length);

}  // namespace dapprof::sampler::python
