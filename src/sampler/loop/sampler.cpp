// The sampling loop: Sampler::start and its implementation.
#include "sampler/sampler.hpp"

#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "sampler/loop/children.hpp"
#include "sampler/loop/main_process.hpp"
#include "sampler/loop/process_info.hpp"
#include "sampler/loop/sampling_mode.hpp"
#include "sampler/loop/schedule.hpp"
#include "sampler/loop/stop_flag.hpp"
#include "sampler/process/tasks.hpp"

namespace dapprof::sampler {
namespace {

using Clock = std::chrono::steady_clock;

// How the processes of a run are read: the same for the main process and its children.
AttachOptions attach_options(const SamplerOptions& o) {
  AttachOptions a;
  a.nonblocking = o.sampling.nonblocking;
  a.native = o.sampling.native;
  a.gc = o.sampling.gc;
  a.wait_for_interpreter = o.wait_for_interpreter;
  a.native_all = o.native_all;
  a.skip_idle = !loop::reads_sleeping_threads(o.sampling.mode);
  a.exceptions = loop::reads_exceptions(o.sampling.mode);
  a.lines = o.lines;
  a.opcodes = o.opcodes || o.sampling.opcodes;
  a.async = o.sampling.async;
  return a;
}

// How often descendants are looked for, and how long a new one (or a program the sampled process
// exec'd) may take to look like Python, unless the run says.
constexpr auto kChildScanPeriod = std::chrono::milliseconds(150);
constexpr auto kDefaultWindow = std::chrono::milliseconds(2000);
// Below this, waiting for a tick by sleeping costs more than the wait (see wait_for).
constexpr auto kSpinBelow = std::chrono::microseconds(20);
// A child whose reads keep failing (e.g. it exec'd a non-Python program) is dropped.
constexpr unsigned kChildFailureLimit = 20;
// The sampling thread's nice value while it samples a process tree: a pool of CPU-bound workers
// on two cores left the default-priority thread one turn in 34, and workers went unsampled for
// seconds (32 workers: none of their samples in 4 s; 8 workers: 0.27 of the rate).
constexpr int kChildrenNice = -10;

std::chrono::milliseconds start_window(const SamplerOptions& o) {
  return o.wait_for_interpreter.count() > 0 ? o.wait_for_interpreter : kDefaultWindow;
}

class LoopSampler final : public Sampler {
 public:
  LoopSampler(loop::MainProcess main, const SamplerOptions& options, OnSnapshot on_snapshot,
              OnStop on_stop)
      : main_(std::move(main)),
        python_version_(main_.process().python_version()),
        warning_(main_.process().warning()),
        options_(options),
        on_snapshot_(std::move(on_snapshot)),
        on_stop_(std::move(on_stop)) {}

  void launch() {
    thread_ = std::thread([this] { run(); });
  }

  ~LoopSampler() override { stop(); }

  void stop() override {
    stop_.raise();
    {
      // From a callback (on the sampling thread itself) the loop ends once the callback returns.
      std::lock_guard lock(mutex_);
      if (std::this_thread::get_id() == loop_id_) return;
    }
    std::lock_guard lock(join_mutex_);
    if (thread_.joinable()) thread_.join();
  }

  SamplerStats stats() const override {
    std::lock_guard lock(counts_mutex_);
    return {samples_.load(std::memory_order_relaxed), errors_.load(std::memory_order_relaxed),
            late_.load(std::memory_order_relaxed), counts_};
  }
  // Of the program first attached (the sampling thread replaces it if the process execs).
  pid_t pid() const override { return main_.pid(); }
  const std::string& python_version() const override { return python_version_; }
  const std::string& warning() const override { return warning_; }

 private:
  // Denied: the process may no longer be read (it made itself non-dumpable, or changed its user
  // ids): every later sample would fail the same way, so sampling stops with the fix. Replaced:
  // the read failed because the process exec'd meanwhile, which is no error of sampling.
  enum class Outcome { Delivered, Failed, Exited, Denied, Replaced };

  void run() {
    {
      std::lock_guard lock(mutex_);
      loop_id_ = std::this_thread::get_id();
    }
    // The kernel rounds each timed sleep up by the thread's timer slack (50 µs by default),
    // which alone caps the rate near 10 kHz and makes every tick late; 1 ns keeps ticks on time.
    ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    // The thread stays SCHED_OTHER: SCHED_BATCH (no wakeup preemption) let a busy machine hold
    // each tick back until the running task's slice ended, and sampling a program on two loaded
    // cores got 0.56 of the rate asked at 1 kHz and 0.06 at 10 kHz, against 0.95 and 0.78.
    StopReason reason = StopReason::Requested;
    std::string message;
    try {
      std::optional<loop::Children> children;
      if (options_.sampling.subprocesses) {
        raise_priority();
        AttachOptions attach = attach_options(options_);
        attach.wait_for_interpreter = {};
        children.emplace(main_.pid(), attach, start_window(options_));
      }
      loop::Schedule schedule(Clock::now(), options_.sampling.rate_hz);
      auto next_scan = Clock::now();
      while (!wait_for(schedule.next())) {
        if (auto s = sample_main(); !s) {
          reason = s.code() == ErrorCode::ProcessExited ? StopReason::Exited : StopReason::Error;
          message = s.message();
          break;
        }
        if (children) sample_children(*children, next_scan);
        late_.fetch_add(schedule.advance(Clock::now()), std::memory_order_relaxed);
      }
    } catch (const std::exception& e) {
      reason = StopReason::Error;
      message = fmt::format("sampling failed: {}", e.what());
    }
    try {
      if (on_stop_) on_stop_(reason, message);
    } catch (const std::exception& e) {
      spdlog::error("sampler stop callback failed: {}", e.what());
    }
  }

  // Waits until `when`; true if stop() was called meanwhile. A tick already due runs at once,
  // without a system call. One due within kSpinBelow is waited for on the CPU: a sleep and its
  // wake cost the thread about as much as a shallow sample, so sleeping before every tick held
  // a rate of 100 kHz asked to 57,000/s at depth 3 (the loop at 99% of a core, half of it in
  // the futex calls).
  bool wait_for(Clock::time_point when) {
    if (stop_.raised()) return true;
    auto now = Clock::now();
    if (now >= when) return false;
    if (when - now <= kSpinBelow) {
      while (Clock::now() < when)
        if (stop_.raised()) return true;
      return false;
    }
    return stop_.wait_until(when);
  }

  // Needs CAP_SYS_NICE: without it the thread keeps its priority, and a pool larger than the
  // machine's cores gets less than the rate asked.
  static void raise_priority() {
    if (::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kChildrenNice) != 0)
      spdlog::debug("sampling thread keeps its priority: {}", std::strerror(errno));
  }

  // The main process's sample, or while the program it exec'd starts, an attempt to attach to it.
  // An error ends sampling (ProcessExited: the process is gone).
  Status sample_main() {
    const auto now = Clock::now();
    if (main_.replaced_since(now)) ended(main_.pid(), now);
    if (main_.state() == loop::MainProcess::State::Replaced) {
      if (auto s = main_.attach_again(now); !s) return s;
      if (main_.state() == loop::MainProcess::State::Replaced) return Ok{};
    }
    switch (sample(main_.process(), main_.info(), &main_.exec())) {
      case Outcome::Exited:
        return Error{fmt::format("process {} exited", main_.pid()), ErrorCode::ProcessExited};
      case Outcome::Denied:
        return Error{denied_message_, ErrorCode::PermissionDenied};
      case Outcome::Replaced:
        main_.replaced(now);
        ended(main_.pid(), now);
        return Ok{};
      case Outcome::Delivered:
      case Outcome::Failed:
        break;
    }
    std::lock_guard lock(counts_mutex_);
    counts_ = main_.process().read_counts();
    return Ok{};
  }

  // The snapshot saying that a process's program ended (it exited, or exec'd another): its
  // samples so far stay, and those after it are of another process, even under the same pid.
  void ended(pid_t pid, Clock::time_point when) {
    model::Snapshot s;
    s.pid = pid;
    s.time = when;
    s.process_exited = true;
    if (on_snapshot_) on_snapshot_(std::move(s));
  }

  // `exec`: the process's, to tell a read that failed because the process exec'd (Replaced); null
  // for a child, which is looked at before each read (sample_children).
  // `count_errors` false: a failed read is the caller's to count (a child's, see Children).
  Outcome sample(PythonProcess& proc, const std::shared_ptr<const model::ProcessInfo>& info,
                 const process::ExecWatch* exec, bool count_errors = true) {
    auto snap = proc.snapshot();
    if (!snap) {
      const auto code = snap.code();
      if (proc.exited() || code == ErrorCode::ProcessExited || code == ErrorCode::NoSuchProcess ||
          process::thread_gone(proc.pid(), proc.pid()))
        return Outcome::Exited;
      if (exec && exec->replaced()) return Outcome::Replaced;
      if (count_errors) {
        if (errors_.fetch_add(1, std::memory_order_relaxed) == 0 || code != last_error_code_)
          spdlog::debug("sampling process {}: {}", proc.pid(), snap.message());
        last_error_code_ = code;
      } else {
        // At most kChildFailureLimit in a row per child.
        spdlog::debug("sampling child process {}: {}", proc.pid(), snap.message());
      }
      if (code == ErrorCode::PermissionDenied) {
        denied_message_ = snap.message();
        return Outcome::Denied;
      }
      return Outcome::Failed;
    }
    model::Snapshot s = std::move(*snap);
    s.pid = proc.pid();
    s.process = info;
    // A waiting task's stack (async "all") is wall time: kept whatever the thread is doing.
    std::erase_if(s.threads, [this](model::ThreadStack& t) {
      return !t.waiting_task && !loop::select(options_.sampling.mode, t);
    });
    if (s.threads.empty()) return Outcome::Delivered;  // nothing selected at this instant
    samples_.fetch_add(1, std::memory_order_relaxed);
    if (on_snapshot_) on_snapshot_(std::move(s));
    return Outcome::Delivered;
  }

  // A child that ended, even in the middle of its read, is dropped without an error: its
  // samples so far stay, and one snapshot says it ended. So is a child that exec'd (a spawn or
  // forkserver worker is a fork of its parent until it execs a fresh interpreter), and the scan
  // then attaches to the program it became. An exec is looked for before each read, not after
  // one failed: a non-PIE interpreter's new runtime is where the old one was, its reads work,
  // and its samples would go under the old command line. A read that failed because of an exec
  // during it is not counted: the check before the next read drops the child with its failures.
  // One pread, about 1.5 µs, beside the tens of µs of the read.
  void sample_children(loop::Children& children, Clock::time_point& next_scan) {
    std::vector<pid_t> to_drop;
    for (auto& child : children.attached()) {
      if (child.exec.replaced()) {
        to_drop.push_back(child.process->pid());
        continue;
      }
      switch (sample(*child.process, child.info, nullptr, false)) {
        case Outcome::Exited:
        case Outcome::Denied:
        case Outcome::Replaced:  // not without an exec watch; one that exec'd goes all the same
          to_drop.push_back(child.process->pid());
          break;
        case Outcome::Failed:
          if (++child.failures_in_a_row >= kChildFailureLimit) {
            spdlog::debug("not sampling child process {} any more: its reads keep failing",
                          child.process->pid());
            errors_.fetch_add(child.failures_in_a_row, std::memory_order_relaxed);
            to_drop.push_back(child.process->pid());
          }
          break;
        case Outcome::Delivered:
          errors_.fetch_add(child.failures_in_a_row, std::memory_order_relaxed);
          child.failures_in_a_row = 0;
      }
    }
    for (pid_t p : to_drop) {
      children.drop(p);
      ended(p, Clock::now());
    }
    if (const auto now = Clock::now(); now >= next_scan) {
      children.scan(now);
      next_scan = now + kChildScanPeriod;
    }
  }

  loop::MainProcess main_;  // the sampling thread's alone once it runs
  std::string python_version_, warning_;
  SamplerOptions options_;
  OnSnapshot on_snapshot_;
  OnStop on_stop_;
  std::thread thread_;
  std::mutex mutex_;  // guards loop_id_
  loop::StopFlag stop_;
  mutable std::mutex counts_mutex_;
  ReadCounts counts_;  // the main process's, as of the last sample
  std::thread::id loop_id_;
  std::mutex join_mutex_;
  std::atomic<std::uint64_t> samples_{0}, errors_{0}, late_{0};
  ErrorCode last_error_code_ = ErrorCode::Generic;
  std::string denied_message_;  // of the last Outcome::Denied
};

}  // namespace

Result<std::unique_ptr<Sampler>> Sampler::start(pid_t pid, const SamplerOptions& options,
                                                OnSnapshot on_snapshot, OnStop on_stop) {
  const model::SamplingSettings& sampling = options.sampling;
  if (!(sampling.rate_hz > 0))
    return Error{fmt::format("sampling rate must be positive (got {})", sampling.rate_hz),
                 ErrorCode::InvalidArgument};
  auto attached = loop::attach_watched(pid, attach_options(options));
  if (!attached) return attached.error();
  auto sampler = std::make_unique<LoopSampler>(
      loop::MainProcess(std::move(*attached), attach_options(options), start_window(options)),
      options, std::move(on_snapshot), std::move(on_stop));
  sampler->launch();
  return std::unique_ptr<Sampler>(std::move(sampler));
}

}  // namespace dapprof::sampler
