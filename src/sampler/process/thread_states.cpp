#include "sampler/process/thread_states.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>

namespace dapprof::sampler::process {

ThreadStates::~ThreadStates() {
  for (const auto& [tid, fd] : fds_) ::close(fd);
}

int ThreadStates::file_of(pid_t tid) {
  if (const auto it = fds_.find(tid); it != fds_.end()) return it->second;
  const int fd =
      ::open(fmt::format("/proc/{}/task/{}/stat", pid_, tid).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) fds_.emplace(tid, fd);
  return fd;
}

void ThreadStates::retain(const std::vector<pid_t>& tids) {
  for (auto it = fds_.begin(); it != fds_.end();) {
    if (std::find(tids.begin(), tids.end(), it->first) == tids.end()) {
      ::close(it->second);
      it = fds_.erase(it);
    } else {
      ++it;
    }
  }
}

bool ThreadStates::running(pid_t tid) {
  char buffer[512];
  const int fd = file_of(tid);
  const ssize_t n = fd >= 0 ? ::pread(fd, buffer, sizeof buffer, 0) : -1;
  if (n > 0) {
    // "tid (comm) S ...": the command name may contain spaces and ')'.
    const std::string_view stat(buffer, static_cast<std::size_t>(n));
    const auto close = stat.rfind(')');
    return close != std::string_view::npos && close + 2 < stat.size() && stat[close + 2] == 'R';
  }
  if (fd >= 0) {  // exited: ESRCH, or a reused TID behind a stale file
    ::close(fd);
    fds_.erase(tid);
  }
  return false;
}

std::unordered_map<pid_t, bool> ThreadStates::active(const std::vector<pid_t>& tids) {
  retain(tids);
  std::unordered_map<pid_t, bool> result;
  for (pid_t tid : tids) result.emplace(tid, running(tid));
  return result;
}

}  // namespace dapprof::sampler::process
