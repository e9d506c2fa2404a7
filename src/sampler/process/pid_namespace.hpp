#pragma once
// PID namespaces as /proc shows them. A process in a container has one PID per namespace it is
// in, listed by the NSpid line of /proc/PID/status from /proc's namespace (the host's, for
// dapprof) down to its own: `NSpid: 48213 1` is the host's 48213, pid 1 of its container.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dapprof::sampler::process {

// The NSpid line of /proc/PID/status (of /proc/PID/task/TID/status when tid is given): host PID
// first, the process's own last. Empty if the process is gone or the kernel has no NSpid (older
// than 4.1); then the host's id is the only one.
std::vector<pid_t> namespace_pids(pid_t pid, pid_t tid = 0);
// The PID the process knows itself by (the innermost of namespace_pids), or pid when unknown.
pid_t innermost_pid(pid_t pid);
// The identity of the process's PID namespace (the inode of /proc/PID/ns/pid); nullopt if the
// link cannot be read (the process is gone, or another user's).
std::optional<std::uint64_t> pid_namespace(pid_t pid);
// The processes of the PID namespace `ns` (see pid_namespace) that it knows as `inner`, by their
// host PIDs: one, unless the process was replaced between the reads of /proc. Only processes
// whose namespace link this user may read are seen.
std::vector<pid_t> find_in_namespace(std::uint64_t ns, pid_t inner);
// The process's arguments (/proc/PID/cmdline); empty if it is gone or a kernel thread.
std::vector<std::string> command_line(pid_t pid);

}  // namespace dapprof::sampler::process
