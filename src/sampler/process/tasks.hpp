#pragma once
// Threads and children of a process, from /proc.
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <vector>

#include "common/result.hpp"

namespace dapprof::sampler::process {

// TIDs in /proc/PID/task. NoSuchProcess if the process is gone.
Result<std::vector<pid_t>> list_threads(pid_t pid);
// Scheduler state letter from /proc/PID/task/TID/stat ('R' running, 'S' sleeping, ...).
Result<char> thread_state(pid_t pid, pid_t tid);
// True if the thread is running or runnable (not waiting in a syscall or on a lock).
bool thread_active(pid_t pid, pid_t tid);
// True if the thread no longer runs: gone from /proc, a zombie or dead. thread_gone(pid, pid)
// asks it of the whole process (its leader).
bool thread_gone(pid_t pid, pid_t tid);
// All descendants of pid (children, grandchildren...), from /proc/*/stat parent links.
std::vector<pid_t> descendants(pid_t pid);
// True if `candidate` is pid itself or one of its descendants.
bool in_process_tree(pid_t root, pid_t candidate);
// Executable name (/proc/PID/comm).
std::string process_name(pid_t pid);

// A process's TIDs, listed again only when older than kMaxAge or when asked to (a thread was not
// found in the list): listing costs five system calls, too many for every sample.
class TaskList {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kMaxAge = std::chrono::milliseconds(100);
  // How soon after a listing a missing thread may have the list made again.
  static constexpr auto kMinAge = std::chrono::milliseconds(2);

  explicit TaskList(pid_t pid) : pid_(pid) {}
  Result<std::vector<pid_t>> get(bool stale);
  // Whether the list was made under kMinAge ago (a thread missing from it is not news).
  bool fresh() const { return listed_ && Clock::now() - *listed_ < kMinAge; }

 private:
  pid_t pid_;
  std::vector<pid_t> tids_;
  std::optional<Clock::time_point> listed_;
};

}  // namespace dapprof::sampler::process
