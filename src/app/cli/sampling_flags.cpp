#include "app/cli/sampling_flags.hpp"

namespace dapprof::app::cli {

const CLI::Validator& positive_number() {
  static const CLI::Validator validator(
      [](std::string& value) -> std::string {
        try {
          std::size_t used = 0;
          const double v = std::stod(value, &used);
          if (used == value.size() && v > 0) return {};
        } catch (const std::exception&) {
        }
        return "must be a positive number, not '" + value + "'";
      },
      "POSITIVE");
  return validator;
}

void TargetFlags::require_one() const {
  if (pid->count() == 0 && command->count() == 0) {
    throw CLI::RequiredError("--pid PID or -- PROGRAM ARGS... (one of them)");
  }
}

TargetFlags add_target_flags(CLI::App& command, std::optional<pid_t>& pid,
                             std::vector<std::string>& program, const std::string& what) {
  TargetFlags flags;
  flags.pid = command.add_option_function<pid_t>(
      "-p,--pid", [&pid](const pid_t& p) { pid = p; },
      "PID of a running Python program to " + what);
  flags.pid->check(CLI::PositiveNumber);
  flags.command = command.add_option(
      "command", program,
      "Program to start and sample from its start, after '--' (e.g. -- python script.py args)");
  flags.pid->excludes(flags.command);
  return flags;
}

void add_sampling_flags(CLI::App& command, model::SamplingSettings& sampling, bool& native_all) {
  command.add_option("-r,--rate", sampling.rate_hz, "Samples per second")
      ->default_val(100)
      ->check(positive_number());
  command.add_flag("--nonblocking", sampling.nonblocking,
                   "Never pause the program nor check its stacks (default: consistent stacks, "
                   "paused only when a stack keeps moving)");
  command.add_flag("-i,--idle", sampling.idle, "Include idle threads");
  command.add_flag("-g,--gil", sampling.gil, "Only sample the thread holding the GIL");
  command.add_flag_callback(
      "--no-gc", [&sampling] { sampling.gc = false; },
      "No (garbage collection) frame on top of the stack of the thread running a collection");
  command.add_flag("-s,--subprocesses", sampling.subprocesses,
                   "Also sample child Python processes");
  auto* aware = command.add_flag_callback(
      "--async-aware",
      [&sampling] {
        if (sampling.async == model::AsyncMode::Off) sampling.async = model::AsyncMode::Running;
      },
      "Sample by asyncio task: a thread running a task shows the task's coroutines under the "
      "tasks awaiting it (Task-1 > main > handler-0 > ...), under one (event loop) frame");
  command
      .add_option_function<std::string>(
          "--async-mode",
          [&sampling](const std::string& mode) {
            sampling.async = mode == "all" ? model::AsyncMode::All : model::AsyncMode::Running;
          },
          "With --async-aware: 'running' (default) samples the task each thread runs; 'all' also "
          "every waiting task, each tick, ending where it awaits (wall time)")
      ->check(CLI::IsMember({"running", "all"}))
      ->needs(aware);
  command.add_flag("-n,--native", sampling.native,
                   "Include native (C/C++) frames, merged into the Python stacks (not with "
                   "--nonblocking)");
  command.add_flag("--native-all", native_all,
                   "With native frames, also keep the interpreter's own call machinery and "
                   "thread start-up frames (implies --native)");
}

std::optional<std::string> sampling_conflict(const model::SamplingSettings& sampling,
                                             bool native_all) {
  if ((sampling.native || native_all) && sampling.nonblocking) {
    return "--native needs the program paused while its stacks are read: drop --nonblocking to "
           "include native frames";
  }
  return std::nullopt;
}

}  // namespace dapprof::app::cli
