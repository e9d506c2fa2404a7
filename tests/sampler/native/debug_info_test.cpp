// Where names for stripped code come from: debug file candidates, build ids, MiniDebugInfo's
// xz, and CPython's method tables in a made-up memory image.
#include <gtest/gtest.h>
#include <lzma.h>

#include <cstring>
#include <string>
#include <vector>

#include "sampler/native/debug_files.hpp"
#include "sampler/native/elf_symbols.hpp"
#include "sampler/native/method_names.hpp"
#include "sampler/native/mini_debug_info.hpp"

namespace dapprof::sampler::native {
namespace {

TEST(DebugFiles, CandidatesByBuildIdThenDebuglinkAsGdbLooks) {
  const auto c = debug_file_candidates("/usr/lib/libpython3.12.so.1.0", "abcdef12",
                                       DebugLink{"libpython3.12.so.1.0.debug", 7},
                                       {"/usr/lib/debug", "/opt/dbg"});
  EXPECT_EQ(c, (std::vector<std::string>{
                   "/usr/lib/debug/.build-id/ab/cdef12.debug",
                   "/opt/dbg/.build-id/ab/cdef12.debug",
                   "/usr/lib/libpython3.12.so.1.0.debug",
                   "/usr/lib/.debug/libpython3.12.so.1.0.debug",
                   "/usr/lib/debug/usr/lib/libpython3.12.so.1.0.debug",
                   "/opt/dbg/usr/lib/libpython3.12.so.1.0.debug",
               }));
  // A debuglink is a file name: one with a directory in it is not followed anywhere.
  EXPECT_TRUE(
      debug_file_candidates("/bin/x", "", DebugLink{"../../etc/passwd", 0}, {"/d"}).empty());
}

TEST(DebugFiles, ThisProgramsBuildIdIsHex) {
  auto self = ElfSymbols::open("/proc/self/exe");
  ASSERT_TRUE(self) << self.message();
  const auto id = build_id_of(*self);
  ASSERT_GE(id.size(), 16u);  // Debian's toolchain links every program with one
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  EXPECT_TRUE(matches(*self, id, std::nullopt));
  EXPECT_FALSE(matches(*self, "00" + id.substr(2), std::nullopt));
}

std::vector<std::byte> xz(const std::string& text) {
  std::vector<std::byte> out(text.size() + 1024);
  std::size_t used = 0;
  const auto ret = lzma_easy_buffer_encode(
      6, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const std::uint8_t*>(text.data()), text.size(),
      reinterpret_cast<std::uint8_t*>(out.data()), &used, out.size());
  EXPECT_EQ(ret, LZMA_OK);
  out.resize(used);
  return out;
}

TEST(MiniDebugInfo, XzRoundTripAndBadInput) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "symbol_" + std::to_string(i) + "\n";
  const auto packed = xz(text);
  auto unpacked = xz_decompress(packed);
  ASSERT_TRUE(unpacked) << unpacked.message();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(unpacked->data()), unpacked->size()), text);

  EXPECT_FALSE(xz_decompress(std::span(packed).first(packed.size() / 2)));
  std::vector<std::byte> garbage(64, std::byte{0x5a});
  EXPECT_FALSE(xz_decompress(garbage));
  auto limited = xz_decompress(packed, 4096);
  ASSERT_FALSE(limited);
  EXPECT_NE(limited.message().find("more than 4096"), std::string::npos) << limited.message();
}

TEST(MiniDebugInfo, AModuleWithoutItSaysSo) {
  auto self = ElfSymbols::open("/proc/self/exe");
  ASSERT_TRUE(self);
  auto mini = open_mini_debug_info(*self, "self");
  ASSERT_FALSE(mini);
  EXPECT_NE(mini.message().find("no MiniDebugInfo"), std::string::npos);
}

// A made-up interpreter: data at 0x10000, strings at 0x20000, code at 0x400000.
class Image {
 public:
  static constexpr std::uint64_t kData = 0x10000, kStrings = 0x20000;
  static constexpr std::uint64_t kTypeType = 0x1ff00, kModuleDefType = 0x1ff80;
  Image() : data_(0x4000), strings_() { image_.code.push_back({0x400000, 0x500000}); }

  std::uint64_t string(const std::string& s) {
    const std::uint64_t at = kStrings + strings_.size();
    for (char c : s) strings_.push_back(static_cast<std::byte>(c));
    strings_.push_back(std::byte{0});
    return at;
  }
  void put(std::uint64_t address, std::uint64_t value) {
    std::memcpy(data_.data() + (address - kData), &value, 8);
  }
  // A PyMethodDef table at `at`; entries (name, meth, flags); returns `at`.
  std::uint64_t table(std::uint64_t at,
                      std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> rows) {
    std::uint64_t p = at;
    for (auto& [name, meth, flags] : rows) {
      put(p, string(name));
      put(p + 8, meth);
      put(p + 16, flags);
      put(p + 24, 0);
      p += 32;
    }
    put(p, 0);  // the sentinel
    return at;
  }
  MethodNames scan() {
    image_.regions = {{kData, data_}, {kStrings, strings_}};
    return MethodNames::scan(image_, kTypeType, kModuleDefType);
  }

 private:
  MemoryImage image_;
  std::vector<std::byte> data_, strings_;
};

TEST(MethodNames, TypesModulesAndSpecsName) {
  Image m;
  // A static type (ob_type = &PyType_Type) "list" with tp_methods.
  const std::uint64_t list = 0x10000;
  m.put(list + 8, Image::kTypeType);
  m.put(list + 24, m.string("list"));
  m.put(list + 232, m.table(0x11000, {{"sort", 0x401000, 0x82}, {"append", 0x401100, 0x8}}));
  // A module definition not yet imported (ob_type NULL) and an imported one.
  const std::uint64_t time = 0x10400;
  m.put(time + 40, m.string("time"));
  m.put(time + 64, m.table(0x11400, {{"sleep", 0x402000, 0x8}}));
  const std::uint64_t builtins = 0x10500;
  m.put(builtins + 8, Image::kModuleDefType);
  m.put(builtins + 16, 0x402f00);  // m_init is no reason to doubt an imported one
  m.put(builtins + 40, m.string("builtins"));
  m.put(builtins + 64, m.table(0x11800, {{"sorted", 0x403000, 0x82}}));
  // A heap type's spec: {name, basicsize, itemsize, flags, slots} with Py_tp_methods.
  const std::uint64_t spec = 0x10600, slots = 0x10700;
  m.put(spec, m.string("_json.Scanner"));
  m.put(spec + 24, slots);
  m.put(slots, 5);  // Py_tp_dealloc... any slot before
  m.put(slots + 8, 0x404100);
  m.put(slots + 16, 64);  // Py_tp_methods
  m.put(slots + 24, m.table(0x11c00, {{"scan_once", 0x404000, 0x1}}));
  // A table with an entry whose flags are not METH_* flags: not a table, nothing taken.
  const std::uint64_t bad = 0x10800;
  m.put(bad + 8, Image::kTypeType);
  m.put(bad + 24, m.string("bad"));
  m.put(bad + 232, m.table(0x12000, {{"ok", 0x405000, 0x1}, {"no", 0x405100, 0x10000}}));
  // A method pointing outside the code: not taken either.
  const std::uint64_t outside = 0x10c00;
  m.put(outside + 8, Image::kTypeType);
  m.put(outside + 24, m.string("outside"));
  m.put(outside + 232, m.table(0x12400, {{"f", 0x900000, 0x1}}));

  const auto names = m.scan();
  const auto name = [&](std::uint64_t a) { return names.at(a) ? *names.at(a) : std::string(); };
  EXPECT_EQ(name(0x401000), "list.sort");
  EXPECT_EQ(name(0x401100), "list.append");
  EXPECT_EQ(name(0x402000), "time.sleep");
  EXPECT_EQ(name(0x403000), "sorted");
  EXPECT_EQ(name(0x404000), "_json.Scanner.scan_once");
  EXPECT_EQ(name(0x405000), "");
  EXPECT_EQ(name(0x900000), "");
  EXPECT_EQ(name(0x401001), "");  // exact starts only
}

}  // namespace
}  // namespace dapprof::sampler::native
