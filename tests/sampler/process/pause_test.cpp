// PausedProcess against real multi-threaded Python targets, including a pauser that is killed.
#include "sampler/process/pause.hpp"

#include <gtest/gtest.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "child.hpp"
#include "sampler/process/tasks.hpp"

namespace dapprof::sampler::process {
namespace {

using namespace std::chrono_literals;

// A multi-threaded Python target whose progress is a counter it keeps writing to a file.
class Target {
 public:
  explicit Target(int threads, bool churn = false)
      : path_((std::filesystem::temp_directory_path() /
               ("dapprof-pause-" + std::to_string(getpid()) + "-" + std::to_string(++serial_)))
                  .string()),
        child_(argv(path_, threads, churn)) {
    ready_ = child_.read_line() == "ready";
  }
  ~Target() {
    std::filesystem::remove(path_);
    std::filesystem::remove(path_ + ".tmp");
  }
  bool ready() const { return ready_; }
  pid_t pid() const { return child_.pid(); }
  test::Child& child() { return child_; }

  long counter() const {
    std::ifstream in(path_);
    long v = -1;
    in >> v;
    return v;
  }
  // True once the counter exceeds `than`; the limit only prevents a hang.
  bool progresses_beyond(long than) const {
    for (int i = 0; i < 2000; ++i) {
      if (counter() > than) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }

 private:
  static std::vector<std::string> argv(const std::string& path, int threads, bool churn) {
    std::vector<std::string> a{test::system_python(), test::target_script("threads.py"), path,
                               std::to_string(threads)};
    if (churn) a.push_back("churn");
    return a;
  }
  static inline int serial_ = 0;
  std::string path_;
  test::Child child_;
  bool ready_ = false;
};

void expect_not_stopped(pid_t pid) {
  auto tids = list_threads(pid);
  ASSERT_TRUE(tids) << tids.message();
  for (pid_t tid : *tids) {
    auto state = thread_state(pid, tid);
    if (!state) continue;  // exited since listed
    EXPECT_NE(*state, 't') << "thread " << tid << " still in a tracing stop";
    EXPECT_NE(*state, 'T') << "thread " << tid << " still stopped";
  }
}

TEST(Pause, StopsEveryThreadThenResumes) {
  Target target(4);
  ASSERT_TRUE(target.ready());
  ASSERT_TRUE(target.progresses_beyond(0));
  {
    auto paused = PausedProcess::pause(target.pid());
    ASSERT_TRUE(paused) << paused.message();
    EXPECT_EQ(paused->threads().size(), 5u);  // main + 4
    auto tids = list_threads(target.pid());
    ASSERT_TRUE(tids);
    EXPECT_EQ(paused->threads().size(), tids->size());
    for (pid_t tid : paused->threads()) {
      auto state = thread_state(target.pid(), tid);
      ASSERT_TRUE(state);
      EXPECT_EQ(*state, 't') << "thread " << tid;
    }
    // Stopped threads make no progress, however long we look.
    const long frozen = target.counter();
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(target.counter(), frozen);
    // Moving the guard keeps the pause; only the last owner resumes.
    PausedProcess moved = std::move(*paused);
    EXPECT_EQ(moved.threads().size(), 5u);
    EXPECT_EQ(thread_state(target.pid(), target.pid()).value(), 't');
  }
  expect_not_stopped(target.pid());
  EXPECT_TRUE(target.progresses_beyond(target.counter()));
}

TEST(Pause, PauseThreadsStopsOnlyThoseGiven) {
  Target target(3);
  ASSERT_TRUE(target.ready());
  auto tids = list_threads(target.pid());
  ASSERT_TRUE(tids);
  ASSERT_EQ(tids->size(), 4u);
  const pid_t chosen = (*tids)[1] == target.pid() ? (*tids)[2] : (*tids)[1];
  // A thread that exited long ago (no such TID in the process) is left out, not an error.
  auto paused = PausedProcess::pause_threads(target.pid(), {chosen, 999'999'999});
  ASSERT_TRUE(paused) << paused.message();
  EXPECT_EQ(paused->threads(), std::vector<pid_t>{chosen});
  EXPECT_EQ(thread_state(target.pid(), chosen).value(), 't');
  for (pid_t tid : *tids) {
    if (tid == chosen) continue;
    auto state = thread_state(target.pid(), tid);
    ASSERT_TRUE(state);
    EXPECT_NE(*state, 't') << "thread " << tid << " was not asked to stop";
  }
  *paused = PausedProcess::pause_threads(target.pid(), {}).value();  // resumes the first
  EXPECT_TRUE(paused->threads().empty());
  expect_not_stopped(target.pid());
}

TEST(Pause, ThreadsComingAndGoingDuringPauses) {
  Target target(2, /*churn=*/true);
  ASSERT_TRUE(target.ready());
  for (int i = 0; i < 300; ++i) {
    auto paused = PausedProcess::pause(target.pid());
    ASSERT_TRUE(paused) << "pause " << i << ": " << paused.message();
    EXPECT_GE(paused->threads().size(), 3u);
    // Every thread that exists now was stopped: none started while we paused the others.
    auto tids = list_threads(target.pid());
    ASSERT_TRUE(tids);
    for (pid_t tid : *tids)
      EXPECT_NE(std::find(paused->threads().begin(), paused->threads().end(), tid),
                paused->threads().end())
          << "thread " << tid << " runs during the pause";
  }
  expect_not_stopped(target.pid());
  EXPECT_TRUE(target.progresses_beyond(target.counter()));
}

TEST(Pause, KilledPauserLeavesTargetRunning) {
  Target target(3);
  ASSERT_TRUE(target.ready());
  for (const char* mode : {"hold", "loop"}) {
    SCOPED_TRACE(mode);
    test::Child pauser({PAUSE_HELPER, std::to_string(target.pid()), mode});
    const auto line = pauser.read_line();
    ASSERT_TRUE(line && line->starts_with("paused")) << line.value_or("(nothing)");
    if (std::string(mode) == "hold") {
      // Certainly inside the pause now.
      EXPECT_EQ(thread_state(target.pid(), target.pid()).value(), 't');
    }
    pauser.kill_and_wait(SIGKILL);  // the kernel detaches a dead tracer's tracees
    expect_not_stopped(target.pid());
    EXPECT_TRUE(target.progresses_beyond(target.counter()));
  }
}

TEST(Pause, AlreadyTracedTargetSaysSo) {
  Target target(1);
  ASSERT_TRUE(target.ready());
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t tracer = fork();
  ASSERT_GE(tracer, 0);
  if (tracer == 0) {  // a stand-in for a debugger attached to the target
    const long ok = ptrace(PTRACE_SEIZE, target.pid(), nullptr, nullptr);
    const char c = ok == 0 ? 'y' : 'n';
    if (write(ready[1], &c, 1) != 1) _exit(1);
    ::pause();
    _exit(0);
  }
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  ASSERT_EQ(c, 'y');
  auto paused = PausedProcess::pause(target.pid());
  ASSERT_FALSE(paused);
  EXPECT_EQ(paused.code(), ErrorCode::PermissionDenied);
  EXPECT_NE(paused.message().find("already being traced by process " + std::to_string(tracer)),
            std::string::npos)
      << paused.message();
  ::kill(tracer, SIGKILL);
  waitpid(tracer, nullptr, 0);
  expect_not_stopped(target.pid());
  EXPECT_TRUE(target.progresses_beyond(target.counter()));
  // With the other tracer gone, we can pause it.
  EXPECT_TRUE(PausedProcess::pause(target.pid()));
}

TEST(Pause, TargetExitingWhilePausedRepeatedly) {
  // Runs ~0.3 s then exits; pause it as often as possible meanwhile.
  test::Child target({test::system_python(), test::target_script("deep.py"), "5", "0.3"});
  ASSERT_EQ(target.read_line(), "ready");
  int pauses = 0;
  for (;;) {
    auto paused = PausedProcess::pause(target.pid());
    if (!paused) {
      EXPECT_EQ(paused.code(), ErrorCode::ProcessExited) << paused.message();
      break;
    }
    ++pauses;
  }
  EXPECT_GT(pauses, 0);
  // The exit status still belongs to us, the parent: pausing must not have consumed it.
  const int status = target.wait();
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(Pause, NonExistentAndDeadProcesses) {
  auto none = PausedProcess::pause(0x7ffffff0);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.code(), ErrorCode::NoSuchProcess);

  test::Child child({test::system_python(), "-c", "print('ready', flush=True)"});
  ASSERT_EQ(child.read_line(), "ready");
  child.wait_zombie();
  auto zombie = PausedProcess::pause(child.pid());
  ASSERT_FALSE(zombie);
  EXPECT_EQ(zombie.code(), ErrorCode::ProcessExited) << zombie.message();
}

TEST(Pause, UnprivilegedPauserGetsPermissionDenied) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch to another user";
  Target target(1);
  ASSERT_TRUE(target.ready());
  const pid_t pauser = fork();
  ASSERT_GE(pauser, 0);
  if (pauser == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    auto paused = PausedProcess::pause(target.pid());
    if (paused) _exit(11);
    if (paused.code() != ErrorCode::PermissionDenied) _exit(12);
    if (paused.message().find("SYS_PTRACE") == std::string::npos) _exit(13);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pauser, &status, 0), pauser);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  expect_not_stopped(target.pid());
}

}  // namespace
}  // namespace dapprof::sampler::process
