#pragma once
// The second way to read another process's memory: pread of /proc/PID/mem. It needs the same
// ptrace access as process_vm_readv, but is a different system call, so it still works where
// process_vm_readv itself is refused: under qemu-user (which does not implement it: ENOSYS) and
// under a seccomp profile that forbids it (EPERM, or whatever errno the profile chose). One pread
// per read instead of one call per batch, so it is only used once process_vm_readv is refused.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/unique_fd.hpp"

namespace dapprof::sampler::process {

// How this dapprof reads other processes' memory. Decided once for the whole program, at the
// first refusal of process_vm_readv (a refusal of the call, not of one process), and never
// changed back: what refuses it (an emulator, a seccomp filter) does not go away.
enum class ReadPath { VmReadv, ProcMem };
ReadPath read_path();

// After process_vm_readv failed with `err` reading `pid`: 0 if the call itself is refused, in
// which case read_path() is ProcMem from now on (logged once); else the errno to report. ENOSYS
// always is a refusal; EPERM is when `file` can be opened, since then the kernel grants the access
// that process_vm_readv needs and what refused it was a filter. Any other errno is the target's
// (an unmapped address, an exit).
int fall_back_after(int err, pid_t pid, class ProcMemFile& file);

// What to add to a permission error when memory could not be read either way: names both paths,
// and the filter or emulator that refused process_vm_readv if that is known.
std::string both_paths_refused(pid_t pid);

class ProcMemFile {
 public:
  explicit ProcMemFile(pid_t pid) : pid_(pid) {}

  // Opens /proc/PID/mem unless open: 0, or the errno of open (ESRCH for a process that is gone).
  int open();
  // Reads all `size` bytes at `addr`: 0, or the errno process_vm_readv would have given:
  // EFAULT if [addr, addr + size) is not mapped whole (the kernel's EIO), ESRCH if the process
  // exited, EACCES/EPERM if the kernel refuses the access. `calls` counts the preads.
  int read(std::uint64_t addr, void* out, std::size_t size, std::uint64_t& calls);

 private:
  pid_t pid_;
  UniqueFd fd_;
};

}  // namespace dapprof::sampler::process
