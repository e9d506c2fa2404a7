// ELF symbols and load bias against every interpreter: find _PyRuntime in a running Python.
#include "sampler/process/elf.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include "child.hpp"
#include "sampler/process/maps.hpp"
#include "sampler/process/memory.hpp"

namespace dapprof::sampler::process {
namespace {

class ElfPerInterpreter : public testing::TestWithParam<test::Interpreter> {};

// The file holding the interpreter: libpython when the executable links it dynamically.
std::string interpreter_image(const std::vector<MapEntry>& maps, const std::string& exe) {
  for (const auto& m : maps)
    if (m.path.find("/libpython3") != std::string::npos) return m.path;
  return std::filesystem::canonical(exe).string();
}

// The executable as the maps name it. For a process in a root of its own that is a path inside
// the root: the host reaches it only through /proc/PID/root.
std::string executable_in_maps(const std::vector<MapEntry>& maps) {
  for (const auto& m : maps)
    if (m.path.find("/python3") != std::string::npos) return m.path;
  return "";
}

TEST_P(ElfPerInterpreter, FindsPyRuntimeInRunningProcess) {
  const auto& interp = GetParam();
  test::Child child(
      {interp.path, "-c", "import sys; print('ready', flush=True); sys.stdin.read()"});
  ASSERT_EQ(child.read_line(), "ready");
  auto maps = read_maps(child.pid());
  ASSERT_TRUE(maps) << maps.message();
  const bool in_root = !interp.root.empty();
  const auto image = in_root ? executable_in_maps(*maps) : interpreter_image(*maps, interp.path);
  // Debian's, the host's and the unstable root's, link libpython statically.
  const bool debian = interp.label.starts_with("debian") || interp.label.starts_with("sid-");
  if (!debian) {
    EXPECT_NE(image.find("libpython3"), std::string::npos) << "pyenv pythons load libpython";
  }

  // Open it through the path the user gave (a symlink for Debian's python) when it is the
  // executable, to exercise matching maps entries through the canonical path; in a root, by
  // the way in from outside.
  const std::string opened = in_root  ? "/proc/" + std::to_string(child.pid()) + "/root" + image
                             : debian ? interp.path
                                      : image;
  auto elf = ElfFile::open(opened);
  ASSERT_TRUE(elf) << elf.message();
  EXPECT_EQ(elf->position_independent(), !debian);
  const auto runtime = elf->symbol("_PyRuntime");
  ASSERT_TRUE(runtime.has_value()) << "_PyRuntime not in " << image;
  EXPECT_FALSE(elf->symbol("no_such_symbol_in_python").has_value());
  const auto bss = elf->section(".bss");
  ASSERT_TRUE(bss.has_value());
  EXPECT_GT(bss->size, 0u);
  EXPECT_FALSE(elf->section(".no_such_section").has_value());

  // Opened through /proc/PID/root, the file is named in the maps as the target sees it.
  const auto bias = elf->load_bias(*maps, image);
  ASSERT_TRUE(bias.has_value()) << image << " not found in maps";
  if (debian) {
    EXPECT_EQ(*bias, 0u) << "a non-PIE executable loads at its link address";
  }
  const Address addr = *runtime + *bias;

  bool mapped = false;
  for (const auto& m : *maps)
    if (addr >= m.start && addr < m.end) mapped = m.perms[0] == 'r';
  EXPECT_TRUE(mapped) << std::hex << addr;

  ProcessMemory mem(child.pid());
  std::array<char, 64> head{};
  auto s = mem.read(addr, head.data(), head.size());
  ASSERT_TRUE(s) << s.message();
  if (interp.major == 3 && interp.minor >= 13) {
    // _Py_DebugOffsets starts with this cookie.
    EXPECT_EQ(std::string(head.data(), 8), "xdebugpy");
  } else {
    // _PyRuntimeState starts with its initialisation flags, all 0 or 1, several set by now.
    std::array<std::int32_t, 4> flags{};
    std::memcpy(flags.data(), head.data(), sizeof flags);
    int set = 0;
    for (auto f : flags) {
      EXPECT_TRUE(f == 0 || f == 1) << f;
      set += f;
    }
    EXPECT_GE(set, 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Pythons, ElfPerInterpreter, testing::ValuesIn(test::interpreters()),
                         [](const testing::TestParamInfo<test::Interpreter>& param_info) {
                           std::string name = param_info.param.label;
                           for (auto& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

TEST(Elf, RejectsNonElf) {
  auto elf = ElfFile::open(test::target_script("buffer.py"));
  ASSERT_FALSE(elf);
  EXPECT_NE(elf.message().find("ELF"), std::string::npos);
  auto missing = ElfFile::open("/nonexistent/libpython.so");
  ASSERT_FALSE(missing);
}

}  // namespace
}  // namespace dapprof::sampler::process
