#include "sampler/python/line_table.hpp"

#include <cstddef>
#include <limits>

namespace dapprof::sampler::python {
namespace {

// Lines are summed in 64 bits, where no table's deltas can overflow them (a 3.11+ delta beyond
// int's range is refused, and the sum checked after each); one that leaves int's range comes from
// a torn table or first line: no line, rather than a wrapped one.
bool fits(std::int64_t line) {
  return line >= std::numeric_limits<int>::min() && line <= std::numeric_limits<int>::max();
}
int as_line(std::int64_t line) { return fits(line) ? static_cast<int>(line) : 0; }

int lnotab(std::span<const std::uint8_t> t, int first_line, std::int64_t offset) {
  std::int64_t line = first_line;
  std::int64_t addr = 0;
  for (std::size_t i = 0; i + 1 < t.size(); i += 2) {
    addr += t[i];
    if (addr > offset) break;
    line += static_cast<std::int8_t>(t[i + 1]);
  }
  return as_line(line);
}

int linetable310(std::span<const std::uint8_t> t, int first_line, std::int64_t offset) {
  std::int64_t end = 0;
  std::int64_t computed = first_line;
  for (std::size_t i = 0; i + 1 < t.size(); i += 2) {
    const std::int64_t start = end;
    end += t[i];
    const auto delta = static_cast<std::int8_t>(t[i + 1]);
    const bool no_line = delta == -128;
    if (!no_line) computed += delta;
    if (start <= offset && offset < end) return no_line ? 0 : as_line(computed);
  }
  return 0;
}

// Location-table varints: 6-bit chunks, least significant first, bit 6 = more follow.
struct Cursor {
  std::span<const std::uint8_t> t;
  std::size_t i = 0;
  bool ok = true;
  std::uint8_t byte() {
    if (i >= t.size()) {
      ok = false;
      return 0;
    }
    return t[i++];
  }
  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 6) {
      const std::uint8_t b = byte();
      value |= static_cast<std::uint64_t>(b & 63) << shift;
      if (!(b & 64) || !ok) break;
    }
    return value;
  }
  // CPython writes C ints: a larger one is a torn table, not a delta to add or a column.
  std::int64_t uvarint() {
    const std::uint64_t v = varint();
    if (v > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
      ok = false;
      return 0;
    }
    return static_cast<std::int64_t>(v);
  }
  std::int64_t svarint() {
    const std::uint64_t v = varint();
    if ((v >> 1) > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
      ok = false;
      return 0;
    }
    const auto magnitude = static_cast<std::int64_t>(v >> 1);
    return (v & 1) ? -magnitude : magnitude;
  }
};

// One pass over a 3.11+ location table to the entry covering `offset`, decoding each entry's
// positions (Objects/locations.md): the line lives on across entries as a running sum, the rest
// belongs to the entry.
Positions locations311(std::span<const std::uint8_t> t, int first_line, std::int64_t offset) {
  Cursor c{t};
  std::int64_t line = first_line;
  std::int64_t addr = 0;  // byte offset of the current entry
  while (c.i < t.size()) {
    const std::uint8_t first = c.byte();
    if (!(first & 0x80)) return {};  // lost synchronisation: not an entry start
    const int code = (first >> 3) & 15;
    const std::int64_t length = ((first & 7) + 1) * 2;
    std::int64_t end_line = 0, column = -1, end_column = -1;
    bool has_line = true;
    switch (code) {
      case 15:  // no location
        has_line = false;
        break;
      case 14:  // long form: line delta, end line delta, column + 1, end column + 1
        line += c.svarint();
        end_line = line + c.uvarint();
        column = c.uvarint() - 1;
        end_column = c.uvarint() - 1;
        break;
      case 13:  // no column: line delta only
        line += c.svarint();
        end_line = line;
        break;
      case 12:
      case 11:
      case 10:  // one-line forms: line delta in the code, then column and end column bytes
        line += code - 10;
        end_line = line;
        column = c.byte();
        end_column = c.byte();
        break;
      default: {  // short forms 0-9: same line; column's high bits in the code, the rest in a byte
        const std::uint8_t second = c.byte();
        end_line = line;
        column = code * 8 + ((second >> 4) & 7);
        end_column = column + (second & 15);
        break;
      }
    }
    if (!c.ok || !fits(line)) return {};
    if (addr <= offset && offset < addr + length) {
      if (!has_line) return {};
      if (!fits(end_line) || !fits(column) || !fits(end_column)) return {};
      return {static_cast<int>(line), static_cast<int>(end_line), static_cast<int>(column),
              static_cast<int>(end_column)};
    }
    addr += length;
  }
  return {};
}

}  // namespace

int line_for_offset(LineTableFormat format, std::span<const std::uint8_t> table, int first_line,
                    std::int64_t offset) {
  if (offset < 0) return first_line;
  switch (format) {
    case LineTableFormat::Lnotab:
      return lnotab(table, first_line, offset);
    case LineTableFormat::Linetable310:
      return linetable310(table, first_line, offset);
    case LineTableFormat::Locations311:
      return locations311(table, first_line, offset).line;
  }
  return 0;
}

Positions positions_for_offset(std::span<const std::uint8_t> table, int first_line,
                               std::int64_t offset) {
  if (offset < 0) return {first_line, first_line, -1, -1};
  return locations311(table, first_line, offset);
}

}  // namespace dapprof::sampler::python
