#include "sampler/process/exec_watch.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

namespace dapprof::sampler::process {

// The kernel ties an open /proc/PID/mem to the address space it was opened on, which an exec
// replaces. Reading the old one then gives 0 bytes, where reading a live one at address 0
// (never mapped) fails with EIO; no address of the process needs to be known.
ExecWatch::ExecWatch(pid_t pid)
    : mem_(::open(fmt::format("/proc/{}/mem", pid).c_str(), O_RDONLY | O_CLOEXEC)) {}

bool ExecWatch::replaced() const {
  if (!mem_) return false;
  char byte = 0;
  return ::pread(mem_.get(), &byte, 1, 0) == 0;
}

}  // namespace dapprof::sampler::process
