#include "app/cli/commands.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include "app/cli/format_names.hpp"
#include "app/cli/options.hpp"

namespace dapprof::app::cli {
namespace {

// stdout carries the dump, or the "sampling started" line that callers wait for: logs must not
// land there.
void log_to_stderr() {
  if (!spdlog::get("dapprof-sampler")) {
    spdlog::set_default_logger(spdlog::stderr_logger_mt("dapprof-sampler"));
  }
}

// CLI11's PositiveNumber prints the whole double range in its message; this says it plainly.
const CLI::Validator kPositive(
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

void add_dump(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<DumpOptions>();
  auto* dump = app.add_subcommand(
      "dump",
      "Print the Python stack of every thread of a running program once (like py-spy dump)");
  dump->add_option("-p,--pid", options->pid, "PID of the running Python program")
      ->required()
      ->check(CLI::PositiveNumber);
  dump->add_flag("-j,--json", options->json, "Print one JSON document instead of text");
  dump->add_flag("--nonblocking", options->nonblocking,
                 "Never pause the program nor check its stacks (may read torn stacks)");
  dump->add_flag("-n,--native", options->native,
                 "Include native (C/C++) frames, merged into the Python stacks (not with "
                 "--nonblocking)");
  dump->add_flag("--native-all", options->native_all,
                 "With native frames, also keep the interpreter's own call machinery and thread "
                 "start-up frames (implies --native)");
  dump->callback([options, &exit_code] {
    log_to_stderr();
    exit_code = run_dump(*options);
  });
}

void add_record(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<RecordOptions>();
  auto* record = app.add_subcommand(
      "record",
      "Sample a Python program and write a profile (like py-spy record): either --pid PID or "
      "-- PYTHON SCRIPT ARGS...");
  auto* pid = record->add_option_function<pid_t>(
      "-p,--pid", [options](const pid_t& p) { options->pid = p; },
      "PID of a running Python program to sample until Ctrl-C, --duration or its exit");
  pid->check(CLI::PositiveNumber);
  auto* command = record->add_option(
      "command", options->command,
      "Program to start and sample from its start, after '--' (e.g. -- python script.py args)");
  pid->excludes(command);
  record->add_option("-r,--rate", options->sampling.rate_hz, "Samples per second")
      ->default_val(100)
      ->check(kPositive);
  record->add_option("-d,--duration", options->duration, "Seconds to record (default: unlimited)")
      ->check(kPositive);
  record->add_option("-o,--output", options->output,
                     "Output file (default: <program or pid>-<time>.<extension>)");
  record->add_option("-f,--format", options->format, "Output format")
      ->default_val("flamegraph")
      ->check(CLI::IsMember(format_names()));
  record->add_flag("--nonblocking", options->sampling.nonblocking,
                   "Never pause the program nor check its stacks (default: consistent stacks, paused only when a stack keeps moving)");
  record->add_flag("-i,--idle", options->sampling.idle, "Include idle threads");
  record->add_flag("-g,--gil", options->sampling.gil, "Only sample the thread holding the GIL");
  record->add_flag("-t,--threads", options->threads, "Show thread ids in the output");
  record->add_flag("--hide-debugger", options->hide_debugger,
                   "Leave out the frames of debugpy and pydevd (when recording a program being "
                   "debugged); samples taken in the debugger itself count as one (debugger) frame");
  record->add_flag("-s,--subprocesses", options->sampling.subprocesses,
                   "Also sample child Python processes");
  record->add_flag("-n,--native", options->sampling.native,
                   "Include native (C/C++) frames, merged into the Python stacks (not with "
                   "--nonblocking)");
  record->add_flag("--native-all", options->native_all,
                   "With native frames, also keep the interpreter's own call machinery and "
                   "thread start-up frames (implies --native)");
  record->callback([options, pid, command, &exit_code] {
    if (pid->count() == 0 && command->count() == 0) {
      throw CLI::RequiredError("--pid PID or -- PROGRAM ARGS... (one of them)");
    }
    log_to_stderr();
    exit_code = run_record(*options);
  });
}

}  // namespace

void add_commands(CLI::App& app, int& exit_code) {
  add_dump(app, exit_code);
  add_record(app, exit_code);
}

}  // namespace dapprof::app::cli
