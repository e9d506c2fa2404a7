// str decoding against the memory of real str objects (ASCII, latin-1, UCS-2, UCS-4) copied out of
// every interpreter with ctypes.
#include "sampler/python/unicode.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "interpreter_data.hpp"
#include "sampler/python/layout.hpp"

namespace dapprof::sampler::python {
namespace {

using testing::from_hex;
using testing::interpreter_data;

TEST(Unicode, DecodesRealStrObjects) {
  for (const auto& interp : interpreter_data()["interpreters"]) {
    SCOPED_TRACE(interp["label"].get<std::string>());
    const std::string version = interp["version"];
    auto layout = layout_for(3, std::stoi(version.substr(2)));
    ASSERT_TRUE(layout) << layout.message();
    std::set<int> kinds;
    for (const auto& s : interp["strings"]) {
      const std::string text = s["text"];
      auto object = from_hex(s["object"]);
      object.resize(std::max<std::size_t>(object.size(), layout->unicode_compact_size));
      const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(object.data()),
                                             object.size());
      auto header = parse_unicode_header(bytes, *layout);
      ASSERT_TRUE(header) << text << ": " << header.message();
      ASSERT_TRUE(header->compact);
      kinds.insert(header->kind);
      const auto data = bytes.subspan(header->data_offset);
      EXPECT_EQ(code_points_to_utf8(data, header->kind, header->length), text);
    }
    EXPECT_EQ(kinds, (std::set<int>{1, 2, 4}));
  }
}

TEST(Unicode, InvalidCodePointsBecomeReplacementCharacters) {
  const std::uint32_t cps[] = {0x41, 0xD800, 0x110000, 0x1F600};
  std::vector<std::byte> data(sizeof cps);
  std::memcpy(data.data(), cps, sizeof cps);
  EXPECT_EQ(code_points_to_utf8(data, 4, 4), "A\xEF\xBF\xBD\xEF\xBF\xBD\xF0\x9F\x98\x80");
  // A length beyond the data is clamped, never read past the buffer.
  EXPECT_EQ(code_points_to_utf8(std::span(data).first(4), 4, 1000), "A");
}

TEST(Unicode, RejectsImpossibleHeaders) {
  auto layout = layout_for(3, 12);
  ASSERT_TRUE(layout);
  std::vector<std::byte> header(layout->unicode_compact_size);
  const std::int64_t length = 3;
  std::memcpy(header.data() + layout->unicode_length, &length, sizeof length);
  const std::uint32_t bad_kind = 3 << 2 | 1 << 5;
  std::memcpy(header.data() + layout->unicode_state, &bad_kind, sizeof bad_kind);
  auto h = parse_unicode_header(header, *layout);
  ASSERT_FALSE(h);
  EXPECT_EQ(h.code(), ErrorCode::TornRead);
  const std::int64_t huge = std::int64_t{1} << 40;
  const std::uint32_t ascii = 1 << 2 | 1 << 5 | 1 << 6;
  std::memcpy(header.data() + layout->unicode_length, &huge, sizeof huge);
  std::memcpy(header.data() + layout->unicode_state, &ascii, sizeof ascii);
  EXPECT_FALSE(parse_unicode_header(header, *layout));
}

}  // namespace
}  // namespace dapprof::sampler::python
