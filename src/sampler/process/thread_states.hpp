#pragma once
// The scheduler state of a process's threads, read at every sample. Each thread's
// /proc/PID/task/TID/stat stays open between samples: one pread per thread instead of
// open+read+close, which matters where system calls are expensive (virtual machines).
#include <sys/types.h>

#include <unordered_map>
#include <vector>

namespace dapprof::sampler::process {

class ThreadStates {
 public:
  explicit ThreadStates(pid_t pid) : pid_(pid) {}
  ThreadStates(const ThreadStates&) = delete;
  ThreadStates& operator=(const ThreadStates&) = delete;
  ~ThreadStates();

  // For each of `tids`: true if running or runnable (state 'R'). A thread that exited reads as
  // not running. Files of threads no longer listed are closed.
  std::unordered_map<pid_t, bool> active(const std::vector<pid_t>& tids);
  // The same for one thread, keeping every other file open.
  bool running(pid_t tid);
  // Closes the files of threads not in `tids`.
  void retain(const std::vector<pid_t>& tids);

 private:
  int file_of(pid_t tid);
  pid_t pid_;
  std::unordered_map<pid_t, int> fds_;
};

}  // namespace dapprof::sampler::process
