#pragma once
// Test support: makes process_vm_readv fail with a chosen errno in this process and every
// process it starts, as a container's seccomp profile (EPERM) or qemu-user (ENOSYS) does, so that
// the fallback to /proc/PID/mem is tested on the machine's own architecture. A raw BPF filter:
// no library needed. Irreversible, as every seccomp filter is.
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

namespace dapprof::test {

#if defined(__x86_64__)
inline constexpr unsigned kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
inline constexpr unsigned kAuditArch = AUDIT_ARCH_AARCH64;
#else
#error "deny_vm_readv.hpp: add this architecture's AUDIT_ARCH_ value"
#endif

// "" on success, else why the filter could not be installed.
inline std::string deny_process_vm_readv(int err) {
  sock_filter filter[] = {
      // A call of another ABI (x86-64's i386 entry) has other numbers: let it through.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
      BPF_STMT(BPF_RET | BPF_K,
               SECCOMP_RET_ERRNO | (static_cast<unsigned>(err) & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  // Without CAP_SYS_ADMIN the kernel takes a filter only from a process that can gain no
  // privileges (setuid programs it runs would not be setuid).
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return std::string("prctl(PR_SET_NO_NEW_PRIVS): ") + std::strerror(errno);
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
    return std::string("prctl(PR_SET_SECCOMP): ") + std::strerror(errno);
  return "";
}

}  // namespace dapprof::test
