// The short-file-name view of a profile (record's default): files renamed, frames that become
// equal merged, and everything else about the profile kept.
#include "formats/file_names.hpp"

#include <gtest/gtest.h>

namespace dapprof::formats {
namespace {

TEST(WithFiles, RenamesMergesAndKeepsTheRest) {
  Profile p;
  p.name = "prog";
  p.interval_us = 1000;
  p.duration_us = 5000;
  p.start_unix_ns = 1'700'000'000'000'000'000;
  const auto t = p.add_thread({7, 1, 8, "MainThread"});
  const auto frame = [](std::string function, std::string file, int line) {
    model::Frame f;
    f.function = std::move(function);
    f.file = std::move(file);
    f.line = line;
    return f;
  };
  const model::Frame a = frame("f", "/a/pkg/m.py", 3);
  const model::Frame b = frame("f", "/b/pkg/m.py", 3);
  const model::Frame frozen = frame("g", "<frozen importlib._bootstrap>", 9);
  p.add_sample(t, p.add_stack(std::vector{a, frozen}), 10, 2);
  p.add_sample(t, p.add_stack(std::vector{b, frozen}), 20);

  const Profile view = with_files(
      p, [](const std::string& f) { return f.starts_with("/") ? f.substr(f.find("pkg/")) : f; });
  EXPECT_EQ(view.name, "prog");
  EXPECT_EQ(view.interval_us, 1000);
  EXPECT_EQ(view.duration_us, 5000);
  EXPECT_EQ(view.start_unix_ns, p.start_unix_ns);
  ASSERT_EQ(view.threads().size(), 1u);
  EXPECT_EQ(view.threads()[0].name, "MainThread");
  EXPECT_EQ(view.stacks().size(), 1u);  // /a/pkg/m.py and /b/pkg/m.py are both pkg/m.py now
  std::vector<std::pair<std::int64_t, double>> samples;
  for (const auto& s : view.samples()) {
    samples.emplace_back(s.time_us, s.weight);
    const auto& stack = view.stacks()[s.stack];
    EXPECT_EQ(view.frames()[stack[0]].file, "pkg/m.py");
    EXPECT_EQ(view.frames()[stack[1]].file, "<frozen importlib._bootstrap>");
  }
  EXPECT_EQ(samples, (std::vector<std::pair<std::int64_t, double>>{{10, 2}, {20, 1}}));
}

TEST(WithFiles, ToolsThatOpenSourcesKeepPaths) {
  EXPECT_FALSE(shows_short_files(model::ProfileFormat::Cpuprofile));
  EXPECT_FALSE(shows_short_files(model::ProfileFormat::Pprof));
  EXPECT_TRUE(shows_short_files(model::ProfileFormat::Flamegraph));
  EXPECT_TRUE(shows_short_files(model::ProfileFormat::Collapsed));
}

}  // namespace
}  // namespace dapprof::formats
