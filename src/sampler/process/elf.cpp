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

using elf_read::at;
using elf_read::string_at;

}  // namespace

Result<ElfFile> ElfFile::open(const std::string& path) {
  auto mapped = MappedFile::open(path);
  if (!mapped) return mapped.error();
  const auto file = mapped->bytes();
  const auto bad = [&](std::string_view why) {
    return Error{fmt::format("{} is not a usable ELF64 file: {}", path, why)};
  };

  const auto eh = at<Elf64_Ehdr>(file, 0);
  if (!eh || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) return bad("no ELF magic");
  if (eh->e_ident[EI_CLASS] != ELFCLASS64) return bad("not 64-bit");
  if (eh->e_ident[EI_DATA] != ELFDATA2LSB) return bad("not little-endian");

  ElfFile elf;
  elf.path_ = path;
  std::error_code ec;
  elf.real_path_ = std::filesystem::canonical(path, ec).string();
  if (ec) elf.real_path_ = path;
  elf.pie_ = eh->e_type == ET_DYN;

  // Program headers: PT_LOAD segments give the load bias.
  std::uint64_t lowest = std::numeric_limits<std::uint64_t>::max();
  for (unsigned i = 0; i < eh->e_phnum; ++i) {
    const auto ph = at<Elf64_Phdr>(file, eh->e_phoff + std::uint64_t{i} * eh->e_phentsize);
    if (!ph) return bad("truncated program headers");
    if (ph->p_type != PT_LOAD) continue;
    elf.loads_.push_back({ph->p_vaddr, ph->p_offset});
    if (ph->p_vaddr < lowest) {
      lowest = ph->p_vaddr;
      elf.first_load_vaddr_ = ph->p_vaddr;
      elf.first_load_offset_ = ph->p_offset;
    }
  }
  if (elf.loads_.empty()) return bad("no PT_LOAD segment");

  // Section headers and their names.
  std::vector<Elf64_Shdr> shdrs;
  for (unsigned i = 0; i < eh->e_shnum; ++i) {
    const auto sh = at<Elf64_Shdr>(file, eh->e_shoff + std::uint64_t{i} * eh->e_shentsize);
    if (!sh) return bad("truncated section headers");
    shdrs.push_back(*sh);
  }
  if (eh->e_shstrndx < shdrs.size()) {
    for (const auto& sh : shdrs) {
      elf.sections_.push_back({std::string(string_at(file, shdrs[eh->e_shstrndx], sh.sh_name)),
                               sh.sh_addr, sh.sh_size});
    }
  }

  // Symbols: .symtab (when not stripped) and .dynsym; defined ones only.
  for (const auto& sh : shdrs) {
    if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) continue;
    if (sh.sh_link >= shdrs.size() || sh.sh_entsize < sizeof(Elf64_Sym)) continue;
    const auto& strtab = shdrs[sh.sh_link];
    const std::uint64_t count = sh.sh_size / sh.sh_entsize;
    for (std::uint64_t i = 1; i < count; ++i) {
      const auto sym = at<Elf64_Sym>(file, sh.sh_offset + i * sh.sh_entsize);
      if (!sym) return bad("truncated symbol table");
      if (sym->st_shndx == SHN_UNDEF || sym->st_name == 0) continue;
      const auto type = ELF64_ST_TYPE(sym->st_info);
      if (type != STT_OBJECT && type != STT_FUNC && type != STT_TLS && type != STT_NOTYPE) continue;
      auto name = string_at(file, strtab, sym->st_name);
      if (!name.empty()) elf.symbols_.try_emplace(std::string(name), sym->st_value);
    }
  }
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

std::optional<std::uint64_t> ElfFile::load_bias(const std::vector<MapEntry>& maps) const {
  // The kernel maps each PT_LOAD segment at page_down(p_vaddr) + bias from file offset
  // page_down(p_offset); any mapping of the file whose offset matches a segment gives the bias.
  for (const auto& m : maps) {
    if (m.path != real_path_ && m.path != path_) continue;
    for (const auto& seg : loads_) {
      if ((seg.offset & kPageMask) == m.offset) return m.start - (seg.vaddr & kPageMask);
    }
  }
  return std::nullopt;
}

}  // namespace dapprof::sampler::process
