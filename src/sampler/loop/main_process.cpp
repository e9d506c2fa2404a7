#include "sampler/loop/main_process.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "sampler/loop/process_info.hpp"
#include "sampler/process/tasks.hpp"

namespace dapprof::sampler::loop {
namespace {

// How often a sampled program is looked at for an exec, at most: one pread, about 1.5 µs, would
// be 3% of a shallow stack's sample at 1 kHz and 15% flat out. Until it is seen, a sample that
// fails looks at once (a new interpreter elsewhere, or not set up yet); one that succeeds read
// the same binary exec'd again, its runtime where the old one was, and what it read holds: the
// code cache knows a code object by its names and tables too, not only by its address.
constexpr auto kCheckPeriod = std::chrono::milliseconds(10);
// How often a replaced program is tried while it starts: an attempt reads its maps and binaries.
constexpr auto kAttemptPeriod = std::chrono::milliseconds(10);

}  // namespace

MainProcess::MainProcess(Watched attached, AttachOptions options, std::chrono::milliseconds window)
    : pid_(attached.process->pid()),
      options_(options),
      window_(window),
      process_(std::move(attached.process)),
      exec_(std::move(attached.exec)),
      info_(read_process_info(pid_)) {
  // The sampling thread must not block in an attempt: the window is kept across attempts.
  options_.wait_for_interpreter = std::chrono::milliseconds(0);
}

bool MainProcess::replaced_since(Clock::time_point now) {
  if (state_ != State::Sampling || now < next_check_) return false;
  next_check_ = now + kCheckPeriod;
  if (!exec_.replaced()) return false;
  replaced(now);
  return true;
}

void MainProcess::replaced(Clock::time_point now) {
  spdlog::debug("process {} exec'd: waiting for its new program", pid_);
  state_ = State::Replaced;
  process_.reset();
  replaced_at_ = now;
  next_attempt_ = now;
}

Status MainProcess::attach_again(Clock::time_point now) {
  if (state_ != State::Replaced || now < next_attempt_) return Ok{};
  next_attempt_ = now + kAttemptPeriod;
  auto attached = attach_watched(pid_, options_);
  if (attached) {
    spdlog::debug("process {} now runs Python {}", pid_, attached->process->python_version());
    if (!attached->process->warning().empty())
      spdlog::warn("process {}: {}", pid_, attached->process->warning());
    process_ = std::move(attached->process);
    exec_ = std::move(attached->exec);
    info_ = read_process_info(pid_);
    state_ = State::Sampling;
    next_check_ = now + kCheckPeriod;
    return Ok{};
  }
  const auto code = attached.code();
  if (code == ErrorCode::NoSuchProcess || code == ErrorCode::ProcessExited ||
      process::thread_gone(pid_, pid_))
    return Error{fmt::format("process {} exited", pid_), ErrorCode::ProcessExited};
  const bool starting = code == ErrorCode::NotPython || code == ErrorCode::Generic;
  if (starting && now - replaced_at_ < window_) return Ok{};
  const auto became = read_process_info(pid_);
  return Error{fmt::format("process {} replaced its program (exec) with `{}`, which cannot be "
                           "sampled: {}",
                           pid_, became->command_line, attached.message()),
               code};
}

}  // namespace dapprof::sampler::loop
