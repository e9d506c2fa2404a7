#include "sampler/loop/watched_attach.hpp"

#include <utility>

namespace dapprof::sampler::loop {

Result<Watched> attach_watched(pid_t pid, const AttachOptions& options) {
  process::ExecWatch exec(pid);
  auto attached = PythonProcess::attach(pid, options);
  if (!attached) return attached.error();
  return Watched{std::move(*attached), std::move(exec)};
}

}  // namespace dapprof::sampler::loop
