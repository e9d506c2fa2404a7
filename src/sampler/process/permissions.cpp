#include "sampler/process/permissions.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "sampler/process/procfs.hpp"

namespace dapprof::sampler::process {
namespace {

constexpr int kCapSysPtrace = 19;

// The value of "Name:" in a /proc/PID/status text, without the tab.
std::string_view status_field(std::string_view status, std::string_view name) {
  for (std::size_t at = 0; at < status.size();) {
    const auto end = std::min(status.find('\n', at), status.size());
    const auto line = status.substr(at, end - at);
    if (line.size() > name.size() && line.starts_with(name) && line[name.size()] == ':')
      return line.substr(name.size() + 1);
    at = end + 1;
  }
  return {};
}

template <typename T>
std::optional<T> next_number(std::string_view& text, int base = 10) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc{}) return std::nullopt;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return value;
}

std::string setcap_hint() {
  return "grant it CAP_SYS_PTRACE (`sudo setcap cap_sys_ptrace+ep $(which dapprof)`)";
}

std::string yama_advice(int scope) {
  switch (scope) {
    case 1:
      return "kernel.yama.ptrace_scope is 1 (only a parent may trace its children): run "
             "`sudo sysctl kernel.yama.ptrace_scope=0`, or run dapprof as root or with "
             "CAP_SYS_PTRACE.";
    case 2:
      return fmt::format(
          "kernel.yama.ptrace_scope is 2 (only processes with CAP_SYS_PTRACE may trace): run "
          "dapprof as root or {}, or lower it with `sudo sysctl kernel.yama.ptrace_scope=1`.",
          setcap_hint());
    default:
      return fmt::format(
          "kernel.yama.ptrace_scope is {} (ptrace disabled until reboot): no process can be "
          "sampled on this machine until the setting is lowered and the machine rebooted.",
          scope);
  }
}

// Yama stands in the way unless CAP_SYS_PTRACE lifts it (scopes 1 and 2) or the target is a
// descendant of ours (scope 1), which is not known here.
bool yama_may_forbid(const PermissionFacts& f) {
  const int scope = f.yama_ptrace_scope.value_or(0);
  return scope >= 3 || (scope >= 1 && !f.we_have_cap_sys_ptrace);
}

std::string cause_and_fix(const PermissionFacts& f) {
  if (f.yama_ptrace_scope.value_or(0) >= 3) return yama_advice(*f.yama_ptrace_scope);
  if (f.we_are_root && !f.we_have_cap_sys_ptrace)
    return "dapprof runs as root but without CAP_SYS_PTRACE, which containers drop by default.";
  // From here on, root has CAP_SYS_PTRACE: neither uids nor the dumpable flag stop it.
  if (!f.we_have_cap_sys_ptrace && f.target_uid && f.target_euid && f.target_suid &&
      (*f.target_uid != f.our_uid || *f.target_euid != f.our_uid || *f.target_suid != f.our_uid)) {
    const bool mixed = *f.target_uid != *f.target_euid || *f.target_euid != *f.target_suid;
    return fmt::format(
        "The process belongs to another user (uid {}{}). Run dapprof as the same user as the "
        "target or as root, or {}.",
        *f.target_euid,
        mixed ? fmt::format("; its real, effective and saved uids are {}, {} and {}", *f.target_uid,
                            *f.target_euid, *f.target_suid)
              : "",
        setcap_hint());
  }
  if (!f.we_have_cap_sys_ptrace && f.target_dumpable == false)
    return fmt::format(
        "The process is not dumpable (it called prctl(PR_SET_DUMPABLE, 0), changed its user or "
        "group ids, or runs a setuid, setgid or file-capability program), and the kernel lets only "
        "a process with CAP_SYS_PTRACE read a non-dumpable one, even of the same user. Run dapprof "
        "as root or {}.",
        setcap_hint());
  if (yama_may_forbid(f)) return yama_advice(*f.yama_ptrace_scope);
  return fmt::format(
      "Run dapprof as the same user as the target or as root, or {}; a security module "
      "(AppArmor, SELinux) may also forbid it.",
      setcap_hint());
}

}  // namespace

PermissionFacts permission_facts(pid_t pid) {
  PermissionFacts f;
  f.our_uid = getuid();
  f.we_are_root = geteuid() == 0;
  if (const auto self = read_proc_file("/proc/self/status")) {
    auto caps = status_field(*self, "CapEff");
    if (const auto bits = next_number<std::uint64_t>(caps, 16))
      f.we_have_cap_sys_ptrace = ((*bits >> kCapSysPtrace) & 1) != 0;
  }
  if (const auto status = read_proc_file(fmt::format("/proc/{}/status", pid))) {
    auto uids = status_field(*status, "Uid");
    f.target_uid = next_number<uid_t>(uids);
    f.target_euid = next_number<uid_t>(uids);
    f.target_suid = next_number<uid_t>(uids);
  }
  // The kernel gives the files in /proc/PID (not the directory itself) to the target's effective
  // uid while it is dumpable, and to root otherwise; so the flag shows only for a target that
  // does not run as root.
  struct stat st {};
  if (f.target_euid && *f.target_euid != 0 &&
      ::stat(fmt::format("/proc/{}/stat", pid).c_str(), &st) == 0)
    f.target_dumpable = st.st_uid == *f.target_euid;
  if (const auto scope = read_proc_file("/proc/sys/kernel/yama/ptrace_scope")) {
    std::string_view text = *scope;
    f.yama_ptrace_scope = next_number<int>(text);
  }
  return f;
}

std::string permission_denied_message(pid_t pid, const std::string& what,
                                      const PermissionFacts& facts) {
  return fmt::format(
      "permission denied to {} process {} (dapprof runs as uid {}). {} In a container, start it "
      "with `docker run --cap-add SYS_PTRACE`; in Kubernetes, set the container's "
      "`securityContext.capabilities.add: [\"SYS_PTRACE\"]`.",
      what, pid, facts.our_uid, cause_and_fix(facts));
}

std::string permission_denied_message(pid_t pid, const std::string& what) {
  return permission_denied_message(pid, what, permission_facts(pid));
}

}  // namespace dapprof::sampler::process
