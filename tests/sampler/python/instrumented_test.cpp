// Reading the instruction sys.monitoring hides behind INSTRUMENTED_LINE and
// INSTRUMENTED_INSTRUCTION, from monitoring data made up in a fake address space laid out as each
// version's headers say (the live case is test_record_opcodes.py's).
#include "sampler/python/instrumented.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "support/address_space.hpp"

namespace dapprof::sampler::python {
namespace {

constexpr Address kData = 0x10000;   // the _PyCoMonitoringData
constexpr Address kLines = 0x20000;  // its `lines`
constexpr Address kPerOp = 0x30000;  // its per_instruction_opcodes
constexpr std::int64_t kUnits = 16;  // code units of the code object

struct Monitored {
  Monitored(int minor, bool sized, std::uint8_t entry_size)
      : layout(*layout_for(3, minor)), set(*OpcodeSet::of(3, minor)), entry(entry_size) {
    layout.monitoring_lines_sized = sized;
    data.resize(layout.monitoring_per_instruction_opcodes + 8);
    const Address lines_at = kLines, per_at = kPerOp;
    std::memcpy(data.data() + layout.monitoring_lines, &lines_at, 8);
    std::memcpy(data.data() + layout.monitoring_per_instruction_opcodes, &per_at, 8);
    header = sized ? 1 : 0;
    lines.assign(header + kUnits * entry, std::byte{0});
    if (sized) lines[0] = std::byte{entry};
    per_instruction.assign(kUnits, std::byte{0});
    space.map(kData, data);
    space.map(kLines, lines);
    space.map(kPerOp, per_instruction);
    info.code_units = kUnits;
  }
  std::uint8_t op(std::string_view name) const {
    return static_cast<std::uint8_t>(set.opcode(name));
  }
  void line_original(std::int64_t unit, std::string_view name) {
    lines[header + unit * entry] = std::byte{op(name)};
  }
  void instruction_original(std::int64_t unit, std::string_view name) {
    per_instruction[unit] = std::byte{op(name)};
  }
  // What the reader makes of `live` at `unit`.
  std::string_view resolve(std::int64_t unit, std::string_view live) {
    process::ProcessMemory memory(1, space);
    Objects objects(memory, layout, types);
    Instrumentation reader(objects, set);
    Instrumentation::Hidden h{&info, kData, unit, op(live)};
    reader.originals(std::span(&h, 1));
    return set.name(h.op);
  }

  Layout layout;
  const OpcodeSet& set;
  std::uint8_t entry;
  std::size_t header = 0;
  std::vector<std::byte> data, lines, per_instruction;
  fake::AddressSpace space;
  TypeAddresses types;
  CodeInfo info;
};

TEST(Instrumentation, ALineShowsTheOpcodeItReplaced312) {
  Monitored m(12, false, 2);
  m.line_original(3, "LOAD_ATTR");
  EXPECT_EQ(m.resolve(3, "INSTRUMENTED_LINE"), "LOAD_ATTR");
  // A line's instruction instrumented for INSTRUCTION events too: the chain is followed.
  m.line_original(5, "INSTRUMENTED_INSTRUCTION");
  m.instruction_original(5, "BINARY_OP");
  EXPECT_EQ(m.resolve(5, "INSTRUMENTED_LINE"), "BINARY_OP");
  m.instruction_original(7, "STORE_FAST");
  EXPECT_EQ(m.resolve(7, "INSTRUMENTED_INSTRUCTION"), "STORE_FAST");
}

TEST(Instrumentation, SizedLineEntriesOf3133AndLater) {
  // 3.13.3+: a byte of entry size first; an entry of 3 bytes for a code object of many lines.
  for (int minor : {13, 14, 15}) {
    Monitored m(minor, true, 3);
    m.line_original(4, "BINARY_OP_ADD_INT");
    EXPECT_EQ(m.resolve(4, "INSTRUMENTED_LINE"), "BINARY_OP_ADD_INT") << "3." << minor;
  }
}

TEST(Instrumentation, WhatCannotBeReadStaysTheStandIn) {
  Monitored m(13, false, 2);
  // An entry that names no instruction (a torn or stale read): shown as read.
  EXPECT_EQ(m.resolve(2, "INSTRUMENTED_LINE"), "INSTRUMENTED_LINE");
  m.line_original(2, "INSTRUMENTED_LINE");
  EXPECT_EQ(m.resolve(2, "INSTRUMENTED_LINE"), "INSTRUMENTED_LINE");
  // A unit past the code object's end.
  EXPECT_EQ(m.resolve(kUnits + 4, "INSTRUMENTED_LINE"), "INSTRUMENTED_LINE");
  // Monitoring data freed meanwhile (unmapped).
  m.line_original(6, "LOAD_FAST");
  fake::AddressSpace empty;
  m.space = empty;
  m.info.monitoring = {};
  EXPECT_EQ(m.resolve(6, "INSTRUMENTED_LINE"), "INSTRUMENTED_LINE");
}

TEST(Instrumentation, RestoredBytecodeKeepsItsInstructionBoundaries) {
  // 3.12: LOAD_ATTR has 9 inline cache entries. Hidden behind INSTRUMENTED_LINE, they would be
  // taken for instructions of their own.
  Monitored m(12, false, 2);
  const std::uint8_t load_attr = m.op("LOAD_ATTR");
  const std::uint8_t caches = m.set.caches(load_attr);
  ASSERT_GT(caches, 0);
  std::vector<std::uint8_t> code(kUnits * 2, 0);
  code[0] = m.op("RESUME");
  code[2] = m.op("INSTRUMENTED_LINE");
  m.line_original(1, "LOAD_ATTR");
  const std::size_t after = 2 + 2 + 2 * caches;
  code[after] = m.op("INSTRUMENTED_INSTRUCTION");
  m.instruction_original(static_cast<std::int64_t>(after / 2), "RETURN_VALUE");
  process::ProcessMemory memory(1, m.space);
  Objects objects(memory, m.layout, m.types);
  Instrumentation reader(objects, m.set);
  ASSERT_TRUE(reader.restore(code, m.info, kData));
  EXPECT_EQ(code[2], load_attr);
  EXPECT_EQ(code[after], m.op("RETURN_VALUE"));
  // A byte inside LOAD_ATTR's caches belongs to it.
  EXPECT_EQ(m.set.instruction_start(code, static_cast<std::int64_t>(after - 2)), 2);
  EXPECT_EQ(m.set.instruction_start(code, static_cast<std::int64_t>(after)),
            static_cast<std::int64_t>(after));
  // Unreadable monitoring data: the copy is not to be used.
  std::vector<std::uint8_t> again(kUnits * 2, 0);
  again[2] = m.op("INSTRUMENTED_LINE");
  CodeInfo other;
  EXPECT_FALSE(reader.restore(again, other, kData + 0x100000));
}

}  // namespace
}  // namespace dapprof::sampler::python
