#pragma once
#include <sys/types.h>

#include <string>

namespace dapprof::sampler::process {
// A permission-denied message that says what to do: run as the same user or root, grant
// CAP_SYS_PTRACE, lower kernel.yama.ptrace_scope (reads its current value), Docker
// --cap-add SYS_PTRACE, Kubernetes securityContext.capabilities.add: [SYS_PTRACE].
std::string permission_denied_message(pid_t pid, const std::string& what);
}  // namespace dapprof::sampler::process
