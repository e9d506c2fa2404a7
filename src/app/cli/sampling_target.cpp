#include "app/cli/sampling_target.hpp"

#include <fmt/format.h>

#include <chrono>
#include <csignal>

#include "app/cli/proc_info.hpp"

namespace dapprof::app::cli {

namespace {
// How long a program dapprof starts may take to bring up its interpreter before sampling gives
// up on it (a cold start of a large virtualenv takes seconds).
constexpr std::chrono::seconds kInterpreterStartup{10};
}  // namespace

Result<SamplingTarget> open_target(std::optional<pid_t> pid,
                                   const std::vector<std::string>& command, ChildIo io,
                                   int capture_fd) {
  SamplingTarget target;
  if (pid) {
    target.pid = *pid;
    const auto cmd = joined(command_line(*pid));
    target.name = cmd.empty() ? fmt::format("pid {}", *pid) : cmd;
    return target;
  }
  auto spawned = Child::spawn(command, io, capture_fd);
  if (!spawned) return spawned.error();
  target.child.emplace(std::move(*spawned));
  target.pid = target.child->pid();
  target.name = joined(command);
  target.program = command.front();
  return target;
}

sampler::SamplerOptions sampler_options(const SamplingTarget& target,
                                        const model::SamplingSettings& sampling, bool native_all,
                                        sampler::LineNumbers lines) {
  sampler::SamplerOptions options{.sampling = sampling, .native_all = native_all, .lines = lines};
  options.sampling.native = sampling.native || native_all;
  if (target.child) options.wait_for_interpreter = kInterpreterStartup;
  return options;
}

Result<std::unique_ptr<sampler::Sampler>> start_sampler(SamplingTarget& target,
                                                        const sampler::SamplerOptions& options,
                                                        sampler::Sampler::OnSnapshot on_snapshot,
                                                        sampler::Sampler::OnStop on_stop) {
  auto sampling =
      sampler::Sampler::start(target.pid, options, std::move(on_snapshot), std::move(on_stop));
  if (sampling || !target.child) return sampling;
  const bool gone =
      sampling.code() == ErrorCode::ProcessExited || sampling.code() == ErrorCode::NoSuchProcess;
  if (!gone) target.child->signal(SIGTERM);  // it cannot be sampled: do not leave it behind
  const int status = target.child->wait();
  if (!gone) return sampling;
  return Error{
      fmt::format("{} exited with status {} before it could be sampled", target.program, status),
      sampling.code()};
}

}  // namespace dapprof::app::cli
