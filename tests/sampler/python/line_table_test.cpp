// The three line-table decoders against the line CPython itself gives every instruction of real
// code objects (sample functions and the whole threading module) under each interpreter.
#include "sampler/python/line_table.hpp"

#include <gtest/gtest.h>

#include "interpreter_data.hpp"

namespace dapprof::sampler::python {
namespace {

using testing::from_hex;
using testing::interpreter_data;

LineTableFormat format_of(const std::string& name) {
  if (name == "lnotab") return LineTableFormat::Lnotab;
  if (name == "linetable310") return LineTableFormat::Linetable310;
  return LineTableFormat::Locations311;
}

TEST(LineTable, MatchesCPythonOnEveryInstruction) {
  const auto& data = interpreter_data();
  ASSERT_FALSE(data["interpreters"].empty());
  for (const auto& interp : data["interpreters"]) {
    SCOPED_TRACE(interp["label"].get<std::string>());
    std::size_t checked = 0;
    std::set<std::string> formats;
    for (const auto& fn : interp["functions"]) {
      const auto table = from_hex(fn["table"]);
      const auto format = format_of(fn["format"]);
      formats.insert(fn["format"]);
      const int first = fn["first_line"];
      const auto& lines = fn["lines"];
      int mismatches = 0;
      for (std::size_t i = 0; i < lines.size(); ++i) {
        const int expected = lines[i];
        const int got = line_for_offset(format, table, first, static_cast<std::int64_t>(2 * i));
        if (got != expected && ++mismatches <= 3) {
          ADD_FAILURE() << fn["name"] << " offset " << 2 * i << ": CPython says " << expected
                        << ", decoder says " << got;
        }
        ++checked;
      }
    }
    EXPECT_GT(checked, 1000u);  // the whole threading module went through
    EXPECT_EQ(formats.size(), 1u);
  }
}

TEST(LineTable, PositionsMatchCoPositions) {
  // 3.11+: line, end line, column and end column of every code unit, as co_positions() says.
  const auto& data = interpreter_data();
  std::size_t checked = 0;
  for (const auto& interp : data["interpreters"]) {
    SCOPED_TRACE(interp["label"].get<std::string>());
    for (const auto& fn : interp["functions"]) {
      if (fn["format"] != "locations") continue;
      const auto table = from_hex(fn["table"]);
      const int first = fn["first_line"];
      int mismatches = 0;
      const auto& positions = fn["positions"];
      for (std::size_t i = 0; i < positions.size(); ++i) {
        const auto& p = positions[i];
        const Positions expected{p[0], p[1], p[2], p[3]};
        const Positions got = positions_for_offset(table, first, static_cast<std::int64_t>(2 * i));
        if (!(got == expected) && ++mismatches <= 3) {
          ADD_FAILURE() << fn["name"] << " offset " << 2 * i << ": CPython says " << p
                        << ", decoder says [" << got.line << "," << got.end_line << ","
                        << got.column << "," << got.end_column << "]";
        }
        ++checked;
      }
    }
  }
  if (checked == 0) GTEST_SKIP() << "no CPython 3.11+ installed";
  EXPECT_GT(checked, 1000u);
}

TEST(LineTable, NegativeOffsetIsTheFirstLine) {
  // A frame that has not executed an instruction yet (f_lasti -1, or prev_instr before the code).
  const std::vector<std::uint8_t> table{0x02, 0x01};
  EXPECT_EQ(line_for_offset(LineTableFormat::Lnotab, table, 10, -1), 10);
  EXPECT_EQ(line_for_offset(LineTableFormat::Locations311, table, 10, -2), 10);
}

TEST(LineTable, GarbageNeverCrashes) {
  // Torn reads feed arbitrary bytes and offsets; the decoders must stay in bounds.
  std::vector<std::uint8_t> table(257);
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<std::uint8_t>(i * 37 + 11);
  for (auto format :
       {LineTableFormat::Lnotab, LineTableFormat::Linetable310, LineTableFormat::Locations311}) {
    for (std::int64_t offset : {0L, 7L, 100L, 1L << 40}) {
      (void)line_for_offset(format, table, 1, offset);
    }
    EXPECT_EQ(line_for_offset(format, {}, 5, 1000), format == LineTableFormat::Lnotab ? 5 : 0);
  }
  const std::vector<std::uint8_t> endless_varint{0xF0, 0x7F, 0x7F};  // long form, cut short
  EXPECT_EQ(line_for_offset(LineTableFormat::Locations311, endless_varint, 1, 0), 0);
  EXPECT_EQ(positions_for_offset(endless_varint, 1, 0), Positions{});
  for (std::int64_t offset : {0L, 7L, 100L, 1L << 40}) (void)positions_for_offset(table, 1, offset);
}

TEST(LineTable, ALongFormFieldBeyondAnIntIsATornTable) {
  // A long-form entry (code 14) whose end-line delta, column or end column is 2^64 - 1: CPython
  // writes C ints there, so the entry is torn, not a position (the fuzzer once summed such a delta
  // into the line past int64's range).
  const std::vector<std::uint8_t> huge(10, 0x7F);  // 6 bits a byte, continued; with 0x3F: 2^64 - 1
  for (std::size_t field = 0; field < 3; ++field) {
    std::vector<std::uint8_t> table{0xF0, 0x00};  // long form, one code unit; line delta 0
    for (std::size_t f = 0; f < 3; ++f) {
      if (f == field) {
        table.insert(table.end(), huge.begin(), huge.end());
        table.push_back(0x3F);
      } else {
        table.push_back(0x01);
      }
    }
    EXPECT_EQ(positions_for_offset(table, 7, 0), Positions{}) << "field " << field;
  }
  // The same entry with ints in range is a position.
  const std::vector<std::uint8_t> fine{0xF0, 0x00, 0x01, 0x05, 0x09};
  EXPECT_EQ(positions_for_offset(fine, 7, 0), (Positions{7, 8, 4, 8}));
}

}  // namespace
}  // namespace dapprof::sampler::python
