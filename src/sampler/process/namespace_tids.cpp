#include "sampler/process/namespace_tids.hpp"

#include "sampler/process/pid_namespace.hpp"
#include "sampler/process/tasks.hpp"

namespace dapprof::sampler::process {

NamespaceTids::NamespaceTids(pid_t pid) : pid_(pid), nested_(namespace_pids(pid).size() > 1) {}

void NamespaceTids::refresh(bool missing) {
  const auto now = Clock::now();
  const bool old = !listed_ || now - *listed_ > kMaxAge;
  if (!old && !(missing && now - *listed_ > kRetryAfter)) return;
  listed_ = now;
  auto tids = list_threads(pid_);
  if (!tids) return;  // gone: every TID stays unknown
  to_host_.clear();
  to_inner_.clear();
  for (const pid_t tid : *tids) {
    const auto ids = namespace_pids(pid_, tid);
    if (ids.empty()) continue;  // exited meanwhile
    to_host_[ids.back()] = tid;
    to_inner_[tid] = ids.back();
  }
}

pid_t NamespaceTids::host(pid_t inner) {
  if (!nested_ || inner <= 0) return inner;
  refresh(false);
  if (const auto it = to_host_.find(inner); it != to_host_.end()) return it->second;
  refresh(true);
  const auto it = to_host_.find(inner);
  return it == to_host_.end() ? 0 : it->second;
}

pid_t NamespaceTids::inner(pid_t host) {
  if (!nested_ || host <= 0) return host;
  refresh(false);
  if (const auto it = to_inner_.find(host); it != to_inner_.end()) return it->second;
  refresh(true);
  const auto it = to_inner_.find(host);
  return it == to_inner_.end() ? 0 : it->second;
}

}  // namespace dapprof::sampler::process
