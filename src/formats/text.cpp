#include "formats/text.hpp"

#include <cstdint>

namespace dapprof::formats {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Decodes one code point at text[i]; returns its length, or 0 if the sequence is invalid.
std::size_t decode(std::string_view text, std::size_t i, char32_t& cp) {
  const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(text[k]); };
  const std::uint8_t b0 = byte(i);
  std::size_t len = 0;
  char32_t min = 0;
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

template <typename OnChar>
std::string transcode(std::string_view text, OnChar on_char) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t len = decode(text, i, cp);
    if (len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    on_char(out, cp, text.substr(i, len));
    i += len;
  }
  return out;
}

}  // namespace

std::string valid_utf8(std::string_view text) {
  return transcode(text, [](std::string& out, char32_t, std::string_view bytes) { out += bytes; });
}

std::string xml_escape(std::string_view text) {
  return transcode(text, [](std::string& out, char32_t cp, std::string_view bytes) {
    switch (cp) {
      case '&':
        out += "&amp;";
        return;
      case '<':
        out += "&lt;";
        return;
      case '>':
        out += "&gt;";
        return;
      case '"':
        out += "&quot;";
        return;
      case '\'':
        out += "&apos;";
        return;
      case '\t':
      case '\n':
      case '\r':
        out += bytes;
        return;
      default:
        break;
    }
    // XML 1.0 forbids other C0 controls and the two non-characters U+FFFE/U+FFFF.
    if (cp < 0x20 || cp == 0xFFFE || cp == 0xFFFF) {
      out += kReplacement;
    } else {
      out += bytes;
    }
  });
}

}  // namespace dapprof::formats
