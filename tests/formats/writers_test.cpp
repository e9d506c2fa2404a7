#include "formats/writers.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "sample_profile.hpp"

namespace dapprof::formats {
namespace {

using nlohmann::json;
using test::InputSample;

std::string fmt_hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

TEST(Collapsed, ExactLinesWithProcessPrefix) {
  const auto out =
      to_string(model::ProfileFormat::Collapsed, test::make_profile(test::sample_inputs()));
  EXPECT_EQ(out,
            "process 100;main (app.py:10);other (app.py) 1\n"
            "process 100;main (app.py:10);wörk<&>\"' (dir/ünï <&>.py:20) 3\n"
            "process 100;main (app.py:10);wörk<&>\"' (dir/ünï <&>.py:20);函数 (dir/ünï "
            "<&>.py:30) 3\n"
            "process 200;main (app.py:10);wörk<&>\"' (dir/ünï <&>.py:20);函数 (dir/ünï "
            "<&>.py:30) 2\n"
            "process 200;other (app.py) 1\n");
}

TEST(Collapsed, OneProcessWithThreads) {
  auto inputs = test::sample_inputs();
  std::erase_if(inputs, [](const InputSample& s) { return s.pid != 100; });
  const auto p = test::make_profile(inputs);
  EXPECT_EQ(to_string(model::ProfileFormat::Collapsed, p),
            "main (app.py:10);other (app.py) 1\n"
            "main (app.py:10);wörk<&>\"' (dir/ünï <&>.py:20) 3\n"
            "main (app.py:10);wörk<&>\"' (dir/ünï <&>.py:20);函数 (dir/ünï <&>.py:30) 3\n");
  EXPECT_EQ(to_string(model::ProfileFormat::Collapsed, p, {.threads = true}),
            "thread (0x7f01) \"MainThread\";main (app.py:10);other (app.py) 1\n"
            "thread (0x7f01) \"MainThread\";main (app.py:10);wörk<&>\"' (dir/ünï <&>.py:20) 1\n"
            "thread (0x7f01) \"MainThread\";main (app.py:10);wörk<&>\"' (dir/ünï <&>.py:20);函数 "
            "(dir/ünï <&>.py:30) 2\n"
            "thread (0x7f02) \"wörker \"1\" <&>\";main (app.py:10);wörk<&>\"' (dir/ünï "
            "<&>.py:20) 2\n"
            "thread (0x7f02) \"wörker \"1\" <&>\";main (app.py:10);wörk<&>\"' (dir/ünï "
            "<&>.py:20);函数 (dir/ünï <&>.py:30) 1\n");
}

// A run with subprocesses: the process level names each process by its command line (a `;` of it
// would split the stack), and is there for one process too when asked; without it, one process
// has no level.
TEST(Collapsed, ProcessLevelWithCommandLines) {
  auto inputs = test::sample_inputs();
  std::erase_if(inputs, [](const InputSample& s) { return s.pid != 100 || s.time_us != 0; });
  auto p = test::make_profile(inputs);
  p.add_process({.pid = 100, .command_line = "python3 pool.py a;b"});
  EXPECT_EQ(to_string(model::ProfileFormat::Collapsed, p),
            "main (app.py:10);wörk<&>\"' (dir/ünï <&>.py:20) 1\n"
            "main (app.py:10);wörk<&>\"' (dir/ünï <&>.py:20);函数 (dir/ünï <&>.py:30) 1\n");
  p.show_processes = true;
  EXPECT_EQ(
      to_string(model::ProfileFormat::Collapsed, p),
      "process 100:\"python3 pool.py a,b\";main (app.py:10);wörk<&>\"' (dir/ünï <&>.py:20) 1\n"
      "process 100:\"python3 pool.py a,b\";main (app.py:10);wörk<&>\"' (dir/ünï <&>.py:20);"
      "函数 (dir/ünï <&>.py:30) 1\n");
  const auto speedscope = json::parse(to_string(model::ProfileFormat::Speedscope, p));
  for (const auto& profile : speedscope.at("profiles"))
    EXPECT_TRUE(profile.at("name").get<std::string>().ends_with("pid 100 \"python3 pool.py a;b\""))
        << profile.at("name");
  const auto gecko = json::parse(to_string(model::ProfileFormat::Gecko, p));
  for (const auto& thread : gecko.at("threads"))
    EXPECT_EQ(thread.at("processName"), "python3 pool.py a;b");
}

TEST(Collapsed, EmptyStacksMakeNoLine) {
  Profile p;
  const auto t = p.add_thread({1, 1, 1, "T"});
  p.add_sample(t, p.add_stack({}), 0);
  const std::vector<model::Frame> one = {test::main_frame()};
  p.add_sample(t, p.add_stack(one), 1);
  EXPECT_EQ(to_string(model::ProfileFormat::Collapsed, p, {.threads = true}),
            "thread (0x1) \"T\";main (app.py:10) 1\n");
}

TEST(Speedscope, NativeFramesWithoutSourceNameTheirModule) {
  Profile p;
  const auto t = p.add_thread({1, 1, 1, "MainThread"});
  const model::Frame memcpy{"memcpy", "", 0, model::FrameKind::Native, "/lib/libc.so.6"};
  const model::Frame with_source{"inflate", "zlib/inflate.c", 42, model::FrameKind::Native,
                                 "/lib/libz.so.1"};
  p.add_sample(t, p.add_stack(std::vector{memcpy, with_source}), 0);
  const auto doc = json::parse(to_string(model::ProfileFormat::Speedscope, p));
  const auto& frames = doc["shared"]["frames"];
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0]["file"], "/lib/libc.so.6");
  EXPECT_FALSE(frames[0].contains("line"));
  EXPECT_EQ(frames[1]["file"], "zlib/inflate.c");
  EXPECT_EQ(frames[1]["line"], 42);
}

TEST(Speedscope, SamplesReconstructInputStacks) {
  const auto inputs = test::sample_inputs();
  const auto doc =
      json::parse(to_string(model::ProfileFormat::Speedscope, test::make_profile(inputs)));
  EXPECT_EQ(doc["$schema"], "https://www.speedscope.app/file-format-schema.json");
  EXPECT_EQ(doc["exporter"], "dapprof");
  EXPECT_EQ(doc["name"], "fixture <&> \"ü\"");
  EXPECT_EQ(doc["activeProfileIndex"], 0);
  const auto& frames = doc["shared"]["frames"];
  ASSERT_EQ(doc["profiles"].size(), 3u);

  // Expected per thread, in input order.
  std::map<std::uint64_t, std::vector<const InputSample*>> expected;
  for (const auto& in : inputs) expected[in.thread_id].push_back(&in);
  for (const auto& prof : doc["profiles"]) {
    EXPECT_EQ(prof["type"], "sampled");
    EXPECT_EQ(prof["unit"], "none");
    EXPECT_EQ(prof["startValue"], 0);
    const std::string title = prof["name"];
    const InputSample* first = nullptr;
    for (const auto& [tid, list] : expected) {
      if (title.find(fmt_hex(tid)) != std::string::npos) first = list.front();
    }
    ASSERT_NE(first, nullptr) << title;
    EXPECT_NE(title.find("pid " + std::to_string(first->pid)), std::string::npos) << title;
    if (!first->thread_name.empty()) {
      EXPECT_NE(title.find(first->thread_name), std::string::npos) << title;
    }
    const auto& want = expected[first->thread_id];
    ASSERT_EQ(prof["samples"].size(), want.size());
    double total = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      std::vector<model::Frame> got;
      for (const auto& idx : prof["samples"][i]) {
        const auto& f = frames.at(idx.get<std::size_t>());
        got.push_back(model::Frame{f["name"].get<std::string>(), f.value("file", ""),
                                   f.value("line", 0), model::FrameKind::Python, ""});
      }
      EXPECT_EQ(got, want[i]->root_first) << title << " sample " << i;
      EXPECT_DOUBLE_EQ(prof["weights"][i].get<double>(), want[i]->weight);
      total += want[i]->weight;
    }
    EXPECT_DOUBLE_EQ(prof["endValue"].get<double>(), total);
  }
}

}  // namespace
}  // namespace dapprof::formats
