#include "sampler/process/elf.hpp"

#include <elf.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>

#include "sampler/process/elf_read.hpp"
#include "sampler/process/mapped_file.hpp"

namespace dapprof::sampler::process {
namespace {

constexpr std::uint64_t kPageMask = ~std::uint64_t{4095};

}  // namespace

Result<ElfFile> ElfFile::open(const std::string& path) {
  auto mapped = MappedFile::open(path);
  if (!mapped) return mapped.error();
  const auto file = mapped->bytes();
  const auto eh = elf_read::file_header(file, path);
  if (!eh) return eh.error();

  ElfFile elf;
  elf.path_ = path;
  std::error_code ec;
  elf.real_path_ = std::filesystem::canonical(path, ec).string();
  if (ec) elf.real_path_ = path;
  elf.pie_ = eh->e_type == ET_DYN;

  // PT_LOAD segments give the load bias.
  const auto phdrs = elf_read::program_headers(file, *eh, path);
  if (!phdrs) return phdrs.error();
  std::uint64_t lowest = std::numeric_limits<std::uint64_t>::max();
  for (const auto& ph : *phdrs) {
    if (ph.p_type != PT_LOAD) continue;
    elf.loads_.push_back({ph.p_vaddr, ph.p_offset});
    if (ph.p_vaddr < lowest) {
      lowest = ph.p_vaddr;
      elf.first_load_vaddr_ = ph.p_vaddr;
      elf.first_load_offset_ = ph.p_offset;
    }
  }
  if (elf.loads_.empty()) return elf_read::unusable(path, "no PT_LOAD segment");

  const auto shdrs = elf_read::section_headers(file, *eh, path);
  if (!shdrs) return shdrs.error();
  const auto names = elf_read::section_names(file, *eh, *shdrs);
  if (eh->e_shstrndx < shdrs->size()) {
    for (std::size_t i = 0; i < shdrs->size(); ++i)
      elf.sections_.push_back({std::string(names[i]), (*shdrs)[i].sh_addr, (*shdrs)[i].sh_size});
  }

  // Data and code symbols by name (the interpreter's globals, its thread-state TLS).
  auto read = elf_read::for_each_symbol(file, *shdrs, path, [&](const Elf64_Sym& sym, auto name) {
    const auto type = ELF64_ST_TYPE(sym.st_info);
    if (type == STT_OBJECT || type == STT_FUNC || type == STT_TLS || type == STT_NOTYPE)
      elf.symbols_.try_emplace(std::string(name), sym.st_value);
  });
  if (!read) return read.error();
  return elf;
}

std::optional<std::uint64_t> ElfFile::symbol(std::string_view name) const {
  const auto it = symbols_.find(std::string(name));
  if (it == symbols_.end()) return std::nullopt;
  return it->second;
}

std::optional<ElfSection> ElfFile::section(std::string_view name) const {
  for (const auto& s : sections_)
    if (s.name == name) return s;
  return std::nullopt;
}

std::optional<std::uint64_t> ElfFile::load_bias(const std::vector<MapEntry>& maps,
                                                const std::string& mapped_as) const {
  // The kernel maps each PT_LOAD segment at page_down(p_vaddr) + bias from file offset
  // page_down(p_offset); any mapping of the file whose offset matches a segment gives the bias.
  for (const auto& m : maps) {
    if (m.path != real_path_ && m.path != path_ && (mapped_as.empty() || m.path != mapped_as))
      continue;
    for (const auto& seg : loads_) {
      if ((seg.offset & kPageMask) == m.offset) return m.start - (seg.vaddr & kPageMask);
    }
  }
  return std::nullopt;
}

}  // namespace dapprof::sampler::process
