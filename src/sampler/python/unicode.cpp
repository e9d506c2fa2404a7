#include "sampler/python/unicode.hpp"

#include <cstring>

namespace dapprof::sampler::python {
namespace {

constexpr std::uint64_t kMaxLength = 1 << 20;  // longer names or paths mean a torn read

void append_utf8(std::string& out, std::uint32_t cp) {
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

Result<UnicodeHeader> parse_unicode_header(std::span<const std::byte> header, const Layout& l) {
  if (header.size() < l.unicode_compact_size) {
    return Error{"str header: short buffer", ErrorCode::TornRead};
  }
  std::int64_t length;
  std::uint32_t state;
  std::memcpy(&length, header.data() + l.unicode_length, sizeof length);
  std::memcpy(&state, header.data() + l.unicode_state, sizeof state);
  UnicodeHeader h;
  // PyASCIIObject.state bit-field, identical in 3.8-3.15: interned:2, kind:3, compact:1,
  // ascii:1 (then ready or statically_allocated), allocated from bit 0 by GCC on x86-64.
  h.kind = static_cast<int>((state >> 2) & 7);
  h.compact = (state >> 5) & 1;
  h.ascii = (state >> 6) & 1;
  if (length < 0 || static_cast<std::uint64_t>(length) > kMaxLength ||
      (h.kind != 1 && h.kind != 2 && h.kind != 4) || (h.ascii && h.kind != 1)) {
    return Error{"not a valid str object", ErrorCode::TornRead};
  }
  h.length = static_cast<std::uint64_t>(length);
  if (h.compact) {
    h.data_offset = h.ascii ? l.unicode_ascii_size : l.unicode_compact_size;
  } else {
    // Legacy (non-compact) strings keep their characters behind PyUnicodeObject.data.any, the
    // first field after the PyCompactUnicodeObject part.
    h.data_offset = l.unicode_compact_size;
    h.data_is_pointer = true;
  }
  return h;
}

std::string code_points_to_utf8(std::span<const std::byte> data, int kind, std::uint64_t length) {
  std::string out;
  const std::uint64_t n =
      std::min<std::uint64_t>(length, data.size() / static_cast<unsigned>(kind));
  out.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint32_t cp = 0;
    const std::byte* p = data.data() + i * static_cast<unsigned>(kind);
    if (kind == 1) {
      cp = static_cast<std::uint8_t>(*p);
    } else if (kind == 2) {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      cp = v;
    } else {
      std::memcpy(&cp, p, 4);
    }
    append_utf8(out, cp);
  }
  return out;
}

}  // namespace dapprof::sampler::python
