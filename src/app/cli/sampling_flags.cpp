#include "app/cli/sampling_flags.hpp"

#include <memory>

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

namespace {

// --mode and its older spellings --idle and --gil, settled into sampling.mode once the command's
// flags are parsed, whatever their order; a conflict is a usage error.
void add_mode_flags(CLI::App& command, model::SamplingSettings& sampling) {
  struct Flags {
    std::string mode;
    bool idle = false;
    bool gil = false;
  };
  auto flags = std::make_shared<Flags>();
  command
      .add_option("--mode", flags->mode,
                  "Which threads to sample, as CPython 3.15's profiler names its modes: 'wall' "
                  "every thread, idle ones too; 'cpu' threads the kernel shows on a CPU or "
                  "runnable; 'gil' the thread holding the GIL; 'exception' threads handling an "
                  "exception, under a frame naming its type. Default: threads the kernel shows "
                  "running, less those in a known waiting function (threading waits, selectors)")
      ->check(CLI::IsMember({"wall", "cpu", "gil", "exception"}));
  command.add_flag("-i,--idle", flags->idle, "Include idle threads (the same as --mode wall)");
  command.add_flag("-g,--gil", flags->gil,
                   "Only sample the thread holding the GIL (the same as --mode gil)");
  command.parse_complete_callback([flags, &sampling] {
    const auto named =
        model::sampling_mode_named(flags->mode).value_or(model::SamplingMode::Active);
    const auto mode = model::sampling_mode_with_aliases(named, flags->idle, flags->gil);
    if (!mode) {
      const char* alias = flags->idle && flags->gil ? "--idle and --gil"
                          : flags->idle             ? "--idle"
                                                    : "--gil";
      throw CLI::ValidationError(
          "--mode", "--mode " + flags->mode + " conflicts with " + alias +
                        " (--idle is --mode wall, --gil is --mode gil): give only --mode");
    }
    sampling.mode = *mode;
  });
}

}  // namespace

void add_sampling_flags(CLI::App& command, model::SamplingSettings& sampling, bool& native_all) {
  command.add_option("-r,--rate", sampling.rate_hz, "Samples per second")
      ->default_val(100)
      ->check(positive_number());
  command.add_flag("--nonblocking", sampling.nonblocking,
                   "Never pause the program nor check its stacks (default: consistent stacks, "
                   "paused only when a stack keeps moving)");
  add_mode_flags(command, sampling);
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
