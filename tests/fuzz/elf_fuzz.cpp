// The two ELF readers on arbitrary files: process::ElfFile (the interpreter's symbols and
// sections, its load bias) and native::ElfSymbols (native frames' functions, the unwind index,
// the DWARF sections it hands the line-table reader). A file is whatever a target maps, so each
// must read it or refuse it with a message, never crash or read outside it. The readers open a
// path and map it, as they do in the sampler: the input is written to a memory file first.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sampler/native/elf_symbols.hpp"
#include "sampler/native/line_table.hpp"
#include "sampler/process/elf.hpp"

namespace {

// A memory file holding the input, closed when done; its /proc/self/fd path opens it again.
class MemoryFile {
 public:
  MemoryFile(const std::uint8_t* data, std::size_t size) : fd_(memfd_create("elf", MFD_CLOEXEC)) {
    if (fd_ < 0) __builtin_trap();
    for (std::size_t done = 0; done < size;) {
      const ssize_t n = ::write(fd_, data + done, size - done);
      if (n <= 0) __builtin_trap();
      done += static_cast<std::size_t>(n);
    }
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  ~MemoryFile() { ::close(fd_); }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

void check_elf_file(const std::string& path) {
  using namespace dapprof::sampler::process;
  auto elf = ElfFile::open(path);
  if (!elf) {
    if (elf.message().find(path) == std::string::npos) __builtin_trap();  // names the file
    return;
  }
  // What attach asks of the interpreter's file.
  (void)elf->symbol("_PyRuntime");
  (void)elf->symbol("Py_Version");
  (void)elf->section(".PyRuntime");
  const std::vector<MapEntry> maps{
      {0x555555554000, 0x555555556000, 0, "r--p", path},
      {0x7f0000000000, 0x7f0000100000, elf->first_load_offset() & ~std::uint64_t{4095}, "r-xp",
       path},
  };
  (void)elf->load_bias(maps);
}

void check_elf_symbols(const std::string& path) {
  using namespace dapprof::sampler::native;
  auto symbols = ElfSymbols::open(path);
  if (!symbols) {
    if (symbols.message().find(path) == std::string::npos) __builtin_trap();
    return;
  }
  // Lookups as the symbolizer makes them: a file offset of a frame's address, its link-time
  // address, the function there and its line. The offsets cover the tiny seeds' code.
  const auto lines = LineTable::open(*symbols);
  for (const std::uint64_t offset : {0x0ul, 0x40ul, 0x144ul, 0x150ul, 0x229ul, 0x240ul, 0x2b0ul,
                                     0x2c0ul, 0x2d5ul, 0x1000ul, ~0x0ul}) {
    const std::uint64_t vaddr = symbols->vaddr_of_offset(offset).value_or(offset);
    (void)symbols->function_at(vaddr);
    if (lines) (void)lines->find(vaddr);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const MemoryFile file(data, size);
  const std::string path = file.path();
  check_elf_file(path);
  check_elf_symbols(path);
  return 0;
}
