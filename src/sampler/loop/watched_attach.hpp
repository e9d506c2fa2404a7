#pragma once
// Attaching to a process together with the watch that tells when it execs (process::ExecWatch):
// the watch begins before anything is read, so that an exec in between is seen. Used for the
// sampled process and each child alike.
#include <sys/types.h>

#include <memory>

#include "common/result.hpp"
#include "sampler/process/exec_watch.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::sampler::loop {

struct Watched {
  std::unique_ptr<PythonProcess> process;
  process::ExecWatch exec;
};

Result<Watched> attach_watched(pid_t pid, const AttachOptions& options);

}  // namespace dapprof::sampler::loop
