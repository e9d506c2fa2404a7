// The stack walker on a made-up 3.11+ frame (support/address_space.hpp): the bytes a reader
// copies from a running program can pair a frame's code object with an instruction pointer of
// another code (CPython writes the two fields of a new frame one after the other, and the reader
// may copy in between). Such a frame must be a torn read, which the sampler retries or pauses
// for, and never a frame with a line of 0. A real program hits that window too rarely for a test
// to catch it, hence the fake memory.
#include "sampler/python/stack_walk.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "sampler/process/memory.hpp"
#include "sampler/python/code_cache.hpp"
#include "sampler/python/layout.hpp"
#include "sampler/python/objects.hpp"
#include "support/address_space.hpp"
#include "support/layout_fixture.hpp"

namespace dapprof::sampler::python {
namespace {

using fake::put;
using process::ProcessMemory;

// `def f(n):\n    total = n\n    return total\n` as CPython 3.11 compiles it: five code units
// on lines 1, 2, 2, 3, 3 (first line 1), the same location table format in 3.11-3.15.
const std::vector<std::uint8_t> kLineTable = {0x80, 0x00, 0xd8, 0x0c, 0x0d, 0x80,
                                              0x45, 0xd8, 0x0b, 0x10, 0x80, 0x4c};
constexpr std::int64_t kCodeUnits = 5;

constexpr Address kFrame = 0x10000;
constexpr Address kCode = 0x20000;
constexpr Address kName = 0x30000;
constexpr Address kFile = 0x40000;
constexpr Address kTable = 0x50000;

class FakeProgram {
 public:
  explicit FakeProgram(const Layout& l) : l_(l) {
    code_.resize(l.code_size);
    put(code_, l.code_name, kName);
    put(code_, l.code_qualname, kName);
    put(code_, l.code_filename, kFile);
    put(code_, l.code_linetable, kTable);
    put(code_, l.code_firstlineno, 1);
    put(code_, l.code_firsttraceable, 0);
    put(code_, l.tuple_size, kCodeUnits);
    name_ = ascii("f");
    file_ = ascii("t.py");
    table_.resize(l.bytes_sval + kLineTable.size() + 1);
    put(table_, l.bytes_size, static_cast<std::int64_t>(kLineTable.size()));
    std::memcpy(table_.data() + l.bytes_sval, kLineTable.data(), kLineTable.size());
    frame_.resize(512);
    put(frame_, l.frame_code, kCode);
    space_.map(kFrame, frame_);
    space_.map(kCode, code_);
    space_.map(kName, name_);
    space_.map(kFile, file_);
    space_.map(kTable, table_);
  }

  // The frame's instruction pointer at `offset` bytes from the code's first instruction.
  void point_at(std::int64_t offset) {
    put(frame_, l_.frame_instr, kCode + l_.code_code_adaptive + static_cast<Address>(offset));
  }

  // The code object's size word, in code units.
  void size_word(std::int64_t units) { put(code_, l_.tuple_size, units); }

  Result<std::vector<model::Frame>> walk() {
    ProcessMemory memory(1, space_);
    const Objects objects(memory, l_, TypeAddresses{});
    CodeCache codes(objects);
    StackWalker walker(objects, codes, /*nonblocking=*/true);
    return walker.walk(kFrame);
  }

 private:
  std::vector<std::byte> ascii(const std::string& text) const {
    std::vector<std::byte> bytes(l_.unicode_compact_size + text.size() + 1);
    put(bytes, l_.unicode_length, static_cast<std::int64_t>(text.size()));
    // PyASCIIObject.state: kind 1, compact, ascii.
    put(bytes, l_.unicode_state, std::uint32_t{(1u << 2) | (1u << 5) | (1u << 6)});
    std::memcpy(bytes.data() + l_.unicode_ascii_size, text.data(), text.size());
    return bytes;
  }

  const Layout& l_;
  std::vector<std::byte> frame_, code_, name_, file_, table_;
  fake::AddressSpace space_;
};

class StackWalkTorn : public fake::LayoutTest {};

TEST_P(StackWalkTorn, AnInstructionInsideTheCodeGivesItsLine) {
  FakeProgram program(layout_);
  for (const auto& [offset, line] : {std::pair{2, 2}, {4, 2}, {8, 3}}) {
    program.point_at(offset);
    auto frames = program.walk();
    ASSERT_TRUE(frames) << frames.error().message;
    ASSERT_EQ(frames->size(), 1u);
    EXPECT_EQ((*frames)[0].function, "f");
    EXPECT_EQ((*frames)[0].line, line) << "offset " << offset;
  }
}

TEST_P(StackWalkTorn, AFrameNotStartedYetIsLeftOut) {
  FakeProgram program(layout_);
  program.point_at(-2);  // 3.11/3.12 start a frame one code unit before its first instruction
  auto frames = program.walk();
  ASSERT_TRUE(frames) << frames.error().message;
  EXPECT_TRUE(frames->empty());
}

TEST_P(StackWalkTorn, AnInstructionOfAnotherCodeIsATornRead) {
  FakeProgram program(layout_);
  for (const std::int64_t offset : {kCodeUnits * 2 + 2, std::int64_t{0x4000}, std::int64_t{-64}}) {
    program.point_at(offset);
    auto frames = program.walk();
    ASSERT_FALSE(frames) << "offset " << offset << " was read as a frame";
    EXPECT_EQ(frames.code(), ErrorCode::TornRead) << frames.error().message;
  }
}

// A size word no code object has (the fuzzer's, once, overflowed the offset check) is a torn read
// too, rather than a bound that any instruction pointer passes or an allocation of that size.
TEST_P(StackWalkTorn, ACodeObjectOfAbsurdSizeIsATornRead) {
  FakeProgram program(layout_);
  program.point_at(2);
  for (const std::int64_t units : {std::int64_t{1} << 62, std::numeric_limits<std::int64_t>::max(),
                                   std::int64_t{-1}, (std::int64_t{1} << 28) + 1}) {
    program.size_word(units);
    auto frames = program.walk();
    ASSERT_FALSE(frames) << units << " code units were taken for a code object's";
    EXPECT_EQ(frames.code(), ErrorCode::TornRead) << frames.error().message;
  }
  program.size_word(kCodeUnits);
  ASSERT_TRUE(program.walk());
}

INSTANTIATE_TEST_SUITE_P(Versions, StackWalkTorn, ::testing::Values(11, 12, 13, 14),
                         [](const auto& version) { return "3_" + std::to_string(version.param); });

}  // namespace
}  // namespace dapprof::sampler::python
