#include "sampler/process/pause.hpp"

#include <fmt/format.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "sampler/process/permissions.hpp"
#include "sampler/process/procfs.hpp"
#include "sampler/process/tasks.hpp"

namespace dapprof::sampler::process {
namespace {

long ptrace_call(enum __ptrace_request req, pid_t tid, unsigned long data = 0) {
  return ptrace(req, tid, nullptr, reinterpret_cast<void*>(data));
}

// "TracerPid:" from /proc/PID/status (or a thread's); 0 if untraced or unreadable.
pid_t tracer_of(pid_t pid, pid_t tid = 0) {
  const auto status = read_proc_file(tid ? fmt::format("/proc/{}/task/{}/status", pid, tid)
                                         : fmt::format("/proc/{}/status", pid));
  if (!status) return 0;
  const auto at = status->find("TracerPid:");
  if (at == std::string::npos) return 0;
  return static_cast<pid_t>(std::strtol(status->c_str() + at + 10, nullptr, 10));
}

// Real parent of pid from /proc/PID/stat (0 if unknown).
pid_t parent_of(pid_t pid) {
  const std::string stat = read_proc_file(fmt::format("/proc/{}/stat", pid)).value_or("");
  const auto close = stat.rfind(')');
  if (close == std::string::npos || close + 4 >= stat.size()) return 0;
  return static_cast<pid_t>(std::strtol(stat.c_str() + close + 4, nullptr, 10));
}

// The leader's exit status belongs to its real parent; when that is us (dapprof started the
// target), leave it for the code that waits for the child.
bool may_reap(pid_t pid, pid_t tid) { return tid != pid || parent_of(pid) != getpid(); }

enum class WaitOutcome { Stopped, Gone, Pending };

// PTRACE_EVENT_* stops (our interrupt, a group stop, an exit in progress) carry no signal;
// otherwise the thread was about to receive WSTOPSIG, to be delivered when we let it go.
int forwarded_signal(int status) { return (status >> 16) != 0 ? 0 : WSTOPSIG(status); }

// Blocking wait for a seized thread's stop or exit, consuming its wait status.
WaitOutcome wait_stop(pid_t tid, int& signal_to_forward) {
  int status = 0;
  pid_t r;
  do {
    r = waitpid(tid, &status, __WALL);
  } while (r < 0 && errno == EINTR);
  if (r != tid || !WIFSTOPPED(status)) return WaitOutcome::Gone;
  signal_to_forward = forwarded_signal(status);
  return WaitOutcome::Stopped;
}

// A look at a seized thread (waiting for a change if `block`). Peeks first (WNOWAIT) so that an
// exit is only consumed when it is ours to consume.
WaitOutcome poll_stop(pid_t pid, pid_t tid, int& signal_to_forward, bool block) {
  siginfo_t info{};
  const int options = WEXITED | WSTOPPED | WNOWAIT | __WALL | (block ? 0 : WNOHANG);
  if (waitid(P_PID, static_cast<id_t>(tid), &info, options) != 0) {
    return errno == EINTR ? WaitOutcome::Pending : WaitOutcome::Gone;  // ECHILD: not ours
  }
  if (info.si_pid == 0) return WaitOutcome::Pending;
  const bool stopped = info.si_code == CLD_TRAPPED || info.si_code == CLD_STOPPED;
  if (!stopped && !may_reap(pid, tid)) return WaitOutcome::Gone;
  return wait_stop(tid, signal_to_forward);
}

}  // namespace

Result<PausedProcess> PausedProcess::pause(pid_t pid) {
  PausedProcess paused;
  paused.pid_ = pid;
  std::vector<pid_t> gone;
  // Threads may be created while we stop the others: list again until no new one appears.
  for (int round = 0;; ++round) {
    auto listed = list_threads(pid);
    if (!listed) {
      if (listed.code() == ErrorCode::NoSuchProcess && round > 0)
        return Error{fmt::format("process {} exited", pid), ErrorCode::ProcessExited};
      return listed.error();
    }
    std::vector<pid_t> fresh;
    for (pid_t tid : *listed) {
      if (std::find(paused.tids_.begin(), paused.tids_.end(), tid) == paused.tids_.end() &&
          std::find(gone.begin(), gone.end(), tid) == gone.end())
        fresh.push_back(tid);
    }
    if (fresh.empty()) break;
    if (round > 1000) return Error{fmt::format("process {} keeps creating threads", pid)};
    if (auto failure = paused.stop(fresh, gone)) return *failure;  // `paused` lets them go
  }
  if (paused.tids_.empty())
    return Error{fmt::format("process {} exited", pid), ErrorCode::ProcessExited};
  return paused;
}

Result<PausedProcess> PausedProcess::pause_threads(pid_t pid, const std::vector<pid_t>& tids) {
  PausedProcess paused;
  paused.pid_ = pid;
  std::vector<pid_t> gone;
  if (auto failure = paused.stop(tids, gone)) return *failure;
  return paused;
}

std::optional<Error> PausedProcess::stop(const std::vector<pid_t>& fresh,
                                         std::vector<pid_t>& gone) {
  const pid_t pid = pid_;
  std::vector<pid_t> pending;
  std::optional<Error> failure;  // returned only once every seized thread is accounted for
  for (pid_t tid : fresh) {
    if (ptrace_call(PTRACE_SEIZE, tid) != 0) {
      const int err = errno;
      if (err == ESRCH || thread_gone(pid, tid)) {  // exited meanwhile
        gone.push_back(tid);
        continue;
      }
      // EPERM also comes from a process that is exiting, and from a thread still ours because
      // it died during an earlier pause before it could be detached: neither is a permission
      // problem.
      if (err == EPERM && thread_gone(pid, pid)) {
        failure = Error{fmt::format("process {} exited", pid), ErrorCode::ProcessExited};
        break;
      }
      if (err == EPERM && tracer_of(pid, tid) == getpid()) {
        gone.push_back(tid);
        continue;
      }
      if (err == EPERM) {
        if (const pid_t tracer = tracer_of(pid); tracer != 0 && tracer != getpid()) {
          failure = Error{fmt::format("process {} is already being traced by process {} ({}); "
                                      "ptrace allows one tracer at a time: detach that debugger "
                                      "or tracer, or sample in nonblocking mode",
                                      pid, tracer, process_name(tracer)),
                          ErrorCode::PermissionDenied};
        } else {
          failure =
              Error{permission_denied_message(pid, "pause (ptrace)"), ErrorCode::PermissionDenied};
        }
      } else {
        failure = Error{
            fmt::format("cannot ptrace thread {} of process {}: {}", tid, pid, std::strerror(err))};
      }
      break;
    }
    // A thread that dies between SEIZE and INTERRUPT still reports its exit: wait for it.
    ptrace_call(PTRACE_INTERRUPT, tid);
    pending.push_back(tid);
  }

  // Stopping takes a trip through the scheduler for each thread. Other threads cannot keep
  // a blocking wait from returning (a thread that is killed reports its exit), so wait for
  // them blocking, at no CPU cost; by then the leader has usually stopped too.
  const auto record = [&](pid_t tid, WaitOutcome outcome, int sig) {
    if (outcome == WaitOutcome::Stopped) {
      tids_.push_back(tid);
      signals_.push_back(sig);
    } else if (outcome == WaitOutcome::Gone) {
      gone.push_back(tid);
    }
    return outcome != WaitOutcome::Pending;
  };
  std::erase_if(pending, [&](pid_t tid) {
    if (tid == pid) return false;
    int sig = 0;
    return record(tid, wait_stop(tid, sig), sig);
  });
  // The leader. Its exit status belongs to its real parent, so look before consuming. When
  // that parent is another process, a blocking look is safe and cheapest: it costs no CPU and
  // does not take the CPU from the threads being stopped (polling did, on a busy machine,
  // slowing pauses down tenfold). When we are the parent, another of our threads may be
  // waiting for the child too and receive its stop instead of us: poll, and take a leader
  // seen in a tracing stop as stopped. A zombie leader (after pthread_exit) never stops.
  for (pid_t tid : pending) {
    int sig = 0;
    const bool our_child = parent_of(pid) == getpid();
    auto outcome = poll_stop(pid, tid, sig, /*block=*/false);
    if (outcome == WaitOutcome::Pending && thread_gone(pid, tid)) outcome = WaitOutcome::Gone;
    if (outcome == WaitOutcome::Pending && !our_child) {
      outcome = poll_stop(pid, tid, sig, /*block=*/true);
    }
    for (auto nap = std::chrono::microseconds(20); outcome == WaitOutcome::Pending;
         nap = std::min(nap * 2, std::chrono::microseconds(1000))) {
      std::this_thread::sleep_for(nap);
      outcome = poll_stop(pid, tid, sig, /*block=*/false);
      if (outcome != WaitOutcome::Pending) break;
      const auto state = thread_state(pid, tid);
      if (!state.ok() || *state == 'Z' || *state == 'X') outcome = WaitOutcome::Gone;
      if (state.ok() && *state == 't') outcome = WaitOutcome::Stopped;  // reported elsewhere
    }
    record(tid, outcome, sig);
  }
  return failure;
}

PausedProcess::PausedProcess(PausedProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, 0)),
      tids_(std::move(other.tids_)),
      signals_(std::move(other.signals_)) {
  other.tids_.clear();
  other.signals_.clear();
}

PausedProcess& PausedProcess::operator=(PausedProcess&& other) noexcept {
  if (this != &other) {
    resume();
    pid_ = std::exchange(other.pid_, 0);
    tids_ = std::move(other.tids_);
    signals_ = std::move(other.signals_);
    other.tids_.clear();
    other.signals_.clear();
  }
  return *this;
}

PausedProcess::~PausedProcess() { resume(); }

void PausedProcess::resume() {
  std::vector<pid_t> dying;
  for (std::size_t i = 0; i < tids_.size(); ++i) {
    if (ptrace_call(PTRACE_DETACH, tids_[i], static_cast<unsigned long>(signals_[i])) != 0 &&
        errno == ESRCH)
      dying.push_back(tids_[i]);  // killed while stopped: no longer in a stop
  }
  // A traced thread that died is a zombie until its tracer reaps it, and the process's parent is
  // only told of the exit once every thread is reaped: reap them, the leader last.
  std::sort(dying.begin(), dying.end(),
            [&](pid_t a, pid_t b) { return (a == pid_) < (b == pid_); });
  for (pid_t tid : dying) {
    if (!may_reap(pid_, tid)) continue;
    int status = 0;
    if (tid != pid_) {
      while (waitpid(tid, &status, __WALL) < 0 && errno == EINTR) {
      }
      continue;
    }
    // The leader reports only once the whole group is gone; do not wait for ever.
    for (int i = 0; i < 200 && waitpid(tid, &status, __WALL | WNOHANG) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  tids_.clear();
  signals_.clear();
}

}  // namespace dapprof::sampler::process
