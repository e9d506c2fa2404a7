#pragma once
// Source line of a bytecode offset, from a code object's line table. Three formats:
//   3.8-3.9  co_lnotab: (byte offset delta, signed line delta) pairs
//   3.10     co_linetable: (byte length, signed line delta or -128 for "no line") pairs
//   3.11+    co_linetable location table (CPython's Objects/locations.md): variable-length
//            entries, each covering 1-8 code units with a line delta and column information
#include <cstdint>
#include <span>

namespace dapprof::sampler::python {

enum class LineTableFormat { Lnotab, Linetable310, Locations311 };

// Line of the instruction at byte offset `offset` (from the start of the bytecode); 0 if the table
// says the instruction has no line or the offset is past the table's end.
int line_for_offset(LineTableFormat format, std::span<const std::uint8_t> table, int first_line,
                    std::int64_t offset);

// Source range of an instruction (3.11+ location tables), as code.co_positions() gives it: lines
// 0 and columns -1 where CPython has None.
struct Positions {
  int line = 0;
  int end_line = 0;
  int column = -1;
  int end_column = -1;
  bool operator==(const Positions&) const = default;
};

// The positions of the instruction at byte offset `offset` of a 3.11+ location table; all unknown
// past the table's end or for a table torn mid-entry. Before 3.11 the tables hold lines only.
Positions positions_for_offset(std::span<const std::uint8_t> table, int first_line,
                               std::int64_t offset);

}  // namespace dapprof::sampler::python
