// The DWARF line-table reader on arbitrary .debug_line sections (with a .debug_line_str and a
// .debug_str for DWARF 5's string forms): a module's debug sections are whatever its file holds,
// so indexing them and looking addresses up must never crash, hang or read outside them.
// Input: a header of two section sizes and four addresses to look up, then .debug_line, then
// .debug_line_str, then .debug_str (the sizes are cut to what the input holds).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "sampler/native/line_table.hpp"

namespace {

struct Header {
  std::uint32_t line_size;
  std::uint32_t line_str_size;
  std::array<std::uint64_t, 4> lookups;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using dapprof::sampler::native::LineTable;
  Header header{};
  if (size < sizeof header) return 0;
  std::memcpy(&header, data, sizeof header);
  std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data) + sizeof header,
                                  size - sizeof header);
  const auto take = [&](std::size_t n) {
    const auto part = rest.first(std::min(n, rest.size()));
    rest = rest.subspan(part.size());
    return part;
  };
  const auto line = take(header.line_size);
  const auto line_str = take(header.line_str_size);
  const auto str = rest;
  const auto table = LineTable::from_sections(line, line_str, str);
  if (!table) return 0;
  if (table->sequence_count() == 0) __builtin_trap();  // a table has something to look up
  for (const std::uint64_t vaddr : header.lookups) {
    for (const std::uint64_t near : {vaddr, vaddr + 1, vaddr + 0x10}) {
      if (auto found = table->find(near); found && found->line <= 0) __builtin_trap();
    }
  }
  return 0;
}
