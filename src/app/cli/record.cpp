// `dapprof record`: sample a program until it exits, a signal or --duration, then write one
// profile. Compatible with py-spy's options and with Mercurial's py-spy profiling backend (which
// waits for one line on stdout, later sends SIGINT, and expects the output and exit status 0).
#include <fcntl.h>
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "app/cli/child.hpp"
#include "app/cli/format_names.hpp"
#include "app/cli/options.hpp"
#include "app/cli/output_file.hpp"
#include "app/cli/progress.hpp"
#include "app/cli/sampling_flags.hpp"
#include "app/cli/sampling_target.hpp"
#include "app/cli/short_filenames.hpp"
#include "app/cli/signals.hpp"
#include "common/unique_fd.hpp"
#include "formats/debugger_view.hpp"
#include "formats/file_names.hpp"
#include "formats/summary.hpp"
#include "formats/writers.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::app::cli {
namespace {

using Clock = std::chrono::steady_clock;
using sampler::StopReason;
using namespace std::chrono_literals;

// After Ctrl-C the program we started usually got the signal from the terminal too; give it this
// long to exit by itself before passing the signal on.
constexpr auto kChildGrace = 1s;
constexpr auto kTick = 100ms;

// What the sampling thread hands over to the main thread.
struct Recording {
  std::mutex mutex;
  formats::Profile profile;
  Clock::time_point start;
  std::atomic<bool> stopped{false};
  StopReason reason = StopReason::Requested;  // valid once stopped
  std::string message;
};

std::string program_stem(const std::vector<std::string>& command) {
  namespace fs = std::filesystem;
  // "python script.py" is better named after the script.
  const auto base = fs::path(command.front()).filename().string();
  if (base.starts_with("python") && command.size() > 1 && !command[1].starts_with("-")) {
    return fs::path(command[1]).stem().string();
  }
  return base;
}

std::string default_output(const RecordOptions& o, model::ProfileFormat format) {
  const std::string stem = o.pid ? std::to_string(*o.pid) : program_stem(o.command);
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  return fmt::format("{}-{:%Y-%m-%dT%H:%M:%S}.{}", stem, local, model::file_extension(format));
}

// record --capture without a file: beside the profile, named like it.
std::string capture_file_for(const std::string& profile) {
  auto log = std::filesystem::path(profile).replace_extension(".log");
  if (log == std::filesystem::path(profile)) log += ".out";
  return log.string();
}

std::string signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : std::to_string(sig);
}

// Waits for the program record started; signals that reach dapprof meanwhile are passed on.
// Only called once the sampler has stopped: while it traces the child, a wait here could take
// the ptrace-stop notifications the sampler waits for.
int finish_child(Child& child, const StopSignals& signals, std::optional<int> first_signal) {
  if (first_signal) {
    const auto until = Clock::now() + kChildGrace;
    while (!child.poll() && Clock::now() < until) signals.wait(50ms);
    child.signal(*first_signal);
  } else if (!child.poll()) {
    fmt::print(stderr, "dapprof> Recording done; waiting for process {} to exit.\n", child.pid());
  }
  while (!child.poll()) {
    if (auto sig = signals.wait(kTick)) child.signal(*sig);
  }
  return child.wait();
}

}  // namespace

int run_record(const RecordOptions& o) {
  const auto format = parse_format(o.format);
  if (!format) {
    fmt::print(stderr, "dapprof: error: unknown format '{}'\n", o.format);
    return 2;
  }
  if (const auto conflict = sampling_conflict(o.sampling, o.native_all)) {
    fmt::print(stderr, "dapprof: error: {}\n", *conflict);
    return 2;
  }
  // Before any thread exists, so that every thread inherits the mask.
  const StopSignals signals;
  std::signal(SIGPIPE, SIG_IGN);  // a closed stdout must not kill us before the output is written

  auto output = OutputFile::claim(o.output.empty() ? default_output(o, *format) : o.output);
  if (!output) {
    fmt::print(stderr, "dapprof: error: {}\n", output.message());
    return 1;
  }
  const std::string& path = output->path();

  UniqueFd capture;
  std::string capture_path;
  if (o.capture) {
    if (o.pid) {
      fmt::print(stderr,
                 "dapprof: error: --capture takes the output of a program dapprof starts "
                 "(-- PROGRAM ARGS), not of a running --pid\n");
      return 2;
    }
    capture_path = !o.capture->empty() ? *o.capture : capture_file_for(path);
    capture =
        UniqueFd(::open(capture_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!capture) {
      fmt::print(stderr, "dapprof: error: cannot write '{}': {}\n", capture_path,
                 std::strerror(errno));
      return 1;
    }
  }

  auto opened =
      open_target(o.pid, o.command, capture ? ChildIo::Capture : ChildIo::Inherit, capture.get());
  capture.reset();  // the program has its own copy
  if (!opened) {
    fmt::print(stderr, "dapprof: error: {}\n", opened.message());
    return 1;
  }
  SamplingTarget& target = *opened;
  const pid_t pid = target.pid;

  ShortFilenames short_filenames;
  Recording rec;
  rec.profile.name = target.name;
  rec.profile.show_processes = o.sampling.subprocesses;
  rec.profile.interval_us = static_cast<std::int64_t>(1e6 / o.sampling.rate_hz);
  rec.start = Clock::now();
  rec.profile.start_unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  sampler::SamplerOptions options = sampler_options(target, o.sampling, o.native_all, o.lines);
  options.opcodes = o.opcodes;
  auto sampling = start_sampler(
      target, options,
      [&rec, &short_filenames, learn = !o.full_filenames](model::Snapshot&& snap) {
        std::lock_guard lock(rec.mutex);
        const std::size_t known = rec.profile.frames().size();
        rec.profile.add_snapshot(snap, rec.start);
        if (!learn || snap.process_exited) return;
        short_filenames.open_root(snap.pid);
        short_filenames.learn(rec.profile.frames(), known);
      },
      [&rec](StopReason reason, const std::string& message) {
        {
          std::lock_guard lock(rec.mutex);
          rec.reason = reason;
          rec.message = message;
        }
        rec.stopped.store(true);
      });
  if (!sampling) {
    fmt::print(stderr, "dapprof: error: {}\n", sampling.message());
    return 1;
  }
  if (!(*sampling)->warning().empty()) {
    fmt::print(stderr, "dapprof: warning: {}\n", (*sampling)->warning());
  }

  // The mode is named only when one was asked: the default line stays as py-spy's.
  const std::string mode =
      o.sampling.mode == model::SamplingMode::Active
          ? ""
          : fmt::format(", mode {}", model::sampling_mode_name(o.sampling.mode));
  fmt::print(
      "dapprof> Sampling process {} at {} samples per second{}{}. Press Control-C to stop.\n", pid,
      o.sampling.rate_hz, mode, o.duration > 0 ? fmt::format(" for {}s", o.duration) : "");
  std::fflush(stdout);

  const auto deadline = o.duration > 0 ? rec.start + std::chrono::duration_cast<Clock::duration>(
                                                         std::chrono::duration<double>(o.duration))
                                       : Clock::time_point::max();
  std::optional<int> got_signal;
  std::string why;
  {
    std::optional<Progress> progress;
    if (!o.hide_progress) progress.emplace();
    while (true) {
      const auto now = Clock::now();
      if (rec.stopped.load()) break;
      if (now >= deadline) {
        why = fmt::format("{}s elapsed", o.duration);
        break;
      }
      const auto stats = (*sampling)->stats();
      if (progress) progress->update(stats.samples, stats.errors, now - rec.start);
      const auto wait = std::min<Clock::duration>(kTick, deadline - now);
      if ((got_signal = signals.wait(std::chrono::ceil<std::chrono::milliseconds>(wait)))) {
        why = fmt::format("interrupted ({})", signal_name(*got_signal));
        break;
      }
    }
  }
  (*sampling)->stop();
  const auto stats = (*sampling)->stats();
  const auto elapsed = Clock::now() - rec.start;

  int code = 0;
  std::lock_guard lock(rec.mutex);  // the sampling thread has finished; this is for clarity
  if (why.empty()) {
    if (rec.stopped.load() && rec.reason == StopReason::Error) {
      fmt::print(stderr, "dapprof: error: {}\n", rec.message);
      code = 1;
      why = "sampling failed";
    } else {
      why = fmt::format("process {} exited", pid);
    }
  }
  rec.profile.duration_us = std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count();
  if (!o.full_filenames && formats::shows_short_files(*format))
    rec.profile = formats::with_files(rec.profile, std::ref(short_filenames));
  output->keep();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  formats::write(
      *format, rec.profile, out,
      {.threads = o.threads, .hide_debugger = o.hide_debugger, .instruction_frames = o.opcodes});
  out.close();
  if (!out) {
    fmt::print(stderr, "dapprof: error: writing '{}' failed: {}\n", path, std::strerror(errno));
    code = 1;
  }
  fmt::print(stderr, "dapprof> Stopped sampling: {}.\n", why);
  fmt::print(stderr, "dapprof> Wrote {} data to '{}'. Samples: {} Errors: {}\n", o.format, path,
             stats.samples, stats.errors);
  const auto summary =
      formats::summarize(o.hide_debugger ? formats::without_debugger(rec.profile) : rec.profile);
  fmt::print(stderr, "{}", formats::format_summary(summary, 5));
  if (o.capture) fmt::print(stderr, "dapprof> The program's output is in '{}'.\n", capture_path);
  std::fflush(stderr);

  if (target.child) {
    const int child_code = finish_child(*target.child, signals, got_signal);
    if (code == 0) code = child_code;
  }
  return code;
}

}  // namespace dapprof::app::cli
