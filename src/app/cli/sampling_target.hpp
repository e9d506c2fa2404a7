#pragma once
// What `record` and `top` sample, the same way for both: a running process (--pid) or a program
// they start, and the sampler on it. A program just started gets time to start its interpreter;
// one that cannot be sampled is not left behind.
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/child.hpp"
#include "common/result.hpp"
#include "model/sampling_settings.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::app::cli {

struct SamplingTarget {
  std::optional<Child> child;  // when dapprof started the program
  pid_t pid = 0;
  std::string name;     // the command line, or "pid N" when it cannot be read
  std::string program;  // argv[0] of a program dapprof started
};

// `pid` as it is, or else `command` started with `io` (capture_fd: see Child::spawn).
Result<SamplingTarget> open_target(std::optional<pid_t> pid,
                                   const std::vector<std::string>& command, ChildIo io,
                                   int capture_fd = -1);

// The sampler's options for the command's flags (--native-all implies --native).
sampler::SamplerOptions sampler_options(const SamplingTarget& target,
                                        const model::SamplingSettings& sampling, bool native_all,
                                        sampler::LineNumbers lines = sampler::LineNumbers::Current);

// Sampler::start on the target. If it fails, a program dapprof started is ended and reaped, and
// the error says so when the program had exited by itself.
Result<std::unique_ptr<sampler::Sampler>> start_sampler(SamplingTarget& target,
                                                        const sampler::SamplerOptions& options,
                                                        sampler::Sampler::OnSnapshot on_snapshot,
                                                        sampler::Sampler::OnStop on_stop);

}  // namespace dapprof::app::cli
