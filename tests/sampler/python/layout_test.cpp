// Sanity of the generated layout tables, the _Py_DebugOffsets reader (against the copy in every
// real 3.13+ process installed) and the helpers of interpreter discovery.
#include "sampler/python/layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

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
  for (int minor = 7; minor <= 15; ++minor) {
    auto layout = layout_for(3, minor);
    ASSERT_TRUE(layout) << "3." << minor << ": " << layout.message();
    EXPECT_EQ(missing_fields(*layout), "") << "3." << minor;
    // Plausibility: offsets inside their structs, pointers aligned.
    EXPECT_LT(layout->tstate_thread_id, layout->tstate_size);
    EXPECT_LE(layout->frame_previous + 8, layout->frame_size);
    EXPECT_LE(layout->code_linetable + 8, layout->code_size);
    EXPECT_EQ(layout->frame_previous % 8, 0u);
    EXPECT_EQ(layout->object_type, 8u);
    // Exactly one place holds the collector's flag: the runtime until 3.8, the interpreter after.
    EXPECT_EQ(layout->runtime_gc_collecting != kAbsent, minor <= 8) << "3." << minor;
    EXPECT_EQ(layout->interp_gc_collecting != kAbsent, minor >= 9) << "3." << minor;
    // sys.monitoring's data (3.12+): a pointer inside the code object, which the walker reads
    // with the rest of its header.
    EXPECT_EQ(layout->code_monitoring != kAbsent, minor >= 12) << "3." << minor;
    if (minor >= 12) {
      EXPECT_LE(layout->code_monitoring + 8, layout->code_size) << "3." << minor;
      EXPECT_EQ(layout->code_monitoring % 8, 0u) << "3." << minor;
      EXPECT_EQ(layout->monitoring_per_instruction_opcodes % 8, 0u) << "3." << minor;
      EXPECT_LT(layout->monitoring_lines, layout->monitoring_per_instruction_opcodes);
    }
  }
  EXPECT_EQ(supported_range(), "3.7 to 3.15");
}

TEST(Layout, UnsupportedVersionsAreNamed) {
  for (auto [major, minor] : {std::pair{3, 6}, std::pair{3, 16}, std::pair{2, 7}}) {
    auto layout = layout_for(major, minor);
    ASSERT_FALSE(layout);
    EXPECT_EQ(layout.code(), ErrorCode::UnsupportedVersion);
    EXPECT_NE(layout.message().find(std::to_string(major) + "." + std::to_string(minor)),
              std::string::npos);
  }
}

TEST(Layout, EveryDebugOffsetsVersionHasTheFieldsTheSamplerTakes) {
  for (int minor = 13; minor <= 15; ++minor) {
    const auto fields = debug_offset_fields(minor);
    for (std::string_view want :
         {"runtime_state.interpreters_head", "thread_state.current_frame",
          "interpreter_frame.executable", "interpreter_frame.owner", "code_object.co_code_adaptive",
          "unicode_object.state", "interpreter_state.gc", "gc.collecting"}) {
      EXPECT_NE(std::find(fields.begin(), fields.end(), want), fields.end())
          << "3." << minor << " lacks " << want;
    }
    EXPECT_NE(generated(minor, "debug.size"), kAbsent);
    EXPECT_LE(generated(minor, "debug.size"), kDebugOffsetsReadSize);
  }
  // 3.15 adds the type and unicode sizes that earlier versions take from the table.
  const auto f15 = debug_offset_fields(15);
  EXPECT_NE(std::find(f15.begin(), f15.end(), "type_object.tp_basicsize"), f15.end());
  const auto f14 = debug_offset_fields(14);
  EXPECT_EQ(std::find(f14.begin(), f14.end(), "type_object.tp_basicsize"), f14.end());
}

// The _Py_DebugOffsets copy of every installed 3.13+ interpreter, read in the process itself.
struct DebugCopy {
  std::string version;
  int minor;
  std::vector<std::byte> bytes;
};

std::vector<DebugCopy> debug_copies() {
  std::vector<DebugCopy> out;
  for (const auto& interp : interpreter_data()["interpreters"]) {
    const std::string hex = interp["debug_offsets"];
    if (hex.empty()) continue;
    const std::string version = interp["version"];
    const auto raw = from_hex(hex);
    std::vector<std::byte> bytes(raw.size());
    std::memcpy(bytes.data(), raw.data(), raw.size());
    out.push_back({version, std::stoi(version.substr(2)), std::move(bytes)});
  }
  return out;
}

void set_version(std::vector<std::byte>& bytes, int minor) {
  std::uint64_t v = (3ull << 24) | (static_cast<std::uint64_t>(minor) << 16) | 0xf0;
  std::memcpy(bytes.data() + 8, &v, 8);
}

TEST(Layout, RealDebugOffsetsAgreeWithTheGeneratedTable) {
  const auto copies = debug_copies();
  if (copies.empty()) GTEST_SKIP() << "no CPython 3.13+ installed";
  for (const auto& copy : copies) {
    SCOPED_TRACE(copy.version);
    auto layout = layout_from_debug_offsets(3, copy.minor, copy.bytes);
    ASSERT_TRUE(layout) << layout.message();
    EXPECT_EQ(layout->borrowed_minor, 0);
    const Layout table = *layout_for(3, copy.minor);
    // Sizes may grow in patch releases (read from the target); offsets inside may not.
    EXPECT_EQ(layout->runtime_interpreters_head, table.runtime_interpreters_head);
    EXPECT_EQ(layout->interp_threads_head, table.interp_threads_head);
    EXPECT_EQ(layout->interp_modules, table.interp_modules);
    EXPECT_EQ(layout->interp_ceval_gil, table.interp_ceval_gil);
    EXPECT_EQ(layout->gil_locked, table.gil_locked);
    EXPECT_EQ(layout->gil_last_holder, table.gil_last_holder);
    EXPECT_EQ(layout->tstate_current_frame, table.tstate_current_frame);
    EXPECT_EQ(layout->tstate_thread_id, table.tstate_thread_id);
    EXPECT_EQ(layout->tstate_native_thread_id, table.tstate_native_thread_id);
    EXPECT_EQ(layout->frame_size, table.frame_size);
    EXPECT_EQ(layout->frame_code, table.frame_code);
    EXPECT_EQ(layout->frame_instr, table.frame_instr);
    EXPECT_EQ(layout->frame_owner, table.frame_owner);
    EXPECT_EQ(layout->code_qualname, table.code_qualname);
    EXPECT_EQ(layout->code_code_adaptive, table.code_code_adaptive);
    EXPECT_EQ(layout->unicode_ascii_size, table.unicode_ascii_size);
    EXPECT_EQ(layout->type_basicsize, table.type_basicsize);
    // The collector's flag, composed from two debug offsets, is where the headers put it.
    EXPECT_NE(layout->interp_gc_collecting, kAbsent);
    EXPECT_EQ(layout->interp_gc_collecting, table.interp_gc_collecting);
    EXPECT_EQ(missing_fields(*layout), "");
    EXPECT_EQ(layout->code_monitoring, table.code_monitoring);
    // The monitoring data's line entries gained a size byte in 3.13.3: the full version decides.
    const int micro = std::stoi(copy.version.substr(copy.version.rfind('.') + 1));
    EXPECT_EQ(layout->monitoring_lines_sized, copy.minor > 13 || micro >= 3);

    auto broken = copy.bytes;
    broken[0] = std::byte{'X'};
    EXPECT_FALSE(layout_from_debug_offsets(3, copy.minor, broken));
    // The struct's own version must be the one Py_Version gave.
    EXPECT_FALSE(layout_from_debug_offsets(3, copy.minor == 13 ? 14 : 13, copy.bytes));
  }
}

// Free-threaded builds cannot be built here (Debian has none): the flag is set in a real
// default build's copy, which is all the reader looks at to refuse.
TEST(Layout, FreeThreadedBuildsAreRefusedByName) {
  const auto copies = debug_copies();
  if (copies.empty()) GTEST_SKIP() << "no CPython 3.13+ installed";
  for (auto copy : copies) {
    copy.bytes[16] = std::byte{1};
    auto layout = layout_from_debug_offsets(3, copy.minor, copy.bytes);
    ASSERT_FALSE(layout) << copy.version;
    EXPECT_EQ(layout.code(), ErrorCode::UnsupportedVersion);
    EXPECT_NE(layout.message().find("free-threaded"), std::string::npos) << layout.message();
    EXPECT_NE(layout.message().find("python3." + std::to_string(copy.minor) + "t"),
              std::string::npos);
  }
}

// A minor version newer than dapprof cannot run here; its copy is a real newest one relabelled.
TEST(Layout, ANewerMinorWithAKnownShapeIsSampledAsUntested) {
  auto copies = debug_copies();
  if (copies.empty()) GTEST_SKIP() << "no CPython 3.13+ installed";
  auto newest = *std::max_element(copies.begin(), copies.end(),
                                  [](const auto& a, const auto& b) { return a.minor < b.minor; });
  const Layout known = *layout_from_debug_offsets(3, newest.minor, newest.bytes);
  set_version(newest.bytes, 16);
  auto layout = layout_from_debug_offsets(3, 16, newest.bytes);
  ASSERT_TRUE(layout) << layout.message();
  EXPECT_EQ(layout->minor, 16);
  EXPECT_EQ(layout->borrowed_minor, newest.minor);
  EXPECT_EQ(layout->tstate_current_frame, known.tstate_current_frame);
  EXPECT_EQ(layout->frame_owner, known.frame_owner);
  EXPECT_EQ(layout->code_code_adaptive, known.code_code_adaptive);
  EXPECT_TRUE(layout->at_least(3, 16));
}

TEST(Layout, ANewerMinorWithAnUnknownShapeIsRefusedByName) {
  auto copies = debug_copies();
  if (copies.empty()) GTEST_SKIP() << "no CPython 3.13+ installed";
  for (auto copy : copies) {
    // A field added to runtime_state moves everything after it by one word.
    copy.bytes.insert(copy.bytes.begin() + 40, 8, std::byte{0});
    set_version(copy.bytes, 16);
    auto layout = layout_from_debug_offsets(3, 16, copy.bytes);
    ASSERT_FALSE(layout) << copy.version;
    EXPECT_EQ(layout.code(), ErrorCode::UnsupportedVersion);
    EXPECT_NE(layout.message().find("Python 3.16"), std::string::npos) << layout.message();
    EXPECT_NE(layout.message().find("update dapprof"), std::string::npos);
  }
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
    model::Frame f;
    f.function = function;
    f.file = file;
    return f;
  };
  std::vector<model::Frame> frames{frame("Condition.wait", "/usr/lib/python3.11/threading.py")};
  EXPECT_TRUE(in_waiting_function(frames));
  frames[0] = frame("wait", "/x/lib/python3.9/threading.py");
  EXPECT_TRUE(in_waiting_function(frames));
  frames[0] = frame("spin", "/tmp/threading.py.txt");
  EXPECT_FALSE(in_waiting_function(frames));
  EXPECT_FALSE(in_waiting_function({}));
}

}  // namespace
}  // namespace dapprof::sampler::python
