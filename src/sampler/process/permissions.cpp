#include "sampler/process/permissions.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace dapprof::sampler::process {
namespace {

// The Yama LSM restricts ptrace beyond plain user ids; it is absent on some kernels.
std::string yama_hint() {
  std::ifstream in("/proc/sys/kernel/yama/ptrace_scope");
  int scope = -1;
  if (!(in >> scope)) return "";
  switch (scope) {
    case 0:
      return "";
    case 1:
      return " kernel.yama.ptrace_scope is 1 (only a parent may trace its children): run "
             "`sudo sysctl kernel.yama.ptrace_scope=0`, or run dapprof as root or with "
             "CAP_SYS_PTRACE.";
    case 2:
      return " kernel.yama.ptrace_scope is 2 (only processes with CAP_SYS_PTRACE may trace): run "
             "dapprof as root or grant it CAP_SYS_PTRACE (`sudo setcap cap_sys_ptrace+ep "
             "$(which dapprof)`), or lower it with `sudo sysctl kernel.yama.ptrace_scope=1`.";
    default:
      return fmt::format(
          " kernel.yama.ptrace_scope is {} (ptrace disabled until reboot): no process can be "
          "sampled on this machine until the setting is lowered and the machine rebooted.",
          scope);
  }
}

}  // namespace

std::string permission_denied_message(pid_t pid, const std::string& what) {
  return fmt::format(
      "permission denied to {} process {} (dapprof runs as uid {}). Run dapprof as the same "
      "user as the target or as root, or grant it CAP_SYS_PTRACE.{} In a container, start it "
      "with `docker run --cap-add SYS_PTRACE`; in Kubernetes, set the container's "
      "`securityContext.capabilities.add: [\"SYS_PTRACE\"]`.",
      what, pid, getuid(), yama_hint());
}

}  // namespace dapprof::sampler::process
