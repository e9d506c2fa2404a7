#pragma once
// What a native frame's address means inside one ELF file: which function (from .symtab and
// .dynsym, with sizes, unlike process::ElfFile which only needs names to addresses), and, where
// no symbol covers it (static functions of a stripped binary), where the function starts, from
// the unwind table's index (.eh_frame_hdr), so that its samples still add up in one place.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "sampler/process/mapped_file.hpp"

namespace dapprof::sampler::native {

class ElfSymbols {
 public:
  static Result<ElfSymbols> open(const std::string& path);
  // An ELF file held in memory (MiniDebugInfo, once decompressed); `name` names it in errors.
  static Result<ElfSymbols> from_bytes(std::vector<std::byte> bytes, const std::string& name);

  // Link-time address of a file offset that a PT_LOAD segment maps; nullopt elsewhere.
  std::optional<std::uint64_t> vaddr_of_offset(std::uint64_t file_offset) const;

  struct Function {
    std::string_view name;  // empty: no symbol; `start` then comes from the unwind tables
    std::uint64_t start = 0;
  };
  // The function holding link-time address `vaddr`, if anything is known of it.
  std::optional<Function> function_at(std::uint64_t vaddr) const;

  // The bytes of the file at link-time address `vaddr`, up to `size` (fewer where the segment
  // ends); empty where no segment holds it.
  std::span<const std::byte> code_at(std::uint64_t vaddr, std::uint64_t size) const;
  // Whether the unwind tables start a function at `vaddr`, and where the next one starts.
  bool is_function_start(std::uint64_t vaddr) const;
  std::optional<std::uint64_t> next_function_start(std::uint64_t vaddr) const;

  // Contents of a section (empty if absent or not in the file), for the DWARF reader.
  std::span<const std::byte> section(std::string_view name) const;
  std::size_t symbol_count() const { return symbols_.size(); }
  // Whether the file has a full symbol table (.symtab): not stripped, nothing more to look for.
  bool has_symtab() const { return has_symtab_; }
  // The whole file.
  std::span<const std::byte> bytes() const { return bytes_; }

 private:
  struct Symbol {
    std::uint64_t start = 0;
    std::uint64_t size = 0;
    std::string_view name;  // points into file_
  };
  struct Load {
    std::uint64_t vaddr = 0;
    std::uint64_t offset = 0;
    std::uint64_t filesz = 0;
  };
  struct Section {
    std::string_view name;
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    bool in_file = false;
  };
  ElfSymbols() = default;
  static Result<ElfSymbols> parse(ElfSymbols out, const std::string& path);
  void read_unwind_index(std::span<const std::byte> file, std::uint64_t hdr_offset,
                         std::uint64_t hdr_vaddr, std::uint64_t hdr_size);

  // The file, mapped or in memory: symbol names point into it.
  std::optional<process::MappedFile> file_;
  std::vector<std::byte> buffer_;
  std::span<const std::byte> bytes_;
  bool has_symtab_ = false;
  std::vector<Load> loads_;
  std::vector<Section> sections_;
  std::vector<Symbol> symbols_;      // functions with a size, by start; one name per start
  std::vector<Symbol> unsized_;      // functions without a size (assembly), by start
  std::vector<std::uint64_t> fdes_;  // function starts from .eh_frame_hdr, sorted
};

}  // namespace dapprof::sampler::native
