// The two ELF readers (process::ElfFile for the interpreter's symbols, native::ElfSymbols for
// native frames) on files cut short or corrupted: an error that names the file, never a crash or
// a read outside the file. The input is this test program itself, cut and patched in a temporary
// directory.
#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sampler/native/elf_symbols.hpp"
#include "sampler/process/elf.hpp"

namespace dapprof::sampler::native {
namespace {

namespace fs = std::filesystem;

class ElfInput : public testing::Test {
 protected:
  void SetUp() override {
    std::ifstream in("/proc/self/exe", std::ios::binary);
    image_.assign(std::istreambuf_iterator<char>(in), {});
    ASSERT_GT(image_.size(), sizeof(Elf64_Ehdr));
    std::memcpy(&header_, image_.data(), sizeof header_);
    dir_ = fs::temp_directory_path() / ("dapprof-elf-input-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::vector<char>& bytes) {
    const auto path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<long>(bytes.size()));
    return path;
  }

  // Both readers on one file: either both read it or both refuse it with its path in the message.
  static void expect_refused(const std::string& path) {
    auto elf = process::ElfFile::open(path);
    ASSERT_FALSE(elf) << path;
    EXPECT_NE(elf.message().find(path), std::string::npos) << elf.message();
    auto symbols = ElfSymbols::open(path);
    ASSERT_FALSE(symbols) << path;
    EXPECT_NE(symbols.message().find(path), std::string::npos) << symbols.message();
  }

  std::vector<char> image_;
  Elf64_Ehdr header_{};
  fs::path dir_;
};

TEST_F(ElfInput, TheWholeFileReadsAndNamesItsFunctions) {
  const auto path = write("whole", image_);
  auto elf = process::ElfFile::open(path);
  ASSERT_TRUE(elf) << elf.message();
  EXPECT_TRUE(elf->symbol("main").has_value());
  auto symbols = ElfSymbols::open(path);
  ASSERT_TRUE(symbols) << symbols.message();
  EXPECT_FALSE(symbols->section(".text").empty());
}

TEST_F(ElfInput, CutBeforeTheSectionHeadersIsRefused) {
  // The section header table is at the end of a linked file: every cut short of its end is
  // refused, at the header, in the middle of the file, and one byte short.
  const std::uint64_t table_end =
      header_.e_shoff + std::uint64_t{header_.e_shnum} * header_.e_shentsize;
  ASSERT_LE(table_end, image_.size());
  for (std::uint64_t cut :
       {std::uint64_t{0}, std::uint64_t{3}, std::uint64_t{sizeof(Elf64_Ehdr) - 1},
        std::uint64_t{sizeof(Elf64_Ehdr)}, table_end / 2, header_.e_shoff + 1, table_end - 1}) {
    SCOPED_TRACE(cut);
    expect_refused(
        write("cut-" + std::to_string(cut),
              std::vector<char>(image_.begin(), image_.begin() + static_cast<long>(cut))));
  }
}

TEST_F(ElfInput, HeadersPointingOutsideTheFileAreRefused) {
  auto patched = [&](auto&& patch) {
    auto bytes = image_;
    Elf64_Ehdr eh = header_;
    patch(eh);
    std::memcpy(bytes.data(), &eh, sizeof eh);
    return bytes;
  };
  expect_refused(
      write("phoff", patched([](Elf64_Ehdr& eh) { eh.e_phoff = ~std::uint64_t{0} - 8; })));
  expect_refused(write("shoff", patched([&](Elf64_Ehdr& eh) { eh.e_shoff = image_.size() - 10; })));
  expect_refused(write("shnum", patched([](Elf64_Ehdr& eh) { eh.e_shnum = 0xffff; })));
  expect_refused(
      write("class", patched([](Elf64_Ehdr& eh) { eh.e_ident[EI_CLASS] = ELFCLASS32; })));
  expect_refused(write("magic", patched([](Elf64_Ehdr& eh) { eh.e_ident[1] = 'X'; })));
}

TEST_F(ElfInput, SectionsOutsideTheFileAreNeverFollowed) {
  // Moves sections past the end of the file: symbol tables there make the file unusable; other
  // sections (code, line tables) read as empty.
  auto moved = [&](bool symbol_tables) {
    auto bytes = image_;
    for (unsigned i = 0; i < header_.e_shnum; ++i) {
      Elf64_Shdr sh;
      const auto at = header_.e_shoff + std::uint64_t{i} * header_.e_shentsize;
      std::memcpy(&sh, bytes.data() + at, sizeof sh);
      const bool table = sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM;
      if (table != symbol_tables || i == header_.e_shstrndx || sh.sh_type == SHT_STRTAB) continue;
      sh.sh_offset = image_.size() + 4096;
      sh.sh_size = ~std::uint64_t{0} / 2;
      std::memcpy(bytes.data() + at, &sh, sizeof sh);
    }
    return bytes;
  };
  expect_refused(write("symbol-tables", moved(true)));

  const auto path = write("sections", moved(false));
  auto symbols = ElfSymbols::open(path);
  ASSERT_TRUE(symbols) << symbols.message();
  EXPECT_TRUE(symbols->section(".text").empty());
  EXPECT_TRUE(symbols->section(".debug_line").empty());
  auto elf = process::ElfFile::open(path);
  ASSERT_TRUE(elf) << elf.message();
  EXPECT_TRUE(elf->symbol("main").has_value());
}

}  // namespace
}  // namespace dapprof::sampler::native
