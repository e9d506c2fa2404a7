#pragma once
// One sampler on a pool of CPU-bound worker processes (tests/fixtures/pool_workers.py): dapprof's
// sampler with `subprocesses`, austin -C (its child processes), CPython 3.15's sampler with
// --subprocesses (a profiler process per child). What each costs per sample, and the rate each
// worker got.
#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "../common/harness.hpp"
#include "sampler/process/tasks.hpp"
#include "sampler/sampler.hpp"
#include "sampler_peer.hpp"
#include "tachyon_peer.hpp"
#include "target.hpp"

namespace dapprof::bench {

// The function every worker spins in: its samples are the workers'.
inline constexpr const char* kSpin = "spin";

struct PoolFigures {
  double cpu_us_per_sample = 0;  // every sample of the tree, the parent's too
  double samples_per_s = 0;      // all of them
  double per_worker = 0;         // samples/s of `spin`, per worker
  std::size_t workers_seen = 0;  // processes with samples of `spin`
};

inline PoolFigures pool_figures(double cpu, double samples, const std::map<pid_t, double>& spinning,
                                int workers, double seconds) {
  double spin = 0;
  for (const auto& [pid, n] : spinning) spin += n;
  return {.cpu_us_per_sample = samples > 0 ? cpu * 1e6 / samples : 0,
          .samples_per_s = samples / seconds,
          .per_worker = spin / workers / seconds,
          .workers_seen = spinning.size()};
}

// pool_workers.py with `workers` workers spinning for `seconds`, started as a debuggee is (through
// a launcher, which prints its pid); ready once every worker has started.
struct Pool {
  Pool(const Interpreter& interp, int workers, double seconds)
      : launcher({interp.path, "-c", kLauncher,
                  DAPPROF_SOURCE_DIR "/tests/fixtures/pool_workers.py", "pool",
                  std::to_string(workers), fmt::format("{:.0f}", seconds)}) {
    const auto pid_line = launcher.read_line();
    pid = pid_line ? static_cast<pid_t>(std::stol(*pid_line)) : -1;
    // The workers, and from 3.14 the forkserver they are forked from (and a resource tracker).
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (pid > 0 &&
           sampler::process::descendants(pid).size() < static_cast<std::size_t>(workers)) {
      if (std::chrono::steady_clock::now() > until) {
        kill(pid, SIGKILL);
        pid = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // Past the workers' start-up (imports, the barrier): they spin from here.
    if (pid > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  }
  ~Pool() {
    if (pid <= 0) return;
    for (pid_t p : sampler::process::descendants(pid)) kill(p, SIGKILL);
    kill(pid, SIGKILL);
  }
  Child launcher;
  pid_t pid = -1;
};

inline std::optional<PoolFigures> pool_dapprof(pid_t pid, int workers, double rate,
                                               double seconds) {
  using namespace dapprof::sampler;
  std::mutex m;
  std::condition_variable cv;
  bool stopped = false;
  double cpu = 0, samples = 0;
  std::map<pid_t, double> spinning;
  SamplerOptions opts{.sampling = {.rate_hz = rate, .subprocesses = true}};
  auto sampler = Sampler::start(
      pid, opts,
      [&](dapprof::model::Snapshot&& s) {
        if (s.process_exited) return;
        ++samples;
        for (const auto& t : s.threads)
          for (const auto& f : t.frames)
            if (f.function == kSpin) {
              spinning[s.pid] += 1;
              return;
            }
      },
      [&](StopReason, const std::string&) {
        std::lock_guard lock(m);
        cpu = thread_cpu_seconds();
        stopped = true;
        cv.notify_all();
      });
  if (!sampler) {
    fmt::print("  dapprof cannot sample: {}\n", sampler.message());
    return std::nullopt;
  }
  const auto begin = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  (*sampler)->stop();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::unique_lock lock(m);
  cv.wait(lock, [&] { return stopped; });
  return pool_figures(cpu, samples, spinning, workers, wall);
}

// austin -C: its lines are `P<pid>;T<iid>:<tid>;frames... <µs>`, one per thread per sample.
inline std::optional<PoolFigures> pool_austin(const std::string& path, pid_t pid, int workers,
                                              double rate, int seconds) {
  char output[] = "/tmp/dapprof-bench-austin-XXXXXX";
  const int fd = mkstemp(output);
  if (fd < 0) return std::nullopt;
  close(fd);
  auto argv = austin_argv(path, pid, rate, seconds, output);
  argv.insert(argv.begin() + 1, "-C");
  PeerProcess austin(argv);
  const auto cpu = austin.wait();
  std::ifstream in(output);
  double samples = 0;
  std::map<pid_t, double> spinning;
  const std::string spin = std::string(":") + kSpin + ":";
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != 'P') continue;
    ++samples;
    if (line.find(spin) != std::string::npos) spinning[std::atoi(line.c_str() + 1)] += 1;
  }
  std::remove(output);
  if (!cpu || samples == 0) {
    fmt::print("  austin: no samples (is {} austin?)\n", path);
    return std::nullopt;
  }
  return pool_figures(*cpu, samples, spinning, workers, seconds);
}

// Its CPU per sample is taken as in Tachyon::measure: the difference of a 1 s run and a longer one,
// so that the start-up of its profiler processes (an interpreter each) is no part of a sample.
inline std::optional<PoolFigures> pool_tachyon(const Tachyon& tachyon, const std::string& root,
                                               pid_t pid, int workers, double rate, int seconds,
                                               std::string* why) {
  const auto one = tachyon.run_pool(root, pid, rate, 1, kSpin, why);
  if (!one) return std::nullopt;
  const auto many = tachyon.run_pool(root, pid, rate, 1 + seconds, kSpin, why);
  if (!many) return std::nullopt;
  double total_one = 0, total_many = 0;
  for (const auto& [p, n] : one->samples) total_one += n;
  for (const auto& [p, n] : many->samples) total_many += n;
  if (total_many <= total_one) {
    if (why) *why = "a longer run captured no more samples than a 1 s run";
    return std::nullopt;
  }
  auto f = pool_figures(many->cpu - one->cpu, total_many - total_one, many->spinning, workers,
                        1 + seconds);
  f.samples_per_s = total_many / (1 + seconds);
  return f;
}

}  // namespace dapprof::bench
