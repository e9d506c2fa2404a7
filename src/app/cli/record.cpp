// `dapprof record`: sample a program until it exits, a signal or --duration, then write one
// profile. Compatible with py-spy's options and with Mercurial's py-spy profiling backend (which
// waits for one line on stdout, later sends SIGINT, and expects the output and exit status 0).
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
#include "app/cli/proc_info.hpp"
#include "app/cli/progress.hpp"
#include "app/cli/signals.hpp"
#include "formats/debugger_view.hpp"
#include "formats/summary.hpp"
#include "formats/writers.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::app::cli {
namespace {

using Clock = std::chrono::steady_clock;
using sampler::StopReason;
using namespace std::chrono_literals;

// How long a program started by record may take to initialise its interpreter.
constexpr auto kInterpreterStartup = 10s;
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
  const bool native = o.sampling.native || o.native_all;
  if (native && o.sampling.nonblocking) {
    fmt::print(stderr,
               "dapprof: error: --native needs the program paused while its stacks are read: "
               "drop --nonblocking to include native frames\n");
    return 2;
  }
  // Before any thread exists, so that every thread inherits the mask.
  const StopSignals signals;
  std::signal(SIGPIPE, SIG_IGN);  // a closed stdout must not kill us before the output is written

  const std::string path = o.output.empty() ? default_output(o, *format) : o.output;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    fmt::print(stderr, "dapprof: error: cannot write '{}': {}\n", path, std::strerror(errno));
    return 1;
  }

  std::optional<Child> child;
  pid_t pid = 0;
  std::string name;
  if (o.pid) {
    pid = *o.pid;
    const auto cmd = joined(command_line(pid));
    name = cmd.empty() ? fmt::format("pid {}", pid) : cmd;
  } else {
    auto spawned = Child::spawn(o.command);
    if (!spawned) {
      fmt::print(stderr, "dapprof: error: {}\n", spawned.message());
      return 1;
    }
    child.emplace(std::move(*spawned));
    pid = child->pid();
    name = joined(o.command);
  }

  sampler::SamplerOptions so{.sampling = o.sampling, .native_all = o.native_all};
  so.sampling.native = native;
  if (child) so.wait_for_interpreter = kInterpreterStartup;

  Recording rec;
  rec.profile.name = name;
  rec.profile.interval_us = static_cast<std::int64_t>(1e6 / o.sampling.rate_hz);
  rec.start = Clock::now();
  auto sampling = sampler::Sampler::start(
      pid, so,
      [&rec](model::Snapshot&& snap) {
        std::lock_guard lock(rec.mutex);
        rec.profile.add_snapshot(snap, rec.start);
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
    if (child) {
      const bool gone = sampling.code() == ErrorCode::ProcessExited ||
                        sampling.code() == ErrorCode::NoSuchProcess;
      if (!gone) child->signal(SIGTERM);  // it cannot be sampled: do not leave it behind
      const int status = child->wait();
      if (gone) {
        fmt::print(stderr, "dapprof: {} exited with status {} before it could be sampled\n",
                   o.command.front(), status);
      }
    }
    return 1;
  }
  if (!(*sampling)->warning().empty()) {
    fmt::print(stderr, "dapprof: warning: {}\n", (*sampling)->warning());
  }

  fmt::print("dapprof> Sampling process {} at {} samples per second{}. Press Control-C to stop.\n",
             pid, o.sampling.rate_hz, o.duration > 0 ? fmt::format(" for {}s", o.duration) : "");
  std::fflush(stdout);

  const auto deadline = o.duration > 0 ? rec.start + std::chrono::duration_cast<Clock::duration>(
                                                         std::chrono::duration<double>(o.duration))
                                       : Clock::time_point::max();
  std::optional<int> got_signal;
  std::string why;
  {
    Progress progress;
    while (true) {
      const auto now = Clock::now();
      if (rec.stopped.load()) break;
      if (now >= deadline) {
        why = fmt::format("{}s elapsed", o.duration);
        break;
      }
      const auto stats = (*sampling)->stats();
      progress.update(stats.samples, stats.errors, now - rec.start);
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
  formats::write(*format, rec.profile, out,
                 {.threads = o.threads, .hide_debugger = o.hide_debugger});
  out.close();
  if (!out) {
    fmt::print(stderr, "dapprof: error: writing '{}' failed: {}\n", path, std::strerror(errno));
    code = 1;
  }
  fmt::print(stderr, "dapprof> Stopped sampling: {}.\n", why);
  fmt::print(stderr, "dapprof> Wrote {} data to '{}'. Samples: {} Errors: {}\n", o.format, path,
             stats.samples, stats.errors);
  const auto summary = formats::summarize(
      o.hide_debugger ? formats::without_debugger(rec.profile) : rec.profile);
  fmt::print(stderr, "{}", formats::format_summary(summary, 5));
  std::fflush(stderr);

  if (child) {
    const int child_code = finish_child(*child, signals, got_signal);
    if (code == 0) code = child_code;
  }
  return code;
}

}  // namespace dapprof::app::cli
