#pragma once
// For tests that build a made-up CPython address space (support/address_space.hpp): a test
// parameterised by the minor version whose layout it builds with, and writing one field of a
// struct at a layout offset.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "sampler/python/layout.hpp"

namespace dapprof::fake {

// Writes `value` at `offset` of `bytes`; a field the version lacks (kAbsent) is left out.
template <typename T>
void put(std::vector<std::byte>& bytes, std::uint64_t offset, T value) {
  if (offset == sampler::python::kAbsent) return;
  ASSERT_LE(offset + sizeof value, bytes.size());
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

// TEST_P fixtures whose parameter is the minor version of CPython 3 (layout_ is its layout).
class LayoutTest : public testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    auto l = sampler::python::layout_for(3, GetParam());
    ASSERT_TRUE(l) << l.error().message;
    layout_ = *l;
  }
  sampler::python::Layout layout_;
};

}  // namespace dapprof::fake
