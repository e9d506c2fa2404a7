#include "sampler/native/line_table.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string_view>

#include "sampler/native/elf_symbols.hpp"

namespace dapprof::sampler::native {
namespace {

// DWARF constants (DWARF 5 specification, section 7).
enum : std::uint8_t {
  DW_LNS_copy = 1,
  DW_LNS_advance_pc = 2,
  DW_LNS_advance_line = 3,
  DW_LNS_set_file = 4,
  DW_LNS_const_add_pc = 8,
  DW_LNS_fixed_advance_pc = 9,
  DW_LNE_end_sequence = 1,
  DW_LNE_set_address = 2,
};
enum : std::uint64_t {
  DW_LNCT_path = 1,
  DW_LNCT_directory_index = 2,
  DW_FORM_block = 0x09,
  DW_FORM_data1 = 0x0b,
  DW_FORM_data2 = 0x05,
  DW_FORM_data4 = 0x06,
  DW_FORM_data8 = 0x07,
  DW_FORM_data16 = 0x1e,
  DW_FORM_string = 0x08,
  DW_FORM_strp = 0x0e,
  DW_FORM_line_strp = 0x1f,
  DW_FORM_udata = 0x0f,
};

// Bounds-checked little-endian reads; a read past the end sets `bad` and yields zeros.
struct Reader {
  std::span<const std::byte> data;
  std::size_t pos = 0;
  bool bad = false;

  bool has(std::size_t n) {
    if (pos > data.size() || data.size() - pos < n) bad = true;
    return !bad;
  }
  std::uint64_t fixed(std::size_t n) {
    if (!has(n)) return 0;
    std::uint64_t v = 0;
    std::memcpy(&v, data.data() + pos, std::min<std::size_t>(n, 8));
    pos += n;
    return v;
  }
  std::uint8_t u8() { return static_cast<std::uint8_t>(fixed(1)); }
  std::uint64_t uleb() {
    std::uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      const std::uint8_t b = u8();
      if (bad) return 0;
      if (shift < 64) v |= std::uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return v;
    }
  }
  std::int64_t sleb() {
    std::int64_t v = 0;
    unsigned shift = 0;
    std::uint8_t b = 0;
    do {
      b = u8();
      if (bad) return 0;
      if (shift < 64) v |= static_cast<std::int64_t>(std::uint64_t{b & 0x7fu} << shift);
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= static_cast<std::int64_t>(~std::uint64_t{0} << shift);
    return v;
  }
  std::string_view cstring() {
    if (!has(1)) return {};
    const char* begin = reinterpret_cast<const char*>(data.data() + pos);
    const std::size_t len = strnlen(begin, data.size() - pos);
    if (len == data.size() - pos) {
      bad = true;
      return {};
    }
    pos += len + 1;
    return {begin, len};
  }
  void skip(std::size_t n) {
    if (has(n)) pos += n;
  }
};

std::string_view string_in(std::span<const std::byte> section, std::uint64_t offset) {
  if (offset >= section.size()) return {};
  const char* begin = reinterpret_cast<const char*>(section.data() + offset);
  return {begin, strnlen(begin, section.size() - offset)};
}

// Lexically normal: a build that names its sources relative to its build directory (a compiler
// cache does) records `build/sub/../../src/x.c`, which a reader wants as `src/x.c`. A `..` after
// a symbolic link is taken as the directory above the link, as the build that wrote it did.
std::string join(std::string_view dir, std::string_view name) {
  if (name.starts_with('/') || dir.empty())
    return std::filesystem::path(name).lexically_normal().string();
  return (std::filesystem::path(dir) / name).lexically_normal().string();
}

}  // namespace

struct LineTable::Unit {
  std::uint16_t version = 0;
  std::uint8_t address_size = 8;
  std::uint8_t min_instruction_length = 1;
  std::int8_t line_base = 0;
  std::uint8_t line_range = 1;
  std::uint8_t opcode_base = 1;
  std::vector<std::uint8_t> standard_lengths;
  // Indexed as the program's file register: (directory index, name); joined when asked for, as
  // most of a module's files are never looked up.
  std::vector<std::pair<std::uint64_t, std::string_view>> files;
  std::vector<std::string_view> dirs;
  std::size_t program = 0;  // offsets in .debug_line
  std::size_t end = 0;
};

LineTable::~LineTable() = default;

namespace {

struct Row {
  std::uint64_t address = 0;
  std::uint64_t file = 1;
  std::int64_t line = 1;

  // Wraps as the address register does: a corrupt program's deltas may add up past 64 bits, and
  // find() refuses a line beyond int's range whatever it wrapped to.
  void advance_line(std::int64_t delta) {
    line = static_cast<std::int64_t>(static_cast<std::uint64_t>(line) +
                                     static_cast<std::uint64_t>(delta));
  }
};

// Runs a line program from `start` (the beginning of a sequence) to the end of its unit, calling
// `row(state, end_of_sequence, offset_after)` for every row; stops when it returns false.
template <typename OnRow>
bool run(std::span<const std::byte> section, const auto& unit, std::size_t start, OnRow&& row) {
  Reader r{section, start};
  Row state;
  while (r.pos < unit.end && !r.bad) {
    const std::uint8_t op = r.u8();
    if (op >= unit.opcode_base) {
      const unsigned adjusted = op - unit.opcode_base;
      state.address += (adjusted / unit.line_range) * unit.min_instruction_length;
      state.advance_line(unit.line_base + static_cast<int>(adjusted % unit.line_range));
      if (!row(state, false, r.pos)) return true;
      continue;
    }
    switch (op) {
      case 0: {
        const std::uint64_t len = r.uleb();
        const std::size_t after = r.pos + len;
        if (len == 0 || !r.has(len)) return false;
        const std::uint8_t sub = r.u8();
        if (sub == DW_LNE_end_sequence) {
          if (!row(state, true, after)) return true;
          state = Row{};
        } else if (sub == DW_LNE_set_address) {
          state.address = r.fixed(std::min<std::size_t>(len - 1, 8));
        }
        r.pos = after;
        break;
      }
      case DW_LNS_copy:
        if (!row(state, false, r.pos)) return true;
        break;
      case DW_LNS_advance_pc:
        state.address += r.uleb() * unit.min_instruction_length;
        break;
      case DW_LNS_advance_line:
        state.advance_line(r.sleb());
        break;
      case DW_LNS_set_file:
        state.file = r.uleb();
        break;
      case DW_LNS_const_add_pc:
        state.address +=
            ((255u - unit.opcode_base) / unit.line_range) * unit.min_instruction_length;
        break;
      case DW_LNS_fixed_advance_pc:
        state.address += r.fixed(2);
        break;
      default:  // other standard opcodes: skip their operands
        for (unsigned i = 0; i < unit.standard_lengths[op - 1u]; ++i) r.uleb();
    }
  }
  return !r.bad;
}

}  // namespace

bool LineTable::index_unit(std::size_t offset, std::size_t& next) {
  Reader r{line_, offset};
  std::uint64_t length = r.fixed(4);
  std::size_t offset_size = 4;
  if (length == 0xffffffff) {
    length = r.fixed(8);
    offset_size = 8;
  }
  if (r.bad || length > line_.size() - r.pos) return false;
  auto unit = std::make_unique<Unit>();
  unit->end = r.pos + length;
  next = unit->end;
  unit->version = static_cast<std::uint16_t>(r.fixed(2));
  if (unit->version < 2 || unit->version > 5) return true;  // skip what we cannot read
  if (unit->version >= 5) {
    unit->address_size = r.u8();
    r.u8();  // segment selector size
  }
  const std::uint64_t header_length = r.fixed(offset_size);
  unit->program = r.pos + header_length;
  unit->min_instruction_length = r.u8();
  if (unit->version >= 4) r.u8();  // maximum operations per instruction (VLIW only)
  r.u8();                          // default_is_stmt
  unit->line_base = static_cast<std::int8_t>(r.u8());
  unit->line_range = r.u8();
  unit->opcode_base = r.u8();
  if (r.bad || unit->line_range == 0 || unit->opcode_base == 0) return true;
  for (unsigned i = 1; i < unit->opcode_base; ++i) unit->standard_lengths.push_back(r.u8());

  auto& dirs = unit->dirs;
  if (unit->version >= 5) {
    // Directory and file tables described by (content type, form) formats.
    const auto read_table = [&](auto&& on_entry) {
      const std::uint8_t format_count = r.u8();
      std::vector<std::pair<std::uint64_t, std::uint64_t>> formats;
      for (unsigned i = 0; i < format_count; ++i) {
        const std::uint64_t type = r.uleb();  // two statements: argument order is unspecified
        formats.emplace_back(type, r.uleb());
      }
      const std::uint64_t count = r.uleb();
      // Every entry takes at least a byte, unless no format describes it: a count beyond the
      // bytes left (or entries of nothing) would only fill the table with empty names.
      if (count > 0 && (formats.empty() || count > line_.size() - std::min(r.pos, line_.size())))
        r.bad = true;
      for (std::uint64_t e = 0; e < count && !r.bad; ++e) {
        std::string_view path;
        std::uint64_t dir = 0;
        for (const auto& [type, form] : formats) {
          std::string_view s;
          std::uint64_t v = 0;
          switch (form) {
            case DW_FORM_string:
              s = r.cstring();
              break;
            case DW_FORM_line_strp:
              s = string_in(line_str_, r.fixed(offset_size));
              break;
            case DW_FORM_strp:
              s = string_in(str_, r.fixed(offset_size));
              break;
            case DW_FORM_udata:
              v = r.uleb();
              break;
            case DW_FORM_data1:
              v = r.fixed(1);
              break;
            case DW_FORM_data2:
              v = r.fixed(2);
              break;
            case DW_FORM_data4:
              v = r.fixed(4);
              break;
            case DW_FORM_data8:
              v = r.fixed(8);
              break;
            case DW_FORM_data16:
              r.skip(16);
              break;
            case DW_FORM_block:
              r.skip(r.uleb());
              break;
            default:  // a form whose size we do not know: the rest cannot be parsed
              r.bad = true;
          }
          if (type == DW_LNCT_path) path = s;
          if (type == DW_LNCT_directory_index) dir = v;
        }
        on_entry(path, dir);
      }
    };
    read_table([&](std::string_view path, std::uint64_t) { dirs.push_back(path); });
    read_table(
        [&](std::string_view path, std::uint64_t dir) { unit->files.emplace_back(dir, path); });
  } else {
    dirs.emplace_back();  // index 0: the compilation directory, which only .debug_info names
    for (auto d = r.cstring(); !d.empty() && !r.bad; d = r.cstring()) dirs.emplace_back(d);
    unit->files.emplace_back(0, std::string_view{});  // file numbers start at 1
    for (auto f = r.cstring(); !f.empty() && !r.bad; f = r.cstring()) {
      const std::uint64_t dir = r.uleb();
      r.uleb();  // modification time
      r.uleb();  // length
      unit->files.emplace_back(dir, f);
    }
  }
  if (r.bad || unit->program > unit->end) return true;

  const std::size_t index = units_.size();
  std::size_t sequence_start = unit->program;
  // The first address of the sequence being read. A plain pair rather than std::optional: GCC's
  // -Wmaybe-uninitialized misreads the optional's payload once the lambda is inlined (-O3).
  std::uint64_t low = 0;
  bool in_sequence = false;
  run(line_, *unit, unit->program, [&](const Row& row, bool end, std::size_t after) {
    if (!end) {
      if (!in_sequence) low = row.address;
      in_sequence = true;
      return true;
    }
    // Sequences starting at address 0 belong to functions the linker discarded.
    if (in_sequence && low != 0 && row.address > low)
      sequences_.push_back({low, row.address, index, sequence_start});
    in_sequence = false;
    sequence_start = after;
    return true;
  });
  units_.push_back(std::move(unit));
  return true;
}

std::unique_ptr<LineTable> LineTable::from_sections(std::span<const std::byte> debug_line,
                                                    std::span<const std::byte> line_str,
                                                    std::span<const std::byte> str) {
  if (debug_line.empty()) return nullptr;
  std::unique_ptr<LineTable> table(new LineTable());
  table->line_ = debug_line;
  table->line_str_ = line_str;
  table->str_ = str;
  for (std::size_t offset = 0, next = 0; offset < debug_line.size(); offset = next) {
    if (!table->index_unit(offset, next) || next <= offset) break;
  }
  if (table->sequences_.empty()) return nullptr;
  std::sort(table->sequences_.begin(), table->sequences_.end(),
            [](const Sequence& a, const Sequence& b) { return a.low < b.low; });
  return table;
}

std::unique_ptr<LineTable> LineTable::open(const ElfSymbols& elf) {
  return from_sections(elf.section(".debug_line"), elf.section(".debug_line_str"),
                       elf.section(".debug_str"));
}

std::optional<SourceLine> LineTable::find(std::uint64_t vaddr) const {
  auto it = std::upper_bound(sequences_.begin(), sequences_.end(), vaddr,
                             [](std::uint64_t a, const Sequence& s) { return a < s.low; });
  if (it == sequences_.begin()) return std::nullopt;
  const Sequence& seq = *std::prev(it);
  if (vaddr >= seq.high) return std::nullopt;
  const Unit& unit = *units_[seq.unit];
  std::optional<Row> found, previous;
  run(line_, unit, seq.start, [&](const Row& row, bool end, std::size_t) {
    if (row.address > vaddr || end) {
      found = previous;
      return false;
    }
    previous = row;
    return true;
  });
  // A line register beyond int's range is no line a source file has (a corrupt program).
  if (!found || found->line <= 0 || found->line > std::numeric_limits<int>::max())
    return std::nullopt;
  if (found->file >= unit.files.size()) return SourceLine{"", static_cast<int>(found->line)};
  const auto [dir, name] = unit.files[found->file];
  std::string directory;
  if (dir < unit.dirs.size()) {
    // DWARF 5: entry 0 is the compilation directory, and the others may be relative to it.
    directory = dir == 0 ? std::string(unit.dirs[0]) : join(unit.dirs[0], unit.dirs[dir]);
  }
  return SourceLine{join(directory, name), static_cast<int>(found->line)};
}

}  // namespace dapprof::sampler::native
