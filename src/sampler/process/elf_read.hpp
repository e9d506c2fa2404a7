#pragma once
// Bounds-checked reads from an ELF file mapped in memory, shared by the readers of its symbol
// and section tables: the headers, the section names and the symbol tables.
#include <elf.h>
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace dapprof::sampler::process::elf_read {

// A copy of a struct out of the file (the mapping need not be aligned for T); nullopt if it does
// not fit.
template <typename T>
std::optional<T> at(std::span<const std::byte> file, std::uint64_t offset) {
  if (offset > file.size() || file.size() - offset < sizeof(T)) return std::nullopt;
  T value;
  std::memcpy(&value, file.data() + offset, sizeof(T));
  return value;
}

// The NUL-terminated string at `index` of a string table section; empty if out of bounds.
inline std::string_view string_at(std::span<const std::byte> file, const Elf64_Shdr& strtab,
                                  std::uint32_t index) {
  if (strtab.sh_offset > file.size() || index >= strtab.sh_size ||
      strtab.sh_size > file.size() - strtab.sh_offset)
    return {};
  const char* begin = reinterpret_cast<const char*>(file.data() + strtab.sh_offset) + index;
  return {begin, strnlen(begin, strtab.sh_size - index)};
}

// The error for a file these readers cannot use, naming it.
inline Error unusable(std::string_view path, std::string_view why) {
  return Error{fmt::format("{} is not a usable ELF64 file: {}", path, why)};
}

// The file header of a 64-bit little-endian ELF file (the only kind on x86-64).
inline Result<Elf64_Ehdr> file_header(std::span<const std::byte> file, std::string_view path) {
  const auto eh = at<Elf64_Ehdr>(file, 0);
  if (!eh || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) return unusable(path, "no ELF magic");
  if (eh->e_ident[EI_CLASS] != ELFCLASS64) return unusable(path, "not 64-bit");
  if (eh->e_ident[EI_DATA] != ELFDATA2LSB) return unusable(path, "not little-endian");
  return *eh;
}

// A table of `count` entries of T, `entsize` bytes apart from `offset` (entsize may exceed T's
// size in later ELF versions); `what` names it in the error.
template <typename T>
Result<std::vector<T>> table(std::span<const std::byte> file, std::uint64_t offset, unsigned count,
                             std::uint64_t entsize, std::string_view path, std::string_view what) {
  std::vector<T> out;
  for (unsigned i = 0; i < count; ++i) {
    const auto entry = at<T>(file, offset + std::uint64_t{i} * entsize);
    if (!entry) return unusable(path, fmt::format("truncated {}", what));
    out.push_back(*entry);
  }
  return out;
}

inline Result<std::vector<Elf64_Phdr>> program_headers(std::span<const std::byte> file,
                                                       const Elf64_Ehdr& eh,
                                                       std::string_view path) {
  return table<Elf64_Phdr>(file, eh.e_phoff, eh.e_phnum, eh.e_phentsize, path, "program headers");
}

inline Result<std::vector<Elf64_Shdr>> section_headers(std::span<const std::byte> file,
                                                       const Elf64_Ehdr& eh,
                                                       std::string_view path) {
  return table<Elf64_Shdr>(file, eh.e_shoff, eh.e_shnum, eh.e_shentsize, path, "section headers");
}

// The name of each section, in the order of `shdrs`; empty names without a name table.
inline std::vector<std::string_view> section_names(std::span<const std::byte> file,
                                                   const Elf64_Ehdr& eh,
                                                   const std::vector<Elf64_Shdr>& shdrs) {
  std::vector<std::string_view> out(shdrs.size());
  if (eh.e_shstrndx >= shdrs.size()) return out;
  for (std::size_t i = 0; i < shdrs.size(); ++i)
    out[i] = string_at(file, shdrs[eh.e_shstrndx], shdrs[i].sh_name);
  return out;
}

// Calls fn(symbol, name) for each defined, named entry of .symtab (when not stripped) and
// .dynsym, in table order; the two tables repeat each other, which the callers sort out.
template <typename Fn>
Status for_each_symbol(std::span<const std::byte> file, const std::vector<Elf64_Shdr>& shdrs,
                       std::string_view path, Fn&& fn) {
  for (const auto& sh : shdrs) {
    if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) continue;
    if (sh.sh_link >= shdrs.size() || sh.sh_entsize < sizeof(Elf64_Sym)) continue;
    const auto& strtab = shdrs[sh.sh_link];
    const std::uint64_t count = sh.sh_size / sh.sh_entsize;
    for (std::uint64_t i = 1; i < count; ++i) {  // entry 0 is the undefined symbol
      const auto sym = at<Elf64_Sym>(file, sh.sh_offset + i * sh.sh_entsize);
      if (!sym) return unusable(path, "truncated symbol table");
      if (sym->st_shndx == SHN_UNDEF || sym->st_name == 0) continue;
      const auto name = string_at(file, strtab, sym->st_name);
      if (!name.empty()) fn(*sym, name);
    }
  }
  return Ok{};
}

}  // namespace dapprof::sampler::process::elf_read
