// The sampling loop against real Python targets: snapshots arrive, stop, exits, filters,
// subprocesses. No timing is asserted; waits have limits only to prevent hangs.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "child.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::sampler {
namespace {

using namespace std::chrono_literals;
constexpr auto kLimit = 30s;  // only against hangs

// Collects what a Sampler delivers, and lets the test wait for conditions on it.
class Recorder {
 public:
  Sampler::OnSnapshot on_snapshot() {
    return [this](model::Snapshot&& s) {
      std::lock_guard lock(mutex_);
      snapshots_.push_back(std::move(s));
      changed_.notify_all();
    };
  }
  Sampler::OnStop on_stop() {
    return [this](StopReason reason, const std::string& message) {
      std::lock_guard lock(mutex_);
      stops_.push_back(reason);
      message_ = message;
      changed_.notify_all();
    };
  }
  template <typename Pred>
  bool wait(Pred pred) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kLimit, [&] { return pred(snapshots_, stops_); });
  }
  bool wait_snapshots(std::size_t n) {
    return wait([n](const auto& snaps, const auto&) { return snaps.size() >= n; });
  }
  bool wait_stop() {
    return wait([](const auto&, const auto& stops) { return !stops.empty(); });
  }
  std::vector<model::Snapshot> snapshots() {
    std::lock_guard lock(mutex_);
    return snapshots_;
  }
  std::vector<StopReason> stops() {
    std::lock_guard lock(mutex_);
    return stops_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<model::Snapshot> snapshots_;
  std::vector<StopReason> stops_;
  std::string message_;
};

std::unique_ptr<Sampler> start(pid_t pid, const SamplerOptions& options, Recorder& rec) {
  auto s = Sampler::start(pid, options, rec.on_snapshot(), rec.on_stop());
  EXPECT_TRUE(s) << s.message();
  return s ? std::move(*s) : nullptr;
}

bool has_function(const model::ThreadStack& t, const std::string& name) {
  return std::any_of(t.frames.begin(), t.frames.end(),
                     [&](const model::Frame& f) { return f.function == name; });
}

TEST(Loop, DeliversSnapshotsUntilStopped) {
  test::Child target({test::system_python(), test::target_script("deep.py"), "20"});
  ASSERT_EQ(target.read_line(), "ready");
  Recorder rec;
  auto sampler = start(target.pid(), {.sampling = {.rate_hz = 200}}, rec);
  ASSERT_TRUE(sampler);
  EXPECT_EQ(sampler->pid(), target.pid());
  EXPECT_TRUE(sampler->python_version().starts_with("3.11")) << sampler->python_version();
  ASSERT_TRUE(rec.wait_snapshots(20));
  sampler->stop();
  sampler->stop();  // idempotent
  const auto snaps = rec.snapshots();
  EXPECT_EQ(rec.stops(), std::vector<StopReason>{StopReason::Requested});
  EXPECT_EQ(sampler->stats().samples, snaps.size());
  for (const auto& s : snaps) {
    EXPECT_EQ(s.pid, target.pid());
    ASSERT_FALSE(s.threads.empty());
    for (const auto& t : s.threads) EXPECT_TRUE(t.active) << "idle thread not filtered";
  }
  EXPECT_TRUE(has_function(snaps.back().threads.front(), "recurse"));
  // Nothing arrives after stop() returned.
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(rec.snapshots().size(), snaps.size());
}

TEST(Loop, ConcurrentStopsCallOnStopOnce) {
  test::Child target({test::system_python(), test::target_script("deep.py"), "3"});
  ASSERT_EQ(target.read_line(), "ready");
  Recorder rec;
  auto sampler = start(target.pid(), {.sampling = {.rate_hz = 1000}}, rec);
  ASSERT_TRUE(sampler);
  ASSERT_TRUE(rec.wait_snapshots(1));
  std::vector<std::thread> stoppers;
  for (int i = 0; i < 4; ++i) stoppers.emplace_back([&] { sampler->stop(); });
  for (auto& t : stoppers) t.join();
  sampler.reset();  // the destructor stops again
  EXPECT_EQ(rec.stops(), std::vector<StopReason>{StopReason::Requested});
}

TEST(Loop, StopFromACallbackDoesNotDeadlock) {
  test::Child target({test::system_python(), test::target_script("deep.py"), "3"});
  ASSERT_EQ(target.read_line(), "ready");
  Recorder rec;
  std::atomic<Sampler*> self{nullptr};
  auto forward = rec.on_snapshot();
  auto s = Sampler::start(
      target.pid(), {.sampling = {.rate_hz = 1000}},
      [&](model::Snapshot&& snap) {
        forward(std::move(snap));
        if (auto* p = self.load()) p->stop();
      },
      rec.on_stop());
  ASSERT_TRUE(s) << s.message();
  self = s->get();
  ASSERT_TRUE(rec.wait_stop());
  EXPECT_EQ(rec.stops(), std::vector<StopReason>{StopReason::Requested});
  (*s)->stop();
}

TEST(Loop, TargetExitingEndsWithExited) {
  test::Child target({test::system_python(), test::target_script("deep.py"), "10", "0.5"});
  ASSERT_EQ(target.read_line(), "ready");
  Recorder rec;
  auto sampler = start(target.pid(), {.sampling = {.rate_hz = 500}}, rec);
  ASSERT_TRUE(sampler);
  ASSERT_TRUE(rec.wait_stop());
  EXPECT_EQ(rec.stops(), std::vector<StopReason>{StopReason::Exited});
  EXPECT_GT(rec.snapshots().size(), 0u);
  sampler->stop();
  EXPECT_EQ(rec.stops().size(), 1u);
}

TEST(Loop, KilledTargetEndsWithExitedAtAnyMoment) {
  for (bool nonblocking : {false, true}) {
    for (std::size_t after : {1u, 5u, 30u}) {
      SCOPED_TRACE(testing::Message() << "nonblocking=" << nonblocking << " after=" << after);
      test::Child target({test::system_python(), test::target_script("churn.py")});
      ASSERT_EQ(target.read_line(), "ready");
      Recorder rec;
      auto sampler =
          start(target.pid(), {.sampling = {.rate_hz = 5000, .nonblocking = nonblocking}}, rec);
      ASSERT_TRUE(sampler);
      ASSERT_TRUE(rec.wait_snapshots(after));
      target.kill_and_wait(SIGKILL);
      ASSERT_TRUE(rec.wait_stop());
      EXPECT_EQ(rec.stops(), std::vector<StopReason>{StopReason::Exited});
    }
  }
}

TEST(Loop, NonblockingCountsFailedReadsAndGoesOn) {
  // The stack changes under the reader all the time: some reads are torn, counted as errors.
  test::Child target({test::system_python(), test::target_script("churn.py")});
  ASSERT_EQ(target.read_line(), "ready");
  Recorder rec;
  auto sampler = start(target.pid(), {.sampling = {.rate_hz = 20000, .nonblocking = true}}, rec);
  ASSERT_TRUE(sampler);
  const auto deadline = std::chrono::steady_clock::now() + kLimit;
  while (sampler->stats().errors == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  const auto at_error = sampler->stats();
  ASSERT_GT(at_error.errors, 0u) << "no torn read in " << at_error.samples << " samples";
  ASSERT_TRUE(rec.wait_snapshots(at_error.samples + 10)) << "sampling stopped after an error";
  sampler->stop();
  EXPECT_EQ(rec.stops(), std::vector<StopReason>{StopReason::Requested});
}

TEST(Loop, IdleAndGilFilters) {
  test::Child target({test::system_python(), test::target_script("idle.py")});
  ASSERT_EQ(target.read_line(), "ready");
  {
    Recorder rec;
    auto sampler =
        start(target.pid(), {.sampling = {.rate_hz = 500, .mode = model::SamplingMode::Wall}}, rec);
    ASSERT_TRUE(sampler);
    ASSERT_TRUE(rec.wait_snapshots(10));
    sampler->stop();
    const auto snaps = rec.snapshots();
    EXPECT_TRUE(std::any_of(snaps.begin(), snaps.end(), [](const model::Snapshot& s) {
      return s.threads.size() == 3 &&
             std::count_if(s.threads.begin(), s.threads.end(),
                           [](const model::ThreadStack& t) { return !t.active; }) >= 2;
    })) << "idle threads kept with idle=true";
  }
  {
    Recorder rec;
    auto sampler = start(target.pid(), {.sampling = {.rate_hz = 500}}, rec);
    ASSERT_TRUE(sampler);
    ASSERT_TRUE(rec.wait_snapshots(10));
    sampler->stop();
    for (const auto& s : rec.snapshots())
      for (const auto& t : s.threads) EXPECT_TRUE(t.active);
  }
  {
    Recorder rec;
    auto sampler =
        start(target.pid(), {.sampling = {.rate_hz = 500, .mode = model::SamplingMode::Gil}}, rec);
    ASSERT_TRUE(sampler);
    ASSERT_TRUE(rec.wait_snapshots(10));
    sampler->stop();
    for (const auto& s : rec.snapshots()) {
      ASSERT_EQ(s.threads.size(), 1u);
      EXPECT_TRUE(s.threads.front().owns_gil);
    }
  }
}

TEST(Loop, LateTicksAreCountedNotBurst) {
  test::Child target({test::system_python(), test::target_script("deep.py"), "50"});
  ASSERT_EQ(target.read_line(), "ready");
  Recorder rec;
  // A million samples a second cannot be met: ticks are skipped and counted.
  auto sampler = start(target.pid(), {.sampling = {.rate_hz = 1e6}}, rec);
  ASSERT_TRUE(sampler);
  ASSERT_TRUE(rec.wait_snapshots(100));
  sampler->stop();
  const auto stats = sampler->stats();
  EXPECT_GT(stats.late, 0u);
  EXPECT_EQ(stats.samples, rec.snapshots().size());
}

TEST(Loop, SubprocessesAreSampledWithTheirPid) {
  test::Child target({test::system_python(), test::target_script("spawner.py")});
  const auto line = target.read_line();
  ASSERT_TRUE(line);
  pid_t py_child = 0, other_child = 0;
  std::istringstream(*line) >> py_child >> other_child;
  ASSERT_GT(py_child, 0);
  struct Reaper {  // the spawner's children outlive it unless killed
    pid_t a, b;
    ~Reaper() {
      ::kill(a, SIGKILL);
      ::kill(b, SIGKILL);
    }
  } reaper{py_child, other_child};

  Recorder rec;
  auto sampler = start(target.pid(), {.sampling = {.rate_hz = 200, .subprocesses = true}}, rec);
  ASSERT_TRUE(sampler);
  const auto from = [](pid_t pid) {
    return [pid](const std::vector<model::Snapshot>& snaps, const auto&) {
      return std::any_of(snaps.begin(), snaps.end(),
                         [&](const model::Snapshot& s) { return s.pid == pid; });
    };
  };
  ASSERT_TRUE(rec.wait(from(py_child))) << "no snapshot of the Python child";
  // The child exits: it drops out, the parent goes on being sampled.
  ::kill(py_child, SIGKILL);
  const auto before = rec.snapshots().size();
  ASSERT_TRUE(rec.wait_snapshots(before + 20));
  EXPECT_TRUE(rec.stops().empty());
  sampler->stop();
  const auto snaps = rec.snapshots();
  EXPECT_TRUE(std::none_of(snaps.begin(), snaps.end(),
                           [&](const model::Snapshot& s) { return s.pid == other_child; }));
  std::set<pid_t> pids;
  for (const auto& s : snaps) pids.insert(s.pid);
  EXPECT_EQ(pids, (std::set<pid_t>{target.pid(), py_child}));
}

TEST(Loop, StartErrors) {
  Recorder rec;
  auto none = Sampler::start(0x7ffffff0, {}, rec.on_snapshot(), rec.on_stop());
  ASSERT_FALSE(none);
  EXPECT_EQ(none.code(), ErrorCode::NoSuchProcess) << none.message();

  test::Child sleeper({"/bin/sleep", "60"});
  auto not_python = Sampler::start(sleeper.pid(), {}, rec.on_snapshot(), rec.on_stop());
  ASSERT_FALSE(not_python);
  EXPECT_EQ(not_python.code(), ErrorCode::NotPython) << not_python.message();

  auto bad_rate =
      Sampler::start(getpid(), {.sampling = {.rate_hz = 0}}, rec.on_snapshot(), rec.on_stop());
  ASSERT_FALSE(bad_rate);
  EXPECT_EQ(bad_rate.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(rec.stops().empty()) << "on_stop belongs to started samplers only";
}

}  // namespace
}  // namespace dapprof::sampler
