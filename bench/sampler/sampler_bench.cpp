// Sampling cost, side by side: for Python targets 3, 100 and 1000 frames deep, dapprof's
// sampler (consistent, the default, and nonblocking) at 100 kHz, 10 kHz and 1 kHz asked, a loop
// making only the reads one sample needs, and a peer profiler (austin) when one is given: rate
// achieved, CPU per sample, share of a core, reads per sample, how often a consistent read had to
// be retried or paused, and how much each slows the program at 1 kHz.
//
//   sampler_bench [--seconds S] [--rounds R] [--python PATH]... [--all] [--depth N]...
//                 [--peer austin=PATH]
//
// Every figure of a target comes from the same run, interleaved, and the ratios are against
// that run's baseline (the program alone, the reads-only loop, the peer). At 1 kHz, R rounds of
// (dapprof consistent, dapprof nonblocking, austin), each between runs of the program alone;
// the rows and ratios there are the median of the rounds.
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
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
#include <string_view>
#include <thread>
#include <vector>

#include "../common/harness.hpp"
#include "sampler/process/memory.hpp"
#include "sampler/sampler.hpp"
#include "sampler_peer.hpp"
#include "target.hpp"

namespace {

using namespace dapprof::sampler;
using Clock = std::chrono::steady_clock;
namespace bench = dapprof::bench;

using bench::Child;
using bench::Progress;
using bench::Target;
using bench::thread_cpu_seconds;
using bench::work_rate;

// The rates of the table; 1 kHz, the rate a person profiles at, is measured in rounds instead.
constexpr double kRates[] = {100'000, 10'000};

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
    *work = work_rate(*progress, seconds);
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
  f.stopped = 100.0 * std::chrono::duration<double>(c.stopped).count() / wall;
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

// The row of "consistent", "nonblocking" or "austin".
std::string row_label(const std::string& who) {
  return who == "consistent"    ? "dapprof (consistent)"
         : who == "nonblocking" ? "dapprof nonblocking"
                                : who;
}

std::string ratio(double a, double b) { return b > 0 ? fmt::format("{:.2f}", a / b) : "n/a"; }

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

// The comparisons at 1 kHz: in each round dapprof consistent, dapprof nonblocking and austin,
// in an order that turns each round, each between two runs of the program alone. CPU per sample
// and slowdown are compared within a round, side by side; the median of the rounds is what a
// ratio says, as one round on this noisy machine moves by tens of percent.
struct Round {
  std::map<std::string, bench::Figures> runs;
  std::map<std::string, double> slowdown;  // percent
};

std::vector<Round> one_khz_rounds(pid_t target, Progress& progress,
                                  const std::optional<std::string>& austin, double seconds,
                                  int rounds) {
  std::vector<std::string> who{"consistent", "nonblocking"};
  if (austin) who.push_back("austin");
  const auto alone = [&] { return work_rate(progress, seconds); };
  std::vector<Round> out(static_cast<std::size_t>(rounds));
  auto before = alone();
  for (std::size_t r = 0; r < out.size(); ++r) {
    for (std::size_t i = 0; i < who.size(); ++i) {
      const std::string& w = who[(i + r) % who.size()];
      std::optional<double> with;
      const auto f = w == "austin"
                         ? bench::run_austin(*austin, target, 1000, seconds, alone, &with)
                         : run_dapprof(target, 1000, w == "nonblocking", seconds, &progress, &with);
      const auto after = alone();
      if (f) out[r].runs[w] = *f;
      if (before && after && with)
        out[r].slowdown[w] = 100 * (1 - *with / ((*before + *after) / 2));
      before = after;
    }
  }
  return out;
}

// Each figure of `who`'s runs: the median over the rounds.
std::optional<bench::Figures> median_run(const std::vector<Round>& rounds, const std::string& who) {
  std::vector<const bench::Figures*> runs;
  for (const auto& r : rounds)
    if (const auto it = r.runs.find(who); it != r.runs.end()) runs.push_back(&it->second);
  if (runs.empty()) return std::nullopt;
  const auto of = [&](double bench::Figures::*field) {
    std::vector<double> v;
    for (const auto* f : runs) v.push_back(f->*field);
    return bench::median(v);
  };
  bench::Figures m = *runs.front();
  m.samples_per_s = of(&bench::Figures::samples_per_s);
  m.cpu_us_per_sample = of(&bench::Figures::cpu_us_per_sample);
  m.core_percent = of(&bench::Figures::core_percent);
  m.reads_per_sample = of(&bench::Figures::reads_per_sample);
  m.frames = of(&bench::Figures::frames);
  m.retried = of(&bench::Figures::retried);
  m.paused = of(&bench::Figures::paused);
  m.stopped = of(&bench::Figures::stopped);
  return m;
}

// "0.97 (rounds 0.95, 1.02, 0.97)": the median of the rounds' values, and each of them.
std::string over_rounds(const std::vector<double>& values, std::string_view format) {
  if (values.empty()) return "n/a";
  std::vector<std::string> each;
  for (double v : values) each.push_back(fmt::format(fmt::runtime(format), v));
  return fmt::format("{} (rounds {})", fmt::format(fmt::runtime(format), bench::median(values)),
                     fmt::join(each, ", "));
}

void bench_target(const bench::Interpreter& interp, int depth, double seconds, int rounds_asked,
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
  std::optional<bench::Figures> max_dapprof, max_austin;
  const bool peer = austin && interp.root.empty();  // a peer outside the root cannot read it
  for (double rate : kRates) {
    for (bool nonblocking : {false, true}) {
      const auto f = run_dapprof(target, rate, nonblocking, seconds);
      if (!f) continue;
      print_row(row_label(nonblocking ? "nonblocking" : "consistent"), *f);
      if (rate == kRates[0] && !nonblocking) max_dapprof = f;
    }
    if (peer) {
      const auto f = bench::run_austin(*austin, target, rate, seconds);
      if (f) {
        print_row("austin", *f);
        if (rate == kRates[0]) max_austin = f;
      }
    }
  }
  Progress progress(launcher);
  const auto rounds =
      one_khz_rounds(target, progress, peer ? austin : std::nullopt, seconds, rounds_asked);
  for (const std::string who : {"consistent", "nonblocking", "austin"}) {
    if (const auto m = median_run(rounds, who)) print_row(row_label(who), *m);
  }
  const auto reads = reads_only(target, seconds);
  if (reads) print_row("reads only (loop)", *reads);

  fmt::print("  ratios (this run; 1 kHz: the median of {} interleaved rounds):\n", rounds.size());
  if (peer) {
    const double target_ratio = depth <= 3 ? 1.0 : depth <= 100 ? 0.5 : 0.2;
    const auto cpu_ratio = [&](const std::string& who) {
      std::vector<double> v;
      for (const auto& r : rounds)
        if (r.runs.contains(who) && r.runs.contains("austin") &&
            r.runs.at("austin").cpu_us_per_sample > 0)
          v.push_back(r.runs.at(who).cpu_us_per_sample / r.runs.at("austin").cpu_us_per_sample);
      return over_rounds(v, "{:.2f}");
    };
    fmt::print("    CPU/sample at 1 kHz, dapprof consistent / austin: {}  [goal <= {:.1f}]\n",
               cpu_ratio("consistent"), target_ratio);
    fmt::print("    CPU/sample at 1 kHz, dapprof nonblocking / austin: {}\n",
               cpu_ratio("nonblocking"));
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
  {
    // What the pauses can have cost the program, measured exactly where the slowdown below is
    // within this machine's noise (a program's rate alone moves by about 5% from one second to
    // the next): a nonblocking read does not stop it, and the sampler runs on another core.
    std::vector<double> v;
    for (const auto& r : rounds)
      if (r.runs.contains("consistent")) v.push_back(r.runs.at("consistent").stopped);
    if (!v.empty())
      fmt::print("    program held stopped at 1 kHz, consistent: {} of the time\n",
                 over_rounds(v, "{:.3f}%"));
  }
  for (const std::string who : {"consistent", "nonblocking", "austin"}) {
    std::vector<double> v;
    for (const auto& r : rounds)
      if (r.slowdown.contains(who)) v.push_back(r.slowdown.at(who));
    if (!v.empty())
      fmt::print("    program slowdown at 1 kHz, {}: {}{}\n", who, over_rounds(v, "{:+.1f}%"),
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
  int rounds = 3;
  app.add_option("--idle-threads", idle, "idle threads beside the busy one in the last test");
  app.add_option("--seconds", seconds, "time per configuration");
  app.add_option("--rounds", rounds, "interleaved rounds of the 1 kHz comparisons (median printed)")
      ->check(CLI::Range(1, 99));
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
    for (int depth : depths) bench_target(interp, depth, seconds, rounds, austin);
    if (idle > 0) idle_threads(interp, idle, seconds);
  }
  return 0;
}
