// The cost of sampling by asyncio task, side by side on one asyncio program (async_work.py: a
// task that always runs, DEPTH frames deep, and N waiting tasks in TaskGroups): dapprof's plain
// sample, its "running" and "all" async samples, and CPython 3.15's own sampler
// (`python -m profiling.sampling attach --async-aware`, in the interpreter's root) in both
// modes, each as fast as it goes. CPU per sample is the sampler's CPU over its samples (for
// CPython's, its process's whole CPU, start-up included, over the samples it says it captured).
// The rounds are interleaved and the figures are their medians.
//
//   async_bench [--seconds S] [--rounds R] [--depth D] [--waiting N] [--python LABEL]...
#include <fmt/format.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../common/harness.hpp"
#include "sampler/sampler.hpp"

extern char** environ;

namespace {

namespace bench = dapprof::bench;
using Clock = std::chrono::steady_clock;
using dapprof::model::AsyncMode;

constexpr double kMax = 1'000'000;  // as fast as it goes

struct Run {
  double samples_per_s = 0, cpu_us = 0, stacks = 0;
};

// dapprof's sampler on `pid` for `seconds` in `mode`.
std::optional<Run> dapprof_run(pid_t pid, AsyncMode mode, double seconds) {
  using namespace dapprof::sampler;
  double cpu = 0;
  std::uint64_t stacks = 0, snaps = 0;
  std::optional<std::uint64_t> done;
  std::mutex m;
  std::condition_variable cv;
  SamplerOptions opts{.sampling = {.rate_hz = kMax, .async = mode}};
  const auto begin = Clock::now();
  auto sampler = Sampler::start(
      pid, opts,
      [&](dapprof::model::Snapshot&& s) {
        ++snaps;
        stacks += s.threads.size();
      },
      [&](StopReason, const std::string&) {
        std::lock_guard lock(m);
        cpu = bench::thread_cpu_seconds();
        done = snaps;
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
  cv.wait(lock, [&] { return done.has_value(); });
  const auto stats = (*sampler)->stats();
  const double ticks = static_cast<double>(stats.samples + stats.errors);
  if (ticks == 0) return std::nullopt;
  return Run{static_cast<double>(stats.samples) / wall, cpu * 1e6 / ticks,
             snaps ? static_cast<double>(stacks) / static_cast<double>(snaps) : 0};
}

// CPython's own sampler on `pid`, run by `python` (the wrapper entering its root).
std::optional<Run> cpython_run(const std::string& python, pid_t pid, bool all, double seconds) {
  char out[] = "/tmp/dapprof-async-bench-XXXXXX";
  const int fd = mkstemp(out);
  if (fd < 0) return std::nullopt;
  std::vector<std::string> argv{python,
                                "-m",
                                "profiling.sampling",
                                "attach",
                                "--async-aware",
                                "--async-mode",
                                all ? "all" : "running",
                                "-r",
                                "1000000",
                                "-d",
                                fmt::format("{:.0f}", seconds),
                                "--collapsed",
                                "-o",
                                "/dev/null",
                                std::to_string(pid)};
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd, 1);
  posix_spawn_file_actions_adddup2(&fa, fd, 2);
  pid_t child = -1;
  const auto begin = Clock::now();
  const bool spawned = posix_spawn(&child, args[0], &fa, nullptr, args.data(), environ) == 0;
  posix_spawn_file_actions_destroy(&fa);
  close(fd);
  rusage ru{};
  int status = 0;
  if (!spawned || wait4(child, &status, 0, &ru) != child) return std::nullopt;
  const double wall = std::chrono::duration<double>(Clock::now() - begin).count();
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  std::remove(out);
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(R"(Captured (\d+) samples)"))) {
    fmt::print("  CPython's sampler: no samples: {}\n", text.substr(0, 300));
    return std::nullopt;
  }
  const double samples = std::stod(m[1]);
  const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                     static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  return Run{samples / wall, samples > 0 ? cpu * 1e6 / samples : 0, 0};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Sampling by asyncio task: dapprof's plain, running and all samples, and "
      "CPython 3.15's own sampler, on one asyncio program"};
  double seconds = 3;
  int rounds = 3, depth = 20, waiting = 100;
  std::vector<std::string> labels{"sid-3.14", "sid-3.15"};
  std::vector<std::string> only;
  app.add_option("--seconds", seconds, "Seconds per run")->check(CLI::PositiveNumber);
  app.add_option("--rounds", rounds, "Interleaved rounds")->check(CLI::PositiveNumber);
  app.add_option("--depth", depth, "Frames of the running task")->check(CLI::PositiveNumber);
  app.add_option("--waiting", waiting, "Waiting tasks")->check(CLI::NonNegativeNumber);
  app.add_option("--python", labels, "Interpreters, by tests/support/pythons.py label");
  app.add_option("--only", only, "Runs to make (plain, running, all, cpython), for profiling one")
      ->check(CLI::IsMember({"plain", "running", "all", "cpython"}));
  CLI11_PARSE(app, argc, argv);

  const std::string work = std::string(DAPPROF_SOURCE_DIR) + "/bench/sampler/async_work.py";
  for (const auto& interp : bench::interpreters(DAPPROF_SOURCE_DIR, true)) {
    if (std::find(labels.begin(), labels.end(), interp.label) == labels.end()) continue;
    bench::Child target({interp.path, work, std::to_string(depth), std::to_string(waiting)});
    if (target.read_line() != "ready") {
      fmt::print("{}: the program did not start\n", interp.label);
      continue;
    }
    const bool cpython = interp.label == "sid-3.15";
    fmt::print("{}: 1 running task {} frames deep, {} waiting tasks; {} rounds of {} s\n",
               interp.label, depth, waiting, rounds, seconds);
    std::map<std::string, std::vector<Run>> runs;
    for (int r = 0; r < rounds; ++r) {
      const auto wanted = [&](const char* what) {
        return only.empty() || std::find(only.begin(), only.end(), what) != only.end();
      };
      for (auto [name, mode, what] : {std::tuple{"dapprof plain", AsyncMode::Off, "plain"},
                                      std::tuple{"dapprof running", AsyncMode::Running, "running"},
                                      std::tuple{"dapprof all", AsyncMode::All, "all"}})
        if (wanted(what))
          if (auto run = dapprof_run(target.pid(), mode, seconds)) runs[name].push_back(*run);
      if (!cpython || !wanted("cpython")) continue;
      for (bool all : {false, true})
        if (auto run = cpython_run(interp.path, target.pid(), all, seconds))
          runs[all ? "CPython all" : "CPython running"].push_back(*run);
    }
    const auto med = [&](const std::string& who, double Run::*field) {
      std::vector<double> v;
      for (const auto& run : runs[who]) v.push_back(run.*field);
      return bench::median(v);
    };
    fmt::print("  {:<17} {:>11} {:>13} {:>8}\n", "", "samples/s", "CPU/sample", "stacks");
    for (const char* who :
         {"dapprof plain", "dapprof running", "dapprof all", "CPython running", "CPython all"}) {
      if (runs[who].empty()) continue;
      fmt::print("  {:<17} {:>11.0f} {:>10.1f} µs {:>8.1f}\n", who, med(who, &Run::samples_per_s),
                 med(who, &Run::cpu_us), med(who, &Run::stacks));
    }
    const double plain = med("dapprof plain", &Run::cpu_us);
    if (plain > 0 && !runs["dapprof running"].empty() && !runs["dapprof all"].empty())
      fmt::print("  running / plain CPU per sample: {:.2f} (goal ≤ 1.30); all / plain: {:.2f}\n",
                 med("dapprof running", &Run::cpu_us) / plain,
                 med("dapprof all", &Run::cpu_us) / plain);
    if (cpython && !runs["CPython running"].empty() && !runs["CPython all"].empty() &&
        !runs["dapprof running"].empty() && !runs["dapprof all"].empty())
      fmt::print("  dapprof / CPython CPU per sample: running {:.2f}, all {:.2f}\n",
                 med("dapprof running", &Run::cpu_us) / med("CPython running", &Run::cpu_us),
                 med("dapprof all", &Run::cpu_us) / med("CPython all", &Run::cpu_us));
  }
  return 0;
}
