// The .eh_frame_hdr header reader shared by the symbolizer and the unwinder.
#include "sampler/native/eh_frame_hdr.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace dapprof::sampler::native {
namespace {

std::vector<std::byte> bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

TEST(EhFrameHdr, TheUsualEncodingsGiveTheTableAfterTwelveBytes) {
  // pcrel|sdata4 pointer, udata4 count (2), datarel|sdata4 table of two pairs.
  const auto hdr = bytes({1, 0x1b, 0x03, 0x3b, 0, 0, 0, 0,  2,  0,  0,  0,  1,  2,
                          3, 4,    5,    6,    7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  const auto index = parse_eh_frame_hdr(hdr);
  ASSERT_TRUE(index);
  EXPECT_EQ(index->table_offset, 12u);
  EXPECT_EQ(index->count, 2u);
}

TEST(EhFrameHdr, AnEightByteCountMovesTheTable) {
  const auto hdr =
      bytes({1, 0x1b, 0x04, 0x3b, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8});
  const auto index = parse_eh_frame_hdr(hdr);
  ASSERT_TRUE(index);
  EXPECT_EQ(index->table_offset, 16u);
  EXPECT_EQ(index->count, 1u);
}

TEST(EhFrameHdr, WhatTheTableSearchCannotReadIsRefused) {
  // A count larger than the section, another version, an omitted count, another table encoding,
  // a header cut short.
  EXPECT_FALSE(parse_eh_frame_hdr(bytes({1, 0x1b, 0x03, 0x3b, 0, 0, 0,  0,  3,  0,  0,  0,  1, 2, 3,
                                         4, 5,    6,    7,    8, 9, 10, 11, 12, 13, 14, 15, 16})));
  EXPECT_FALSE(parse_eh_frame_hdr(bytes({2, 0x1b, 0x03, 0x3b, 0, 0, 0, 0, 0, 0, 0, 0})));
  EXPECT_FALSE(parse_eh_frame_hdr(bytes({1, 0x1b, 0xff, 0x3b, 0, 0, 0, 0, 0, 0, 0, 0})));
  EXPECT_FALSE(parse_eh_frame_hdr(bytes({1, 0x1b, 0x03, 0x03, 0, 0, 0, 0, 0, 0, 0, 0})));
  EXPECT_FALSE(parse_eh_frame_hdr(bytes({1, 0x1b, 0x03, 0x3b, 0, 0, 0, 0, 0})));
  EXPECT_FALSE(parse_eh_frame_hdr(bytes({1, 0x1b})));
}

}  // namespace
}  // namespace dapprof::sampler::native
