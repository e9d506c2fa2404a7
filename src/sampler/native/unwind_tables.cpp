#include "sampler/native/unwind_tables.hpp"

#include <elf.h>
#include <fmt/format.h>

#include "sampler/native/eh_frame_hdr.hpp"
#include "sampler/process/elf_read.hpp"
#include "sampler/process/mapped_file.hpp"
#include "sampler/process/target_files.hpp"

namespace dapprof::sampler::native {
namespace {

namespace elf_read = process::elf_read;

constexpr std::uint64_t kPageMask = ~std::uint64_t{4095};

std::optional<UnwindTable> read_table(pid_t pid, const Mapping& m) {
  const std::string path = process::target_file_path(pid, m.path, m.inode);
  const auto mapped = process::MappedFile::open(path);
  if (!mapped) return std::nullopt;
  const auto file = mapped->bytes();
  const auto eh = elf_read::file_header(file, path);
  if (!eh) return std::nullopt;
  const auto phdrs = elf_read::program_headers(file, *eh, path);
  if (!phdrs) return std::nullopt;
  std::optional<std::uint64_t> bias;
  std::optional<Elf64_Phdr> hdr;
  for (const auto& p : *phdrs) {
    if (p.p_type == PT_LOAD && (p.p_offset & kPageMask) == m.offset)
      bias = m.start - (p.p_vaddr & kPageMask);
    if (p.p_type == PT_GNU_EH_FRAME) hdr = p;
  }
  if (!bias || !hdr || hdr->p_offset > file.size() || hdr->p_filesz > file.size() - hdr->p_offset)
    return std::nullopt;
  const auto index = parse_eh_frame_hdr(file.subspan(hdr->p_offset, hdr->p_filesz));
  if (!index) return std::nullopt;
  UnwindTable t;
  t.header = hdr->p_vaddr + *bias;
  t.table = t.header + index->table_offset;
  t.entries = index->count;
  t.start_ip = m.start;
  t.end_ip = m.end;
  return t;
}

}  // namespace

std::optional<UnwindTable> UnwindTables::find(const Mapping& mapping) {
  const std::string key = fmt::format("{:x}:{}", mapping.start, mapping.path);
  auto [it, inserted] = tables_.try_emplace(key);
  if (inserted) it->second = read_table(pid_, mapping);
  return it->second;
}

}  // namespace dapprof::sampler::native
