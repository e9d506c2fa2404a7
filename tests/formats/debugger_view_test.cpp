// The "hide debugger" view every format and the summary offer: which part of a stack stays, and
// that every writer applies it through formats::write.
#include <gtest/gtest.h>

#include "formats/debugger_view.hpp"
#include "formats/summary.hpp"
#include "formats/writers.hpp"
#include "gunzip.hpp"
#include "sample_profile.hpp"

namespace dapprof::formats {
namespace {

model::Frame pydevd(std::string function) {
  return {std::move(function), "/venv/lib/python3.12/site-packages/debugpy/_vendored/pydevd/pydevd.py",
          2100, model::FrameKind::Python, ""};
}
model::Frame native(std::string function) {
  return {std::move(function), "", 0, model::FrameKind::Native, "/lib/x86_64-linux-gnu/libc.so.6"};
}

// The stack of the view's one sample, innermost first, as function names.
std::vector<std::string> shown(std::vector<model::Frame> innermost_first) {
  Profile p;
  const auto t = p.add_thread({1, 1, 1, "MainThread"});
  p.add_sample(t, p.add_stack(innermost_first), 0);
  const Profile view = without_debugger(p);
  EXPECT_EQ(view.samples().size(), 1u);
  std::vector<std::string> names;
  for (const auto f : view.stacks()[view.samples().begin()->stack])
    names.push_back(view.frames()[f].function);
  return names;
}

TEST(WithoutDebugger, KeepsWhatTheInnermostDebuggerFrameCalled) {
  // The program's code run by the debugger (debugpy's runpy wrapper calls main): main and below.
  EXPECT_EQ(shown({test::work_frame(), test::main_frame(), pydevd("run"), pydevd("_exec")}),
            (std::vector<std::string>{test::work_frame().function, "main"}));
  // A stack without debugger frames is unchanged.
  EXPECT_EQ(shown({test::work_frame(), test::main_frame()}),
            (std::vector<std::string>{test::work_frame().function, "main"}));
}

TEST(WithoutDebugger, TheDebuggersOwnWorkIsOneFrame) {
  EXPECT_EQ(shown({pydevd("_on_run"), pydevd("run")}), std::vector<std::string>{"(debugger)"});
  // Native frames the debugger called (waiting on its socket) are the debugger's too.
  EXPECT_EQ(shown({native("recv"), native("sock_recv"), pydevd("_read_line")}),
            std::vector<std::string>{"(debugger)"});
  // Python frames below the debugger's are the program's again, natives under them included.
  EXPECT_EQ(shown({native("memcpy"), test::main_frame(), pydevd("trace_dispatch")}),
            (std::vector<std::string>{"memcpy", "main"}));
}

TEST(WithoutDebugger, KeepsThreadsTimesAndWeights) {
  Profile p;
  p.name = "python (pid 1)";
  p.interval_us = 1000;
  const auto a = p.add_thread({1, 1, 11, "MainThread"});
  const auto b = p.add_thread({1, 2, 12, "pydevd.Reader"});
  p.add_sample(a, p.add_stack(std::vector{test::main_frame(), pydevd("run")}), 5, 2);
  p.add_sample(b, p.add_stack(std::vector{pydevd("_on_run")}), 7);
  const Profile view = without_debugger(p);
  const std::vector<Sample> samples(view.samples().begin(), view.samples().end());
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(view.threads(), p.threads());
  EXPECT_EQ(samples[0].time_us, 5);
  EXPECT_EQ(samples[0].weight, 2);
  EXPECT_EQ(samples[1].thread, b);
  EXPECT_EQ(view.name, p.name);
  EXPECT_EQ(view.interval_us, 1000);
  const auto summary = summarize(view);
  ASSERT_EQ(summary.functions.size(), 2u);
  EXPECT_EQ(summary.functions[0].function, "main");
  EXPECT_EQ(summary.functions[1].function, "(debugger)");
}

TEST(WithoutDebugger, EveryFormatHidesTheDebuggerThroughWrite) {
  Profile p;
  const auto t = p.add_thread({1, 1, 11, "MainThread"});
  p.add_sample(t, p.add_stack(std::vector{test::main_frame(), pydevd("run_file")}), 0);
  for (const auto format : model::kProfileFormats) {
    // A binary format's strings are in its uncompressed bytes.
    const auto text = [&](const std::string& doc) {
      return model::is_binary(format) ? test::gunzip(doc) : doc;
    };
    const auto full = text(to_string(format, p, {}));
    const auto hidden = text(to_string(format, p, {.hide_debugger = true}));
    EXPECT_NE(full.find("run_file"), std::string::npos) << model::file_extension(format);
    EXPECT_EQ(hidden.find("run_file"), std::string::npos) << model::file_extension(format);
    EXPECT_NE(hidden.find("main"), std::string::npos) << model::file_extension(format);
  }
}

}  // namespace
}  // namespace dapprof::formats
