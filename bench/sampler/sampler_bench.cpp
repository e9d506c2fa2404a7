// Sampling cost, side by side: for Python targets 3, 100 and 1000 frames deep, dapprof's
// sampler (consistent, the default, and nonblocking) at 100 kHz, 10 kHz and 1 kHz asked, a loop
// making only the reads one sample needs, and a peer profiler (austin) when one is given: rate
// achieved, CPU per sample, share of a core, reads per sample, how often a consistent read had to
// be retried or paused, and how much each slows the program at 1 kHz.
//
//   sampler_bench [--seconds S] [--python PATH]... [--all] [--depth N]... [--peer austin=PATH]
//
// Every figure of a target comes from the same run, interleaved, and the ratios are against
// that run's baseline (the program alone, the reads-only loop, the peer).
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../common/harness.hpp"
#include "sampler/process/memory.hpp"
#include "sampler/sampler.hpp"
#include "sampler_peer.hpp"

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
    "p = subprocess.Popen([sys.executable] + sys.argv[1:], stdout=sys.stdout)\n"
    "print(p.pid, flush=True)\n"
    "p.wait()\n";

constexpr double kRates[] = {100'000, 10'000, 1'000};

// The target's progress: iterations of its loop per second, from its reports.
class Progress {
 public:
  explicit Progress(Child& target) : target_(target) {}
  // Marks now; returns the rate since the previous mark.
  std::optional<double> mark() {
    const auto line = target_.latest_line();
    if (!line) return std::nullopt;
    double iterations = 0, seconds = 0;
    if (std::sscanf(line->c_str(), "%lf %lf", &iterations, &seconds) != 2) return std::nullopt;
    std::optional<double> rate;
    if (last_ && seconds > last_->second) {
      rate = (iterations - last_->first) / (seconds - last_->second);
    }
    last_ = {iterations, seconds};
    return rate;
  }

 private:
  Child& target_;
  std::optional<std::pair<double, double>> last_;
};

// The program's work rate over `seconds` while `during` samples it (nothing: the baseline).
template <typename F>
std::optional<double> work_rate(Progress& progress, double seconds, F&& during) {
  progress.mark();
  return during([&] {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    return progress.mark();
  });
}

std::optional<bench::Figures> run_dapprof(pid_t pid, double rate, bool nonblocking, double seconds,
                                          Progress* progress = nullptr,
                                          std::optional<double>* work = nullptr) {
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
  if (progress && work) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    *work = work_rate(*progress, seconds, [](auto wait) { return wait(); });
  } else {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
  (*sampler)->stop();
  const double wall = std::chrono::duration<double>(Clock::now() - begin).count();
  std::unique_lock lock(m);
  cv.wait(lock, [&] { return stopped; });
  const auto stats = (*sampler)->stats();
  bench::Figures f;
  const double reads = static_cast<double>(stats.samples + stats.errors);
  f.asked = rate;
  f.samples_per_s = static_cast<double>(stats.samples) / wall;
  f.cpu_us_per_sample = reads > 0 ? cpu * 1e6 / reads : 0;
  f.core_percent = 100 * cpu / wall;
  f.reads_per_sample =
      reads > 0
          ? static_cast<double>(process::ProcessMemory::total_syscalls() - reads_before) / reads
          : 0;
  f.frames = snaps ? static_cast<double>(frames) / static_cast<double>(snaps) : 0;
  f.errors = stats.errors;
  const auto& c = stats.reads;
  const double consistent = static_cast<double>(c.first_reads + c.paused);
  if (!nonblocking && consistent > 0) {
    f.retried = 100.0 * static_cast<double>(c.retries) / consistent;
    f.paused = 100.0 * static_cast<double>(c.paused) / consistent;
  }
  return f;
}

// The system calls one consistent sample makes, in a loop and nothing else: the fetch of its
// plan, the re-read of the thread's top frame, the thread's kernel state. What the hardware
// allows a sampler that reads what dapprof reads.
std::optional<bench::Figures> reads_only(pid_t pid, double seconds) {
  auto proc = PythonProcess::attach(pid, AttachOptions{.nonblocking = true});
  if (!proc) return std::nullopt;
  for (int i = 0; i < 20; ++i) (void)(*proc)->snapshot();
  const auto plan = (*proc)->read_plan();
  std::size_t bytes = 0;
  for (const auto& [addr, size] : plan) bytes += size;
  std::vector<std::byte> buffer(bytes);
  std::vector<process::ProcessMemory::Chunk> chunks;
  std::size_t offset = 0;
  for (const auto& [addr, size] : plan) {
    chunks.push_back({addr, buffer.data() + offset, size});
    offset += size;
  }
  if (chunks.empty()) return std::nullopt;
  std::uint64_t top = 0;
  const process::ProcessMemory::Chunk again{chunks.back().addr, &top, sizeof top};
  const int stat = ::open(fmt::format("/proc/{}/task/{}/stat", pid, pid).c_str(), O_RDONLY);
  if (stat < 0) return std::nullopt;
  char line[512];
  process::ProcessMemory memory(pid);
  const double cpu0 = thread_cpu_seconds();
  const auto begin = Clock::now();
  const auto end = begin + std::chrono::duration<double>(seconds);
  std::uint64_t n = 0;
  bool ok = true;
  while (ok && Clock::now() < end) {
    ok = memory.read_many(chunks) && memory.read(again.addr, again.out, again.size) &&
         ::pread(stat, line, sizeof line, 0) > 0;
    ++n;
  }
  ::close(stat);
  if (!ok) return std::nullopt;
  const double wall = std::chrono::duration<double>(Clock::now() - begin).count();
  bench::Figures f;
  f.samples_per_s = static_cast<double>(n) / wall;
  f.cpu_us_per_sample = (thread_cpu_seconds() - cpu0) * 1e6 / static_cast<double>(n);
  f.core_percent = 100 * (thread_cpu_seconds() - cpu0) / wall;
  f.reads_per_sample = 2;
  f.plan_regions = plan.size();
  f.plan_bytes = bytes;
  return f;
}

void print_row(const std::string& who, const bench::Figures& f) {
  std::string extra;
  if (f.retried || f.paused)
    extra = fmt::format("  retried {:.2f}%  paused {:.2f}%", f.retried, f.paused);
  if (f.plan_regions) extra = fmt::format("  ({} regions, {} bytes)", f.plan_regions, f.plan_bytes);
  fmt::print("  {:<22} {:>9} {:>9.0f}/s {:>6} {:>8.1f} µs {:>6.1f}% {:>6.1f} {:>7.1f}{}\n", who,
             f.asked > 0 ? fmt::format("{:.0f} kHz", f.asked / 1000) : "max", f.samples_per_s,
             f.asked > 0 ? fmt::format("{:.2f}", f.samples_per_s / f.asked) : "",
             f.cpu_us_per_sample, f.core_percent, f.reads_per_sample, f.frames, extra);
}

std::string ratio(double a, double b) { return b > 0 ? fmt::format("{:.2f}", a / b) : "n/a"; }

// work.py at `depth` with `idle` sleeping threads besides. Like a debuggee launched by debugpy,
// the target is not our child: an intermediate process starts it (dapprof pauses its own
// children differently, see pause.cpp).
struct Target {
  Target(const bench::Interpreter& interp, int depth, int idle)
      : launcher({interp.path, "-c", kLauncher, DAPPROF_SOURCE_DIR "/bench/sampler/work.py",
                  std::to_string(depth), std::to_string(idle)}) {
    const auto pid_line = launcher.read_line();
    pid = pid_line ? static_cast<pid_t>(std::stol(*pid_line)) : -1;
    if (pid > 0 && launcher.read_line() != "ready") {
      kill(pid, SIGKILL);
      pid = -1;
    }
  }
  ~Target() {
    if (pid > 0) kill(pid, SIGKILL);
  }
  Child launcher;
  pid_t pid = -1;
};

// A sample of a program with many sleeping threads against one of the same program alone.
void idle_threads(const bench::Interpreter& interp, int idle, double seconds) {
  std::optional<bench::Figures> alone, crowded;
  for (int n : {0, idle}) {
    Target t(interp, 3, n);
    if (t.pid <= 0) return;
    (n == 0 ? alone : crowded) = run_dapprof(t.pid, 1000, false, seconds);
  }
  if (!alone || !crowded) return;
  fmt::print("\n{}: 1 busy thread, alone and with {} idle threads (consistent, 1 kHz):\n",
             interp.label, idle);
  print_row("dapprof, 1 thread", *alone);
  print_row(fmt::format("dapprof, {} threads", idle + 1), *crowded);
  fmt::print("    CPU/sample with {} idle threads / alone: {}  [goal <= 2.0]\n", idle,
             ratio(crowded->cpu_us_per_sample, alone->cpu_us_per_sample));
}

void bench_target(const bench::Interpreter& interp, int depth, double seconds,
                  const std::optional<std::string>& austin) {
  Target t(interp, depth, 0);
  if (t.pid <= 0) {
    fmt::print("{}: target did not start\n", interp.label);
    return;
  }
  const pid_t target = t.pid;
  Child& launcher = t.launcher;
  fmt::print("\n{} ({}), stack depth {}:\n", interp.label, interp.path, depth);
  fmt::print("  {:<22} {:>9} {:>11} {:>6} {:>11} {:>7} {:>6} {:>7}\n", "", "asked", "achieved",
             "ratio", "CPU/sample", "core", "reads", "frames");
  std::map<std::string, bench::Figures> at_1k;
  std::optional<bench::Figures> max_dapprof, max_austin;
  const bool peer = austin && interp.root.empty();  // a peer outside the root cannot read it
  for (double rate : kRates) {
    for (bool nonblocking : {false, true}) {
      const auto f = run_dapprof(target, rate, nonblocking, seconds);
      if (!f) continue;
      print_row(nonblocking ? "dapprof nonblocking" : "dapprof (consistent)", *f);
      if (rate == 1000) at_1k[nonblocking ? "nonblocking" : "consistent"] = *f;
      if (rate == kRates[0] && !nonblocking) max_dapprof = f;
    }
    if (peer) {
      const auto f = bench::run_austin(*austin, target, rate, seconds);
      if (f) {
        print_row("austin", *f);
        if (rate == 1000) at_1k["austin"] = *f;
        if (rate == kRates[0]) max_austin = f;
      }
    }
  }
  const auto reads = reads_only(target, seconds);
  if (reads) print_row("reads only (loop)", *reads);

  // Slowdown at 1 kHz: the program's own rate, alone before and after, and while sampled.
  Progress progress(launcher);
  std::map<std::string, double> slowdown;
  const auto alone = [&] { return work_rate(progress, seconds, [](auto wait) { return wait(); }); };
  for (const std::string who : {"consistent", "nonblocking", "austin"}) {
    if (who == "austin" && !peer) continue;
    const auto before = alone();
    std::optional<double> with;
    if (who == "austin") {
      with = bench::austin_work_rate(*austin, target, 1000, seconds, [&] {
        return work_rate(progress, seconds, [](auto wait) { return wait(); });
      });
    } else {
      run_dapprof(target, 1000, who == "nonblocking", seconds, &progress, &with);
    }
    const auto after = alone();
    if (before && after && with) slowdown[who] = 100 * (1 - *with / ((*before + *after) / 2));
  }

  fmt::print("  ratios (this run):\n");
  if (at_1k.contains("austin")) {
    const double target_ratio = depth <= 3 ? 1.0 : depth <= 100 ? 0.5 : 0.2;
    fmt::print(
        "    CPU/sample at 1 kHz, dapprof consistent / austin: {}, nonblocking / austin: {}"
        "  [goal <= {:.1f}]\n",
        ratio(at_1k["consistent"].cpu_us_per_sample, at_1k["austin"].cpu_us_per_sample),
        ratio(at_1k["nonblocking"].cpu_us_per_sample, at_1k["austin"].cpu_us_per_sample),
        target_ratio);
  }
  if (max_dapprof && reads) {
    fmt::print(
        // What the sampler could reach is the lower of the rate asked and the reads' own rate:
        // a loop doing only the reads is never held to a schedule.
        "    rate at 100 kHz asked / min(100 kHz, reads-only loop): {}  [goal >= 0.90; "
        ">= 30,000/s at depth 100]\n",
        ratio(max_dapprof->samples_per_s, std::min(100000.0, reads->samples_per_s)));
  }
  if (max_austin && max_dapprof) {
    fmt::print("    rate at 100 kHz asked, dapprof / austin: {}\n",
               ratio(max_dapprof->samples_per_s, max_austin->samples_per_s));
  }
  for (const auto& [who, pct] : slowdown) {
    fmt::print("    program slowdown at 1 kHz, {}: {:+.1f}%{}\n", who, pct,
               who == "consistent" ? "  [goal <= 1%]" : "");
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dapprof sampler benchmark"};
  double seconds = 2;
  std::vector<std::string> pythons, peers;
  std::vector<int> depths{3, 100, 1000};
  bool all = false;
  int idle = 49;
  app.add_option("--idle-threads", idle, "idle threads beside the busy one in the last test");
  app.add_option("--seconds", seconds, "time per configuration");
  app.add_option("--python", pythons,
                 "interpreter(s) to use (default: pyenv 3.12, Debian's 3.11, and "
                 "3.14 and 3.15 of the Debian unstable root)");
  app.add_flag("--all", all, "every interpreter tests/support/pythons.py finds");
  app.add_option("--depth", depths, "stack depths to measure");
  app.add_option("--peer", peers, "a peer profiler to measure beside: austin=PATH");
  CLI11_PARSE(app, argc, argv);

  std::optional<std::string> austin;
  for (const auto& p : peers) {
    if (p.starts_with("austin=")) {
      austin = p.substr(7);
    } else {
      fmt::print(stderr, "unknown peer {} (known: austin=PATH)\n", p);
      return 2;
    }
  }
  std::vector<bench::Interpreter> interps;
  for (const auto& p : pythons) interps.push_back({p, p, ""});
  if (interps.empty()) interps = bench::interpreters(DAPPROF_SOURCE_DIR, all);

  fmt::print(
      "CPU is the sampler's (dapprof: its sampling thread; austin: its process), user + "
      "system; reads = process_vm_readv calls per sample; retried/paused: consistent reads "
      "that found a stack moving and read again / paused the threads.\n");
  for (const auto& interp : interps) {
    for (int depth : depths) bench_target(interp, depth, seconds, austin);
    if (idle > 0) idle_threads(interp, idle, seconds);
  }
  return 0;
}
