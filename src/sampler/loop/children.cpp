#include "sampler/loop/children.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "sampler/loop/process_info.hpp"
#include "sampler/loop/watched_attach.hpp"
#include "sampler/process/tasks.hpp"

namespace dapprof::sampler::loop {

Children::Children(pid_t root, AttachOptions options, std::chrono::milliseconds window)
    : root_(root), options_(options), window_(window) {
  // One attempt per scan: the sampling thread must not block inside attach while the parent is
  // being sampled; the window is enforced across scans instead.
  options_.wait_for_interpreter = std::chrono::milliseconds(0);
}

void Children::drop(pid_t pid) {
  std::erase_if(attached_, [&](const Child& c) { return c.process->pid() == pid; });
}

void Children::scan(Clock::time_point now) {
  const auto tree = process::descendants(root_);
  const auto alive = [&](pid_t p) { return std::binary_search(tree.begin(), tree.end(), p); };
  // Forget processes that are gone, so that a reused PID is looked at afresh.
  std::erase_if(ignored_, [&](pid_t p) { return !alive(p); });
  std::erase_if(candidates_, [&](const auto& kv) { return !alive(kv.first); });

  for (pid_t pid : tree) {
    if (ignored_.contains(pid)) continue;
    if (std::any_of(attached_.begin(), attached_.end(),
                    [&](const Child& c) { return c.process->pid() == pid; }))
      continue;
    const auto first_seen = candidates_.try_emplace(pid, now).first->second;
    auto proc = attach_watched(pid, options_);
    if (proc) {
      spdlog::debug("sampling child process {} (Python {})", pid, proc->process->python_version());
      if (!proc->process->warning().empty())
        spdlog::warn("child process {}: {}", pid, proc->process->warning());
      candidates_.erase(pid);
      attached_.push_back(
          {std::move(proc->process), read_process_info(pid), 0, std::move(proc->exec)});
      continue;
    }
    const auto code = proc.code();
    if (code == ErrorCode::NoSuchProcess || code == ErrorCode::ProcessExited) {
      candidates_.erase(pid);
    } else if (code == ErrorCode::PermissionDenied || now - first_seen >= window_) {
      spdlog::debug("not sampling child process {}: {}", pid, proc.message());
      candidates_.erase(pid);
      ignored_.insert(pid);
    }
  }
}

}  // namespace dapprof::sampler::loop
