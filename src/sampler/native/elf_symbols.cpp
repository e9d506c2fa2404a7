#include "sampler/native/elf_symbols.hpp"

#include <elf.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

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

// DW_EH_PE encodings used by .eh_frame_hdr: only the fixed-size ones are read.
std::size_t encoded_size(std::uint8_t enc) {
  switch (enc & 0x0f) {
    case 0x02:  // udata2
    case 0x0a:  // sdata2
      return 2;
    case 0x03:  // udata4
    case 0x0b:  // sdata4
      return 4;
    case 0x04:  // udata8
    case 0x0c:  // sdata8
      return 8;
    default:
      return 0;
  }
}

constexpr std::uint8_t kOmit = 0xff;
constexpr std::uint8_t kDatarelSdata4 = 0x3b;

}  // namespace

Result<ElfSymbols> ElfSymbols::open(const std::string& path) {
  auto mapped = process::MappedFile::open(path);
  if (!mapped) return mapped.error();
  ElfSymbols out;
  out.file_.emplace(std::move(*mapped));
  const auto file = out.file_->bytes();
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
  // version, eh_frame_ptr_enc, fde_count_enc, table_enc; eh_frame_ptr; fde_count; then pairs of
  // (initial location, FDE address), each relative to the header, sorted by location.
  const auto head = at<std::array<std::uint8_t, 4>>(file, hdr_offset);
  if (!head || (*head)[0] != 1 || (*head)[3] != kDatarelSdata4) return;
  const std::size_t ptr_size = encoded_size((*head)[1]);
  const std::size_t count_size = encoded_size((*head)[2]);
  if ((*head)[1] == kOmit || (*head)[2] == kOmit || ptr_size == 0 || count_size == 0) return;
  std::uint64_t count = 0;
  const std::uint64_t count_at = hdr_offset + 4 + ptr_size;
  if (count_at + count_size > file.size()) return;
  std::memcpy(&count, file.data() + count_at, count_size);  // little-endian
  const std::uint64_t table = count_at + count_size;
  if (count > (hdr_size - (table - hdr_offset)) / 8 || table + count * 8 > file.size()) return;
  fdes_.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::int32_t location = 0;
    std::memcpy(&location, file.data() + table + i * 8, 4);
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

std::span<const std::byte> ElfSymbols::section(std::string_view name) const {
  const auto file = file_->bytes();
  for (const auto& s : sections_) {
    if (s.name != name) continue;
    if (!s.in_file || s.offset > file.size() || s.size > file.size() - s.offset) return {};
    return file.subspan(s.offset, s.size);
  }
  return {};
}

}  // namespace dapprof::sampler::native
