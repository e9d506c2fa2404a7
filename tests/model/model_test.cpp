#include <gtest/gtest.h>

#include <set>

#include "model/frame.hpp"
#include "model/profile_format.hpp"
#include "model/sampling_settings.hpp"
#include "model/snapshot.hpp"

namespace dapprof::model {
namespace {

TEST(Frame, KindIsPartOfTheFrame) {
  const Frame python{"run", "/debugpy/_vendored/pydevd/pydevd.py", 10, FrameKind::Python, ""};
  Frame debugger = python;
  debugger.kind = FrameKind::Debugger;
  EXPECT_NE(debugger, python);
  EXPECT_FALSE(python.native());
  EXPECT_FALSE(debugger.native());
  EXPECT_TRUE((Frame{"memcpy", "", 0, FrameKind::Native, "/lib/libc.so.6"}).native());
  EXPECT_EQ(Frame{}.kind, FrameKind::Python);  // what the sampler's Python frames are
}

TEST(ThreadStack, StatusFromActivityAndGil) {
  ThreadStack t;
  EXPECT_EQ(t.status(), "idle");
  t.active = true;
  EXPECT_EQ(t.status(), "active");
  t.owns_gil = true;
  EXPECT_EQ(t.status(), "active+gil");
}

TEST(SamplingSettings, DefaultsAreRecordsAndStartProfilingsDefaults) {
  const SamplingSettings s;
  EXPECT_EQ(s.rate_hz, 100);
  EXPECT_EQ(s, (SamplingSettings{.rate_hz = 100}));
  EXPECT_FALSE(s.nonblocking || s.idle || s.gil || s.native || s.subprocesses);
}

TEST(ProfileFormat, EveryFormatHasAnExtension) {
  std::set<std::string_view> seen;
  for (const auto format : kProfileFormats) seen.insert(file_extension(format));
  EXPECT_EQ(seen, (std::set<std::string_view>{"json", "svg", "txt", "cpuprofile"}));
  EXPECT_EQ(file_extension(ProfileFormat::Flamegraph), "svg");
  EXPECT_EQ(file_extension(ProfileFormat::Speedscope), "json");
  EXPECT_EQ(file_extension(ProfileFormat::Collapsed), "txt");
}

}  // namespace
}  // namespace dapprof::model
