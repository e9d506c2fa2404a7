#pragma once
// Bounds-checked reads from an ELF file mapped in memory, shared by the readers of its symbol
// and section tables.
#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

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

}  // namespace dapprof::sampler::process::elf_read
