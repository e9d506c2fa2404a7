// Sampling cost: samples/s, CPU per sample, process_vm_readv calls per sample, for Python
// targets 10, 100 and 1000 frames deep, blocking and nonblocking, at full speed and 1000 Hz;
// and the length of the ptrace pause window.
//
//   sampler_bench [--seconds S] [--python PATH]... [--all]
//
// Target (from the issue): 1000 samples/s of a 100-frame stack using under 10% of one core.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../common/harness.hpp"
#include "sampler/process/memory.hpp"
#include "sampler/process/pause.hpp"
#include "sampler/sampler.hpp"

namespace {

using namespace dapprof::sampler;
using Clock = std::chrono::steady_clock;
namespace bench = dapprof::bench;

using bench::Child;
using bench::thread_cpu_seconds;

// sys.executable, not the path we ran: for an interpreter in a root of its own that path is a
// wrapper for the host, and this runs inside the root.
constexpr const char* kLauncher =
    "import subprocess, sys\n"
    "p = subprocess.Popen([sys.executable] + sys.argv[1:])\n"
    "print(p.pid, flush=True)\n"
    "p.wait()\n";

struct Figures {
  double samples_per_s = 0, cpu_us_per_sample = 0, core_percent = 0, reads_per_sample = 0;
  double frames = 0;
  SamplerStats stats;
};

std::optional<Figures> run(pid_t pid, double rate, bool nonblocking, double seconds) {
  std::mutex m;
  std::condition_variable cv;
  bool stopped = false;
  double cpu = 0;
  std::uint64_t frames = 0, snaps = 0;
  const auto reads_before = process::ProcessMemory::total_syscalls();
  SamplerOptions opts{.sampling = {.rate_hz = rate, .nonblocking = nonblocking}};
  const auto begin = Clock::now();
  auto sampler = Sampler::start(
      pid, opts,
      [&](dapprof::model::Snapshot&& s) {
        ++snaps;
        for (const auto& t : s.threads) frames += t.frames.size();
      },
      [&](StopReason, const std::string&) {
        std::lock_guard lock(m);
        cpu = thread_cpu_seconds();  // the sampling thread's whole life
        stopped = true;
        cv.notify_all();
      });
  if (!sampler) {
    fmt::print("  cannot sample: {}\n", sampler.message());
    return std::nullopt;
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  (*sampler)->stop();
  const double wall = std::chrono::duration<double>(Clock::now() - begin).count();
  std::unique_lock lock(m);
  cv.wait(lock, [&] { return stopped; });
  Figures f;
  f.stats = (*sampler)->stats();
  const double reads = static_cast<double>(f.stats.samples + f.stats.errors);
  f.samples_per_s = static_cast<double>(f.stats.samples) / wall;
  f.cpu_us_per_sample = reads > 0 ? cpu * 1e6 / reads : 0;
  f.core_percent = 100 * cpu / wall;
  f.reads_per_sample =
      reads > 0
          ? static_cast<double>(process::ProcessMemory::total_syscalls() - reads_before) / reads
          : 0;
  f.frames = snaps ? static_cast<double>(frames) / static_cast<double>(snaps) : 0;
  return f;
}

void pause_window(pid_t pid) {
  constexpr int kRounds = 500;
  std::vector<double> us;
  std::size_t threads = 0;
  const double cpu0 = thread_cpu_seconds();
  for (int i = 0; i < kRounds; ++i) {
    const auto t0 = Clock::now();
    {
      auto p = process::PausedProcess::pause(pid);
      if (!p) {
        fmt::print("  pause failed: {}\n", p.message());
        return;
      }
      threads = p->threads().size();
    }
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  const double cpu_us = (thread_cpu_seconds() - cpu0) * 1e6 / kRounds;
  std::sort(us.begin(), us.end());
  fmt::print(
      "  pause+resume, no read ({} thread{}): window median {:.0f} µs, p90 {:.0f} µs, max {:.0f} "
      "µs; {:.1f} µs CPU each\n",
      threads, threads == 1 ? "" : "s", us[us.size() / 2], us[us.size() * 9 / 10], us.back(),
      cpu_us);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dapprof sampler benchmark"};
  double seconds = 2;
  std::vector<std::string> pythons;
  std::vector<int> depths{10, 100, 1000};
  bool all = false, pause_only = false;
  app.add_option("--seconds", seconds, "sampling time per configuration");
  app.add_option("--python", pythons,
                 "interpreter(s) to use (default: pyenv 3.12, Debian's 3.11, and "
                 "3.14 and 3.15 of the Debian unstable root)");
  app.add_flag("--all", all, "every interpreter tests/support/pythons.py finds");
  app.add_option("--depth", depths, "stack depths to measure");
  app.add_flag("--pause-only", pause_only, "measure only the pause window");
  CLI11_PARSE(app, argc, argv);

  std::vector<bench::Interpreter> interps;
  for (const auto& p : pythons) interps.push_back({p, p, ""});
  if (interps.empty()) interps = bench::interpreters(DAPPROF_SOURCE_DIR, all);

  fmt::print("Target: 1000 samples/s of a 100-frame stack under 10% of one core.\n");
  fmt::print("CPU is the sampling thread's (user+system); reads = process_vm_readv calls.\n\n");
  for (const auto& interp : interps) {
    for (int depth : depths) {
      // Like a debuggee launched by debugpy, the target is not our child: an intermediate
      // process starts it (dapprof pauses its own children differently, see pause.cpp).
      Child launcher({interp.path, "-c", kLauncher,
                      DAPPROF_SOURCE_DIR "/tests/sampler/process/targets/deep.py",
                      std::to_string(depth)});
      const auto pid_line = launcher.read_line();
      const pid_t target = pid_line ? static_cast<pid_t>(std::stol(*pid_line)) : -1;
      struct Killer {
        pid_t pid;
        ~Killer() {
          if (pid > 0) kill(pid, SIGKILL);
        }
      } killer{target};
      if (target <= 0 || launcher.read_line() != "ready") {
        fmt::print("{}: target did not start\n", interp.label);
        continue;
      }
      fmt::print("{} ({}), stack depth {}:\n", interp.label, interp.path, depth);
      pause_window(target);
      if (pause_only) continue;
      for (bool nonblocking : {false, true}) {
        for (double rate : {1e6, 1000.0}) {
          const auto f = run(target, rate, nonblocking, seconds);
          if (!f) continue;
          const bool target_row = depth == 100 && rate == 1000.0;
          fmt::print(
              "  {:<11} {:>9}: {:8.0f} samples/s  {:7.1f} µs CPU/sample  {:5.1f}% of a core  "
              "{:5.1f} reads/sample  {:6.1f} frames  errors {} late {}{}\n",
              nonblocking ? "nonblocking" : "blocking", rate >= 1e6 ? "full speed" : "1000 Hz",
              f->samples_per_s, f->cpu_us_per_sample, f->core_percent, f->reads_per_sample,
              f->frames, f->stats.errors, f->stats.late,
              target_row
                  ? fmt::format("   [target: >= 1000 samples/s under 10%: {}]",
                                f->samples_per_s >= 990 && f->core_percent < 10 ? "MET" : "MISSED")
                  : "");
        }
      }
    }
  }
  return 0;
}
