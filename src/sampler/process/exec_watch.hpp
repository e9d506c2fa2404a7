#pragma once
// Whether a process still runs the program it ran when the watch began. A worker that a pool
// starts as a fork and which then execs a fresh interpreter (multiprocessing's spawn and
// forkserver, subprocess) keeps its pid, but its memory becomes another program's: whatever was
// read of it before (the runtime's address, cached code objects, its command line) is stale.
#include <sys/types.h>

#include "common/unique_fd.hpp"

namespace dapprof::sampler::process {

class ExecWatch {
 public:
  ExecWatch() = default;
  // Begins watching. Make it before reading anything of the process that an exec would make
  // stale, so that an exec in between is seen. A watch that cannot begin (no access, or the
  // process is gone) never reports an exec: what reads the process then fails on its own.
  explicit ExecWatch(pid_t pid);

  // True once the process has exec'd since the watch began (or has exited). One system call.
  bool replaced() const;

 private:
  UniqueFd mem_;
};

}  // namespace dapprof::sampler::process
