#pragma once
// The process a run samples, followed through an exec. A program that replaces itself keeps its
// pid (a launcher or wrapper that execs the real interpreter, a re-exec into a virtual
// environment's Python, a server restarting itself in place), but all that was read of the old
// program (its runtime's address, its code objects, its command line) describes nothing any more.
#include <sys/types.h>

#include <chrono>
#include <memory>

#include "common/result.hpp"
#include "model/process_info.hpp"
#include "sampler/loop/watched_attach.hpp"
#include "sampler/process/exec_watch.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::sampler::loop {

class MainProcess {
 public:
  using Clock = std::chrono::steady_clock;
  // Sampling: its program is attached. Replaced: it exec'd, and the new program is waited for.
  enum class State { Sampling, Replaced };

  // `window`: how long a new program may take to become an initialised CPython before sampling
  // stops.
  MainProcess(Watched attached, AttachOptions options, std::chrono::milliseconds window);

  pid_t pid() const { return pid_; }
  State state() const { return state_; }
  // Of the program attached (Sampling only).
  PythonProcess& process() { return *process_; }
  const std::shared_ptr<const model::ProcessInfo>& info() const { return info_; }
  const process::ExecWatch& exec() const { return exec_; }

  // Sampling: whether the program has been replaced, looked at no more than once per check
  // period (a sample that fails looks at exec() itself). True: the state is now Replaced.
  bool replaced_since(Clock::time_point now);
  // The program was seen replaced: what was attached goes.
  void replaced(Clock::time_point now);
  // Replaced: one attempt (at most one per attempt period) to attach to the new program; the
  // state is Sampling again once it succeeds. An error stops sampling: ProcessExited, or one
  // saying what the process became and why it cannot be sampled.
  Status attach_again(Clock::time_point now);

 private:
  pid_t pid_;
  AttachOptions options_;
  std::chrono::milliseconds window_;
  State state_ = State::Sampling;
  std::unique_ptr<PythonProcess> process_;
  process::ExecWatch exec_;
  std::shared_ptr<const model::ProcessInfo> info_;
  Clock::time_point next_check_{};
  Clock::time_point replaced_at_{}, next_attempt_{};
};

}  // namespace dapprof::sampler::loop
