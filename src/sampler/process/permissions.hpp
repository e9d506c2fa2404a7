#pragma once
#include <sys/types.h>

#include <optional>
#include <string>

namespace dapprof::sampler::process {

// What decides whether the kernel lets dapprof read a process (ptrace_may_access): the user ids
// on both sides, the target's dumpable flag, CAP_SYS_PTRACE and the Yama LSM's ptrace_scope.
struct PermissionFacts {
  uid_t our_uid = 0;  // real uid: process_vm_readv checks the caller's real ids
  bool we_are_root = false;
  bool we_have_cap_sys_ptrace = false;
  // The target's real, effective and saved uids, when /proc/PID/status could be read.
  std::optional<uid_t> target_uid, target_euid, target_suid;
  // Whether the target is dumpable; unknown when it runs as root (see permission_facts).
  std::optional<bool> target_dumpable;
  std::optional<int> yama_ptrace_scope;  // absent on kernels without Yama
};

// The facts as they stand now for `pid` (dapprof's own credentials, /proc/PID, Yama).
PermissionFacts permission_facts(pid_t pid);

// A permission-denied message that names the likely cause and what to do about it: another
// user's process (run as that user or root, or grant CAP_SYS_PTRACE), a non-dumpable one (only
// CAP_SYS_PTRACE helps, even for its own user), Yama's ptrace_scope (its current value and how
// to lower it), root without CAP_SYS_PTRACE; and, for containers, Docker --cap-add SYS_PTRACE and
// Kubernetes securityContext.capabilities.add: [SYS_PTRACE].
std::string permission_denied_message(pid_t pid, const std::string& what,
                                      const PermissionFacts& facts);
std::string permission_denied_message(pid_t pid, const std::string& what);

}  // namespace dapprof::sampler::process
