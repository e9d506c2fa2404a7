#include "app/cli/commands.hpp"

#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include "app/cli/format_names.hpp"
#include "app/cli/options.hpp"
#include "app/cli/ps.hpp"
#include "app/cli/sampling_flags.hpp"

namespace dapprof::app::cli {
namespace {

// stdout carries the dump, or the "sampling started" line that callers wait for: logs must not
// land there.
void log_to_stderr() {
  if (!spdlog::get("dapprof-sampler")) {
    spdlog::set_default_logger(spdlog::stderr_logger_mt("dapprof-sampler"));
    // SPDLOG_LEVEL=debug says why samples failed, which the summary only counts.
    spdlog::cfg::load_env_levels();
  }
}

void add_dump(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<DumpOptions>();
  auto* dump = app.add_subcommand(
      "dump",
      "Print the Python stack of every thread of a running program once (like py-spy dump)");
  dump->add_option("-p,--pid", options->pid, "PID of the running Python program")
      ->required()
      ->check(CLI::PositiveNumber);
  dump->add_flag("-j,--json", options->json, "Print one JSON document instead of text");
  dump->add_flag("-l,--locals", options->locals,
                 "Show each frame's arguments and local variables (numbers, short strings, "
                 "lengths of lists, tuples and dicts; other objects by type and address)");
  dump->add_flag("-a,--async", options->async_tasks,
                 "Print the asyncio task tree instead (CPython 3.8+), as `python -m asyncio "
                 "pstree` does; with --json, every task's id, name, state, awaiters and frames");
  dump->add_flag("--nonblocking", options->nonblocking,
                 "Never pause the program nor check its stacks (may read torn stacks)");
  dump->add_flag("-n,--native", options->native,
                 "Include native (C/C++) frames, merged into the Python stacks (not with "
                 "--nonblocking)");
  dump->add_flag_callback(
      "--no-gc", [options] { options->gc = false; },
      "No (garbage collection) frame on top of the stack of the thread running a collection");
  dump->add_flag("--opcodes", options->opcodes,
                 "Show each Python frame's bytecode instruction (offset, opcode) and, from "
                 "Python 3.11, its source columns");
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
  const auto target = add_target_flags(*record, options->pid, options->command,
                                       "sample until Ctrl-C, --duration or its exit");
  add_sampling_flags(*record, options->sampling, options->native_all);
  record->add_option("-d,--duration", options->duration, "Seconds to record (default: unlimited)")
      ->check(positive_number());
  record->add_option("-o,--output", options->output,
                     "Output file (default: <program or pid>-<time>.<extension>)");
  record->add_option("-f,--format", options->format, "Output format")
      ->default_val("flamegraph")
      ->check(CLI::IsMember(format_names()));
  record->add_flag("-t,--threads", options->threads, "Show thread ids in the output");
  auto* function = record->add_flag_callback(
      "-F,--function", [options] { options->lines = sampler::LineNumbers::FunctionStart; },
      "Aggregate samples by function (each frame at the line its function starts) instead of by "
      "line");
  record
      ->add_flag_callback(
          "--nolineno", [options] { options->lines = sampler::LineNumbers::None; },
          "Do not show line numbers")
      ->excludes(function);
  record->add_flag("--opcodes", options->opcodes,
                   "Sample each frame's bytecode instruction (offset, opcode, specialised form) "
                   "and, from Python 3.11, its source columns: speedscope, gecko and pprof show "
                   "them");
  record->add_flag("--full-filenames", options->full_filenames,
                   "Show full file paths instead of paths from the top-level package (formats "
                   "people read; cpuprofile and pprof always keep full paths)");
  record->add_flag("--hideprogress", options->hide_progress, "Hide the progress line");
  // A flag with an optional value (--capture or --capture=FILE), so that `--capture -- PROGRAM`
  // cannot take "--" or the program for the file.
  auto* capture = record->add_flag("--capture", options->capture_arg,
                                   "Write the output (stdout and stderr) of the program dapprof "
                                   "starts to a file instead of the terminal: --capture=FILE, or "
                                   "bare beside the profile, named like it with .log");
  record->add_flag("--hide-debugger", options->hide_debugger,
                   "Leave out the frames of debugpy and pydevd (when recording a program being "
                   "debugged); samples taken in the debugger itself count as one (debugger) frame");
  record->callback([options, target, capture, &exit_code] {
    target.require_one();
    // CLI11 gives a bare flag the value "true" (a file of that name is --capture=./true).
    if (capture->count() > 0)
      options->capture = options->capture_arg == "true" ? "" : options->capture_arg;
    log_to_stderr();
    exit_code = run_record(*options);
  });
}

void add_top(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<TopOptions>();
  auto* top = app.add_subcommand(
      "top",
      "Show a live table of the functions a Python program spends its time in, refreshed every "
      "second (like py-spy top): either --pid PID or -- PYTHON SCRIPT ARGS...");
  top->footer(
      "Columns: %Own and %Total are the shares of the thread samples of the last second in which "
      "the function was running (innermost frame) or on the stack; OwnTime and TotalTime the "
      "seconds since the start, summed over threads. The header shows the samples and failed "
      "reads, the process's threads, the share of samples in which a sampled thread held the "
      "GIL and the share of thread samples that were not idle (below 100% only in a mode that "
      "keeps idle threads: --mode wall, gil or exception).\n"
      "Keys: 1-4 sort by %Own, %Total, OwnTime, TotalTime; L by line or by function; space or p "
      "pauses the display (sampling goes on); q or Ctrl-C quits. A program that top starts has "
      "its input and output on /dev/null while top owns the terminal, and is stopped (SIGTERM) "
      "when top quits.\n"
      "When stdout or stdin is not a terminal, top samples until the program exits or Ctrl-C "
      "(SIGINT or SIGTERM), then prints the table once, by own time since the start.");
  const auto target =
      add_target_flags(*top, options->pid, options->command, "watch until q, Ctrl-C or its exit");
  add_sampling_flags(*top, options->sampling, options->native_all);
  top->add_flag("--full-filenames", options->full_filenames,
                "Show full file paths instead of paths from the top-level package");
  top->callback([options, target, &exit_code] {
    target.require_one();
    log_to_stderr();
    exit_code = run_top(*options);
  });
}

void add_ps(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<PsOptions>();
  auto* ps = app.add_subcommand(
      "ps",
      "List the running Python processes (pid, user, Python version, command line), this user's "
      "first; ones this user cannot read (another user's, or non-dumpable) are marked");
  ps->add_flag("-j,--json", options->json, "Print one JSON document instead of a table");
  ps->callback([options, &exit_code] {
    log_to_stderr();
    exit_code = run_ps(*options);
  });
}

void add_convert(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ConvertOptions>();
  auto* convert = app.add_subcommand(
      "convert",
      "Read a profile file (speedscope, cpuprofile, or collapsed stacks as py-spy, flamegraph.pl "
      "and dapprof write them; the format is told by the content) and write it in another format, "
      "or as the profilingData events a live run sends (stream)");
  convert->add_option("FILE", options->input, "The profile to read")->required();
  auto names = format_names();
  names.insert(names.begin(), "stream");
  convert
      ->add_option("-f,--format", options->format,
                   "Output format: a format of record, or stream (DAP events as JSON lines)")
      ->default_val("stream")
      ->check(CLI::IsMember(names));
  convert->add_option("-o,--output", options->output, "Output file (default: stdout)");
  convert->add_flag("--frames", options->frames,
                    "stream: each sample as its frame IDs instead of runs of stack IDs");
  convert->add_flag("-t,--threads", options->threads, "Show thread ids in the output");
  convert->add_flag("--hide-debugger", options->hide_debugger,
                    "Leave out the frames of debugpy and pydevd");
  convert->callback([options, &exit_code] {
    log_to_stderr();
    exit_code = run_convert(*options);
  });
}

}  // namespace

void add_commands(CLI::App& app, int& exit_code) {
  add_dump(app, exit_code);
  add_record(app, exit_code);
  add_top(app, exit_code);
  add_ps(app, exit_code);
  add_convert(app, exit_code);
}

}  // namespace dapprof::app::cli
