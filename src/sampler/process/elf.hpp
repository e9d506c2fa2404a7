#pragma once
// Symbols and sections of an ELF file on disk (the python executable or libpython), and where the
// file is loaded in a process.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"
#include "sampler/process/maps.hpp"

namespace dapprof::sampler::process {

struct ElfSection {
  std::string name;
  std::uint64_t addr = 0;  // link-time virtual address
  std::uint64_t size = 0;
};

class ElfFile {
 public:
  // Reads .dynsym and .symtab (whichever exist) and the section headers.
  static Result<ElfFile> open(const std::string& path);

  const std::string& path() const { return path_; }
  bool position_independent() const { return pie_; }  // ET_DYN
  // Link-time address of a symbol (st_value), if present.
  std::optional<std::uint64_t> symbol(std::string_view name) const;
  std::optional<ElfSection> section(std::string_view name) const;
  // Lowest p_vaddr of PT_LOAD segments with its file offset, to compute the load bias.
  std::uint64_t first_load_vaddr() const { return first_load_vaddr_; }
  std::uint64_t first_load_offset() const { return first_load_offset_; }
  // Load bias of this file in a process (runtime address = link-time address + bias), from the
  // maps entries whose path is this file, or `mapped_as` (the name the maps give it when it was
  // opened another way, e.g. through /proc/PID/root). nullopt if the file is not mapped.
  std::optional<std::uint64_t> load_bias(const std::vector<MapEntry>& maps,
                                         const std::string& mapped_as = "") const;

 private:
  struct LoadSegment {
    std::uint64_t vaddr = 0;
    std::uint64_t offset = 0;
  };
  std::string path_;
  std::string real_path_;  // maps show the canonical path; path_ may be a symlink
  bool pie_ = false;
  std::vector<LoadSegment> loads_;
  std::uint64_t first_load_vaddr_ = 0;
  std::uint64_t first_load_offset_ = 0;
  std::unordered_map<std::string, std::uint64_t> symbols_;
  std::vector<ElfSection> sections_;
};

}  // namespace dapprof::sampler::process
