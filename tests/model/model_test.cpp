#include <gtest/gtest.h>

#include <set>

#include "model/frame.hpp"
#include "model/profile_format.hpp"
#include "model/sampling_settings.hpp"
#include "model/snapshot.hpp"

namespace dapprof::model {
namespace {

TEST(Frame, KindAndOriginArePartOfTheFrame) {
  const Frame python{"run", "/debugpy/_vendored/pydevd/pydevd.py", 10, FrameKind::Python, ""};
  const Frame debugger = classified(python);
  EXPECT_EQ(debugger.origin, FrameOrigin::Debugger);
  EXPECT_NE(debugger, python);
  EXPECT_FALSE(python.debugger());
  EXPECT_FALSE(debugger.native());
  EXPECT_TRUE((Frame{"memcpy", "", 0, FrameKind::Native, "/lib/libc.so.6"}).native());
  EXPECT_EQ(Frame{}.kind, FrameKind::Python);  // what the sampler's Python frames are
  EXPECT_EQ(Frame{}.origin, FrameOrigin::Program);
}

FrameOrigin origin_of_file(const std::string& file) {
  return classify_origin(Frame{"f", file, 1, FrameKind::Python, ""});
}

TEST(FrameOrigin, DebugpyAndPydevdFilesAreTheDebuggers) {
  for (const char* file : {"/usr/lib/python3/dist-packages/debugpy/server/api.py",
                           "/venv/lib/python3.12/site-packages/debugpy/_vendored/pydevd/pydevd.py",
                           "/x/debugpy/_vendored/pydevd/_pydevd_bundle/pydevd_comm.py",
                           "/x/_pydev_bundle/pydev_monkey.py", "/opt/pydevd/pydevd_file_utils.py",
                           "C:\\Python312\\Lib\\site-packages\\debugpy\\launcher\\__main__.py"})
    EXPECT_EQ(origin_of_file(file), FrameOrigin::Debugger) << file;
  for (const char* file : {"/home/me/app.py", "/home/me/mydebugpy/x.py", "/home/me/debugpy.py",
                           "/home/me/notpydevd/x.py", "<string>", ""})
    EXPECT_EQ(origin_of_file(file), FrameOrigin::Program) << file;
}

TEST(FrameOrigin, CompiledPydevdIsNativeAndTheDebuggers) {
  Frame cython{"PyDBFrame_trace_dispatch", "", 0, FrameKind::Native,
               "/x/debugpy/_vendored/pydevd/_pydevd_bundle/pydevd_cython.cpython-312.so"};
  EXPECT_EQ(classify_origin(cython), FrameOrigin::Debugger);
  EXPECT_TRUE(classified(cython).native());
  // The module of a Python frame is not looked at (Python frames have none).
  cython.kind = FrameKind::Python;
  EXPECT_EQ(classify_origin(cython), FrameOrigin::Program);
  EXPECT_EQ(debugger_frame().origin, FrameOrigin::Debugger);
}

TEST(ThreadStack, StatusFromActivityAndGil) {
  ThreadStack t;
  EXPECT_EQ(t.status(), "idle");
  t.active = true;
  EXPECT_EQ(t.status(), "active");
  t.owns_gil = true;
  EXPECT_EQ(t.status(), "active+gil");
}

TEST(SamplingSettings, ModesByNameAndTheirOlderSwitches) {
  for (const auto* name : {"active", "wall", "cpu", "gil", "exception"}) {
    const auto mode = sampling_mode_named(name);
    ASSERT_TRUE(mode) << name;
    EXPECT_EQ(sampling_mode_name(*mode), name);
  }
  EXPECT_FALSE(sampling_mode_named("idle"));
  EXPECT_FALSE(sampling_mode_named("Wall"));
  // idle is wall, gil is gil (both together: gil, as they always kept the GIL's holder).
  EXPECT_EQ(sampling_mode_with_aliases(SamplingMode::Active, false, false), SamplingMode::Active);
  EXPECT_EQ(sampling_mode_with_aliases(SamplingMode::Active, true, false), SamplingMode::Wall);
  EXPECT_EQ(sampling_mode_with_aliases(SamplingMode::Active, false, true), SamplingMode::Gil);
  EXPECT_EQ(sampling_mode_with_aliases(SamplingMode::Active, true, true), SamplingMode::Gil);
  EXPECT_EQ(sampling_mode_with_aliases(SamplingMode::Cpu, false, false), SamplingMode::Cpu);
  EXPECT_EQ(sampling_mode_with_aliases(SamplingMode::Wall, true, false), SamplingMode::Wall);
  EXPECT_EQ(sampling_mode_with_aliases(SamplingMode::Gil, true, true), SamplingMode::Gil);
  // A switch naming another mode than the one named is a conflict.
  EXPECT_FALSE(sampling_mode_with_aliases(SamplingMode::Cpu, true, false));
  EXPECT_FALSE(sampling_mode_with_aliases(SamplingMode::Exception, false, true));
  EXPECT_FALSE(sampling_mode_with_aliases(SamplingMode::Wall, false, true));
  EXPECT_FALSE(sampling_mode_with_aliases(SamplingMode::Gil, true, false));
}

TEST(Frame, AnExceptionFrameIsAKindOfItsOwn) {
  const Frame f = exception_frame("KeyError");
  EXPECT_EQ(f.function, "(exception) KeyError");
  EXPECT_TRUE(f.exception());
  EXPECT_FALSE(f.native() || f.task());
  EXPECT_TRUE(f.file.empty());
  EXPECT_EQ(f.line, 0);
  Frame python = f;
  python.kind = FrameKind::Python;
  EXPECT_NE(python, f);
}

TEST(SamplingSettings, DefaultsAreRecordsAndStartProfilingsDefaults) {
  const SamplingSettings s;
  EXPECT_EQ(s.rate_hz, 100);
  EXPECT_EQ(s, (SamplingSettings{.rate_hz = 100}));
  EXPECT_FALSE(s.nonblocking || s.native || s.subprocesses);
  EXPECT_EQ(s.mode, SamplingMode::Active);
  EXPECT_EQ(s.async, AsyncMode::Off);
}

TEST(TaskFrame, IsPlacedInTaskWithItsStateAndReadBack) {
  const Frame running = task_frame("handler-0", TaskState::Running);
  EXPECT_TRUE(running.task());
  EXPECT_EQ(running.function, "handler-0");
  EXPECT_TRUE(running.file.empty());
  EXPECT_EQ(frame_place(running), "<task>");
  EXPECT_EQ(frame_place(task_frame("t", TaskState::Waiting)), "<task waiting>");
  EXPECT_EQ(frame_place(task_frame("t", TaskState::Cancelling)), "<task cancelling>");
  for (auto state :
       {TaskState::Running, TaskState::Waiting, TaskState::Cancelling, TaskState::Unknown}) {
    Frame back;
    back.function = "t";
    set_place(back, frame_place(task_frame("t", state)));
    EXPECT_EQ(back, task_frame("t", state)) << task_state_name(state);
    EXPECT_EQ(task_state_named(task_state_name(state)), state);
  }
  // A file that only looks like a task's stays a file where the frame has a line.
  Frame file;
  file.line = 3;
  set_place(file, "<task>");
  EXPECT_FALSE(file.task());
  EXPECT_EQ(file.file, "<task>");
  EXPECT_FALSE(task_place_state("<task running>x"));
  EXPECT_FALSE(task_state_named("sleeping"));
}

TEST(TaskFrame, TheEventLoopIsOnePlainFrame) {
  const Frame loop = event_loop_frame();
  EXPECT_EQ(loop.function, "(event loop)");
  EXPECT_FALSE(loop.task() || loop.native() || loop.debugger());
  EXPECT_EQ(frame_place(loop), "");
}

TEST(ProfileFormat, EveryFormatHasAnExtension) {
  std::set<std::string_view> seen;
  for (const auto format : kProfileFormats) seen.insert(file_extension(format));
  EXPECT_EQ(seen, (std::set<std::string_view>{"json", "svg", "txt", "cpuprofile", "pb.gz"}));
  EXPECT_EQ(file_extension(ProfileFormat::Flamegraph), "svg");
  EXPECT_EQ(file_extension(ProfileFormat::Speedscope), "json");
  EXPECT_EQ(file_extension(ProfileFormat::Collapsed), "txt");
  EXPECT_EQ(file_extension(ProfileFormat::Pprof), "pb.gz");
  EXPECT_EQ(file_extension(ProfileFormat::Gecko), "json");
}

TEST(ProfileFormat, OnlyPprofIsBinary) {
  for (const auto format : kProfileFormats)
    EXPECT_EQ(is_binary(format), format == ProfileFormat::Pprof) << file_extension(format);
}

}  // namespace
}  // namespace dapprof::model
