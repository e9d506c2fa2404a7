#pragma once
// Text hygiene for writers: names read from a process's memory may hold any bytes.
#include <string>
#include <string_view>

namespace dapprof::formats {

// Valid UTF-8 with every invalid sequence replaced by U+FFFD.
std::string valid_utf8(std::string_view text);
// Escaped for XML 1.0 text and attribute values (also valid UTF-8, no forbidden control chars).
std::string xml_escape(std::string_view text);

}  // namespace dapprof::formats
