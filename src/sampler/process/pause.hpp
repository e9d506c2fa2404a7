#pragma once
// Stops every thread of a process for a consistent read (ptrace), and resumes them when the
// guard goes out of scope. If dapprof dies while holding it, the kernel detaches and the
// threads run on.
//
// ptrace is per thread: destroy the guard on the thread that created it (Linux only accepts
// PTRACE_DETACH from the tracing thread).
#include <sys/types.h>

#include <optional>
#include <vector>

#include "common/result.hpp"

namespace dapprof::sampler::process {

class PausedProcess {
 public:
  // PermissionDenied carries the fix (same user, CAP_SYS_PTRACE, kernel.yama.ptrace_scope,
  // docker --cap-add SYS_PTRACE, Kubernetes securityContext SYS_PTRACE).
  static Result<PausedProcess> pause(pid_t pid);
  // Stops only `tids` (threads of `pid`); those that exited meanwhile are left out. For readers
  // that only need some threads consistent: every thread stopped costs the target a trip
  // through the scheduler at each sample.
  static Result<PausedProcess> pause_threads(pid_t pid, const std::vector<pid_t>& tids);
  PausedProcess(PausedProcess&&) noexcept;
  PausedProcess& operator=(PausedProcess&&) noexcept;
  PausedProcess(const PausedProcess&) = delete;
  PausedProcess& operator=(const PausedProcess&) = delete;
  ~PausedProcess();  // resumes

  const std::vector<pid_t>& threads() const { return tids_; }

 private:
  PausedProcess() = default;
  // Seizes and stops `fresh`, adding those stopped to tids_ and those gone to `gone`. An error
  // (permission, another tracer) once every seized thread is accounted for.
  std::optional<Error> stop(const std::vector<pid_t>& fresh, std::vector<pid_t>& gone);
  void resume();
  pid_t pid_ = 0;
  std::vector<pid_t> tids_;
  std::vector<int> signals_;  // per thread: a signal that arrived during the stop, to deliver
};

}  // namespace dapprof::sampler::process
