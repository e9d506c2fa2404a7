#pragma once
// Source file and line of an address, from a module's DWARF line tables (.debug_line, versions
// 2 to 5), without an external DWARF library. Opening indexes the address range of every line
// sequence (one pass over the section); a lookup then replays the one sequence that covers the
// address. Compressed debug sections are not read (such modules get no lines).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dapprof::sampler::native {

class ElfSymbols;

struct SourceLine {
  std::string file;
  int line = 0;
};

class LineTable {
 public:
  // Null if the module has no line table this reader understands. The sections must outlive
  // the table (they point into the module's mapped file, which ElfSymbols keeps).
  static std::unique_ptr<LineTable> open(const ElfSymbols& elf);
  // Same, from the sections themselves (tests).
  static std::unique_ptr<LineTable> from_sections(std::span<const std::byte> debug_line,
                                                  std::span<const std::byte> line_str,
                                                  std::span<const std::byte> str);

  // The line of link-time address `vaddr`, if a sequence covers it.
  std::optional<SourceLine> find(std::uint64_t vaddr) const;
  std::size_t sequence_count() const { return sequences_.size(); }

 private:
  struct Sequence {
    std::uint64_t low = 0, high = 0;  // addresses covered: [low, high)
    std::size_t unit = 0;             // index into units_
    std::size_t start = 0;            // offset of its first opcode in .debug_line
  };
  struct Unit;  // one line program's header
  LineTable() = default;
  bool index_unit(std::size_t offset, std::size_t& next);

  std::span<const std::byte> line_, line_str_, str_;
  std::vector<std::unique_ptr<Unit>> units_;
  std::vector<Sequence> sequences_;  // by low address

 public:
  ~LineTable();
};

}  // namespace dapprof::sampler::native
