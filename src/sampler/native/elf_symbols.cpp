#include "sampler/native/elf_symbols.hpp"

#include <elf.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "sampler/native/eh_frame_hdr.hpp"
#include "sampler/process/elf_read.hpp"

namespace dapprof::sampler::native {
namespace {

namespace elf_read = process::elf_read;
using elf_read::at;

std::size_t leading_underscores(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && s[n] == '_') ++n;
  return n;
}

// Of several names for one address (read, __read, __libc_read), the one a person would call it.
bool better_name(std::string_view a, std::string_view b) {
  const auto ua = leading_underscores(a), ub = leading_underscores(b);
  if (ua != ub) return ua < ub;
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

}  // namespace

Result<ElfSymbols> ElfSymbols::open(const std::string& path) {
  auto mapped = process::MappedFile::open(path);
  if (!mapped) return mapped.error();
  ElfSymbols out;
  out.file_.emplace(std::move(*mapped));
  out.bytes_ = out.file_->bytes();
  return parse(std::move(out), path);
}

Result<ElfSymbols> ElfSymbols::from_bytes(std::vector<std::byte> bytes, const std::string& name) {
  ElfSymbols out;
  out.buffer_ = std::move(bytes);
  out.bytes_ = out.buffer_;
  return parse(std::move(out), name);
}

Result<ElfSymbols> ElfSymbols::parse(ElfSymbols out, const std::string& path) {
  const auto file = out.bytes_;
  const auto eh = elf_read::file_header(file, path);
  if (!eh) return eh.error();

  const auto phdrs = elf_read::program_headers(file, *eh, path);
  if (!phdrs) return phdrs.error();
  std::optional<Elf64_Phdr> eh_frame_hdr;
  for (const auto& ph : *phdrs) {
    if (ph.p_type == PT_LOAD) out.loads_.push_back({ph.p_vaddr, ph.p_offset, ph.p_filesz});
    if (ph.p_type == PT_GNU_EH_FRAME) eh_frame_hdr = ph;
  }

  const auto shdrs = elf_read::section_headers(file, *eh, path);
  if (!shdrs) return shdrs.error();
  const auto names = elf_read::section_names(file, *eh, *shdrs);
  if (eh->e_shstrndx < shdrs->size()) {
    for (std::size_t i = 0; i < shdrs->size(); ++i) {
      const auto& sh = (*shdrs)[i];
      out.sections_.push_back({names[i], sh.sh_offset, sh.sh_size, sh.sh_type != SHT_NOBITS});
    }
  }

  out.has_symtab_ = std::any_of(shdrs->begin(), shdrs->end(),
                                [](const Elf64_Shdr& sh) { return sh.sh_type == SHT_SYMTAB; });
  auto read = elf_read::for_each_symbol(file, *shdrs, path, [&](const Elf64_Sym& sym, auto name) {
    if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0) return;
    (sym.st_size ? out.symbols_ : out.unsized_).push_back({sym.st_value, sym.st_size, name});
  });
  if (!read) return read.error();
  for (auto* list : {&out.symbols_, &out.unsized_}) {
    std::sort(list->begin(), list->end(), [](const Symbol& a, const Symbol& b) {
      if (a.start != b.start) return a.start < b.start;
      return better_name(a.name, b.name);
    });
    // .symtab and .dynsym repeat each other, and aliases share an address: keep the best name.
    list->erase(std::unique(list->begin(), list->end(),
                            [](const Symbol& a, const Symbol& b) { return a.start == b.start; }),
                list->end());
  }
  if (eh_frame_hdr) {
    out.read_unwind_index(file, eh_frame_hdr->p_offset, eh_frame_hdr->p_vaddr,
                          eh_frame_hdr->p_filesz);
  }
  return out;
}

void ElfSymbols::read_unwind_index(std::span<const std::byte> file, std::uint64_t hdr_offset,
                                   std::uint64_t hdr_vaddr, std::uint64_t hdr_size) {
  if (hdr_offset > file.size() || hdr_size > file.size() - hdr_offset) return;
  const auto hdr = file.subspan(hdr_offset, hdr_size);
  const auto index = parse_eh_frame_hdr(hdr);
  if (!index) return;
  fdes_.reserve(index->count);
  for (std::uint64_t i = 0; i < index->count; ++i) {
    std::int32_t location = 0;  // relative to the header
    std::memcpy(&location, hdr.data() + index->table_offset + i * 8, 4);
    fdes_.push_back(hdr_vaddr + static_cast<std::uint64_t>(static_cast<std::int64_t>(location)));
  }
  std::sort(fdes_.begin(), fdes_.end());
}

std::optional<std::uint64_t> ElfSymbols::vaddr_of_offset(std::uint64_t file_offset) const {
  for (const auto& l : loads_) {
    if (file_offset >= l.offset && file_offset - l.offset < l.filesz)
      return file_offset - l.offset + l.vaddr;
  }
  return std::nullopt;
}

std::optional<ElfSymbols::Function> ElfSymbols::function_at(std::uint64_t vaddr) const {
  const auto by_start = [](std::uint64_t a, const Symbol& s) { return a < s.start; };
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), vaddr, by_start);
  if (it != symbols_.begin() && vaddr - std::prev(it)->start < std::prev(it)->size)
    return Function{std::prev(it)->name, std::prev(it)->start};
  // No sized symbol: the unwind index says where the function starts; an unsized symbol there
  // (hand-written assembly) names it.
  auto fde = std::upper_bound(fdes_.begin(), fdes_.end(), vaddr);
  if (fde == fdes_.begin()) return std::nullopt;
  const std::uint64_t start = *std::prev(fde);
  auto named = std::lower_bound(unsized_.begin(), unsized_.end(), start,
                                [](const Symbol& s, std::uint64_t a) { return s.start < a; });
  if (named != unsized_.end() && named->start == start) return Function{named->name, start};
  // The FDE found belongs to a symbol that ends before the address: nothing covers it.
  if (it != symbols_.begin() && std::prev(it)->start >= start) return std::nullopt;
  return Function{{}, start};
}

std::span<const std::byte> ElfSymbols::code_at(std::uint64_t vaddr, std::uint64_t size) const {
  for (const auto& l : loads_) {
    if (vaddr < l.vaddr || vaddr - l.vaddr >= l.filesz) continue;
    const std::uint64_t offset = vaddr - l.vaddr + l.offset;
    if (offset >= bytes_.size()) return {};
    const std::uint64_t n =
        std::min({size, l.filesz - (vaddr - l.vaddr), std::uint64_t{bytes_.size()} - offset});
    return bytes_.subspan(offset, n);
  }
  return {};
}

bool ElfSymbols::is_function_start(std::uint64_t vaddr) const {
  return std::binary_search(fdes_.begin(), fdes_.end(), vaddr);
}

std::optional<std::uint64_t> ElfSymbols::next_function_start(std::uint64_t vaddr) const {
  const auto it = std::upper_bound(fdes_.begin(), fdes_.end(), vaddr);
  if (it == fdes_.end()) return std::nullopt;
  return *it;
}

std::span<const std::byte> ElfSymbols::section(std::string_view name) const {
  const auto file = bytes_;
  for (const auto& s : sections_) {
    if (s.name != name) continue;
    if (!s.in_file || s.offset > file.size() || s.size > file.size() - s.offset) return {};
    return file.subspan(s.offset, s.size);
  }
  return {};
}

}  // namespace dapprof::sampler::native
