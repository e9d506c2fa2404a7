// Sanity of the generated layout tables, the _Py_DebugOffsets reader (against the copy in a real
// 3.13 process) and the helpers of interpreter discovery.
#include "sampler/python/layout.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "interpreter_data.hpp"
#include "sampler/python/activity.hpp"
#include "sampler/python/discovery.hpp"
#include "sampler/python/layouts_generated.hpp"

namespace dapprof::sampler::python {
namespace {

using testing::from_hex;
using testing::interpreter_data;

std::uint64_t generated(int minor, std::string_view name) {
  for (const auto& t : generated_layouts()) {
    if (t.minor != minor) continue;
    for (const auto& f : t.fields) {
      if (f.name == name) return f.value;
    }
  }
  return kAbsent;
}

TEST(Layout, EverySupportedVersionHasACompleteTable) {
  for (int minor = 8; minor <= 13; ++minor) {
    auto layout = layout_for(3, minor);
    ASSERT_TRUE(layout) << "3." << minor << ": " << layout.message();
    EXPECT_EQ(missing_fields(*layout), "") << "3." << minor;
    // Plausibility: offsets inside their structs, pointers aligned.
    EXPECT_LT(layout->tstate_thread_id, layout->tstate_size);
    EXPECT_LE(layout->frame_previous + 8, layout->frame_size);
    EXPECT_LE(layout->code_linetable + 8, layout->code_size);
    EXPECT_EQ(layout->frame_previous % 8, 0u);
    EXPECT_EQ(layout->object_type, 8u);
  }
}

TEST(Layout, UnsupportedVersionsAreNamed) {
  for (auto [major, minor] : {std::pair{3, 7}, std::pair{3, 14}, std::pair{2, 7}}) {
    auto layout = layout_for(major, minor);
    ASSERT_FALSE(layout);
    EXPECT_EQ(layout.code(), ErrorCode::UnsupportedVersion);
    EXPECT_NE(layout.message().find(std::to_string(major) + "." + std::to_string(minor)),
              std::string::npos);
  }
}

TEST(Layout, DebugOffsetIndexesMatchTheHeaders) {
  // apply_debug_offsets indexes _Py_DebugOffsets as uint64 words; the generator measured where
  // those fields really are.
  EXPECT_EQ(generated(13, "debug.size"), kDebugOffsetsSize);
  EXPECT_EQ(generated(13, "debug.interpreters_head"), 5 * 8u);
  EXPECT_EQ(generated(13, "debug.gil_holder"), 18 * 8u);
  EXPECT_EQ(generated(13, "debug.native_thread_id"), 25 * 8u);
  EXPECT_EQ(generated(13, "debug.frame_owner"), 33 * 8u);
  EXPECT_EQ(generated(13, "debug.code_adaptive"), 43 * 8u);
  EXPECT_EQ(generated(13, "debug.type_flags"), 49 * 8u);
  EXPECT_EQ(generated(13, "debug.dict_values"), 58 * 8u);
  EXPECT_EQ(generated(13, "debug.long_digit"), 63 * 8u);
  EXPECT_EQ(generated(13, "debug.bytes_sval"), 66 * 8u);
  EXPECT_EQ(generated(13, "debug.unicode_ascii_size"), 70 * 8u);
}

TEST(Layout, RealDebugOffsetsAgreeWithTheGeneratedTable) {
  bool seen = false;
  for (const auto& interp : interpreter_data()["interpreters"]) {
    const std::string hex = interp["debug_offsets"];
    if (hex.empty()) continue;
    seen = true;
    const std::string version = interp["version"];
    auto layout = layout_for(3, std::stoi(version.substr(2)));
    ASSERT_TRUE(layout);
    const Layout table = *layout;
    const auto bytes = from_hex(hex);
    ASSERT_TRUE(apply_debug_offsets(
        *layout, std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size())));
    EXPECT_EQ(layout->runtime_interpreters_head, table.runtime_interpreters_head);
    EXPECT_EQ(layout->interp_threads_head, table.interp_threads_head);
    EXPECT_EQ(layout->interp_modules, table.interp_modules);
    EXPECT_EQ(layout->interp_ceval_gil, table.interp_ceval_gil);
    EXPECT_EQ(layout->gil_locked, table.gil_locked);
    EXPECT_EQ(layout->gil_last_holder, table.gil_last_holder);
    EXPECT_EQ(layout->tstate_current_frame, table.tstate_current_frame);
    EXPECT_EQ(layout->tstate_native_thread_id, table.tstate_native_thread_id);
    EXPECT_EQ(layout->frame_code, table.frame_code);
    EXPECT_EQ(layout->frame_instr, table.frame_instr);
    EXPECT_EQ(layout->frame_owner, table.frame_owner);
    EXPECT_EQ(layout->code_qualname, table.code_qualname);
    EXPECT_EQ(layout->code_code_adaptive, table.code_code_adaptive);
    EXPECT_EQ(layout->unicode_ascii_size, table.unicode_ascii_size);
    EXPECT_EQ(missing_fields(*layout), "");

    auto broken = bytes;
    broken[0] = 'X';
    auto s = apply_debug_offsets(
        *layout, std::span(reinterpret_cast<const std::byte*>(broken.data()), broken.size()));
    EXPECT_FALSE(s);
  }
  if (!seen) GTEST_SKIP() << "no CPython 3.13 installed";
}

TEST(Discovery, FindsTheVersionStringOfSysVersion) {
  using namespace std::string_literals;
  const std::string image = "\0\0 3.9.1 junk\0"s + "3.9.18 (main, Nov 29 2026, 10:00:00) [GCC]\0"s;
  EXPECT_EQ(find_version_string(image, 3, 9), "3.9.18");
  EXPECT_EQ(find_version_string("\0"
                                "3.10.0rc2 (main)"s,
                                3, 10),
            "3.10.0");
  EXPECT_EQ(find_version_string("\0"
                                "3.10.0"s,
                                3, 10),
            "");
  EXPECT_EQ(find_version_string("\0"
                                "3.8.1 ("s,
                                3, 9),
            "");
}

TEST(Activity, WaitingFunctionsAreIdle) {
  auto frame = [](const char* function, const char* file) {
    Frame f;
    f.function = function;
    f.file = file;
    return f;
  };
  std::vector<Frame> frames{frame("Condition.wait", "/usr/lib/python3.11/threading.py")};
  EXPECT_TRUE(in_waiting_function(frames));
  frames[0] = frame("wait", "/x/lib/python3.9/threading.py");
  EXPECT_TRUE(in_waiting_function(frames));
  frames[0] = frame("spin", "/tmp/threading.py.txt");
  EXPECT_FALSE(in_waiting_function(frames));
  EXPECT_FALSE(in_waiting_function({}));
}

}  // namespace
}  // namespace dapprof::sampler::python
