#pragma once
// What one read of a process gives: every (selected) thread's stack at one instant.
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/frame.hpp"
#include "model/local_variable.hpp"
#include "model/process_info.hpp"
#include "model/thread_info.hpp"

namespace dapprof::model {

struct ThreadStack {
  ThreadInfo info;
  bool owns_gil = false;
  bool active = false;  // running, not waiting in a syscall or on a lock
  bool on_cpu = false;  // the kernel shows it running or runnable (state R)
  // Only when asked for (sampler::AttachOptions::exceptions): the type name of the exception the
  // thread is handling, "" if none.
  std::string exception;
  std::vector<Frame> frames;  // innermost first
  // Only when asked for (sampler::AttachOptions::locals): the local variables of each Python
  // frame of `frames`, in their order (native frames have none and no entry).
  std::vector<std::vector<LocalVariable>> locals;
  // AsyncMode::All: the stack of a pending task that was not running, sampled on behalf of the
  // thread whose loop holds it (info); kept whatever the idle setting, and never active.
  bool waiting_task = false;

  std::string_view status() const { return !active ? "idle" : owns_gil ? "active+gil" : "active"; }
};

struct Snapshot {
  pid_t pid = 0;  // every thread's info.pid
  std::chrono::steady_clock::time_point time;
  std::vector<ThreadStack> threads;
  // The process sampled (its pid is `pid`), shared by all its snapshots; null in snapshots that
  // did not come from the sampler.
  std::shared_ptr<const ProcessInfo> process;
  // A child process sampled with `subprocesses` ended: this snapshot has no threads and says so
  // once, after its last sample.
  bool process_exited = false;
};

}  // namespace dapprof::model
