#include "sampler/native/unwind_tables.hpp"

#include <elf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "sampler/process/target_files.hpp"

namespace dapprof::sampler::native {
namespace {

constexpr std::uint64_t kPageMask = ~std::uint64_t{4095};
constexpr std::uint8_t kDatarelSdata4 = 0x3b;  // DW_EH_PE_datarel | DW_EH_PE_sdata4
constexpr std::uint8_t kUdata4 = 0x03;
constexpr std::uint8_t kSdata4 = 0x0b;
constexpr std::uint8_t kPcrel = 0x10;
constexpr std::size_t kMaxHeaders = 256;

struct Fd {
  explicit Fd(const std::string& path) : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  bool read(void* out, std::size_t size, std::uint64_t offset) const {
    return fd >= 0 &&
           ::pread(fd, out, size, static_cast<off_t>(offset)) == static_cast<ssize_t>(size);
  }
  int fd;
};

std::optional<UnwindTable> read_table(pid_t pid, const Mapping& m) {
  const Fd file(process::target_file_path(pid, m.path, m.inode));
  Elf64_Ehdr eh{};
  if (!file.read(&eh, sizeof eh, 0) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
      eh.e_phnum == 0 || eh.e_phnum > kMaxHeaders)
    return std::nullopt;
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  if (!file.read(ph.data(), ph.size() * sizeof(Elf64_Phdr), eh.e_phoff)) return std::nullopt;
  std::optional<std::uint64_t> bias;
  const Elf64_Phdr* hdr = nullptr;
  for (const auto& p : ph) {
    if (p.p_type == PT_LOAD && (p.p_offset & kPageMask) == m.offset)
      bias = m.start - (p.p_vaddr & kPageMask);
    if (p.p_type == PT_GNU_EH_FRAME) hdr = &p;
  }
  if (!bias || !hdr || hdr->p_filesz < 12) return std::nullopt;
  // version, eh_frame_ptr encoding, fde_count encoding, table encoding; eh_frame_ptr; fde_count.
  std::uint8_t head[12];
  if (!file.read(head, sizeof head, hdr->p_offset)) return std::nullopt;
  const bool four_byte_ptr = (head[1] & 0x0f) == kSdata4 || (head[1] & 0x0f) == kUdata4;
  if (head[0] != 1 || !four_byte_ptr || (head[1] & 0x70 & ~kPcrel) != 0 || head[2] != kUdata4 ||
      head[3] != kDatarelSdata4)
    return std::nullopt;
  std::uint32_t count = 0;
  std::memcpy(&count, head + 8, 4);
  if (12 + std::uint64_t{count} * 8 > hdr->p_filesz) return std::nullopt;
  UnwindTable t;
  t.header = hdr->p_vaddr + *bias;
  t.table = t.header + 12;
  t.entries = count;
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
