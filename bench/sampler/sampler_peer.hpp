#pragma once
// The figures of one sampling run, and the peer profiler (austin) run beside dapprof: started
// on the same target for the same time, its CPU from its rusage and its samples from its output.
// Only a binary given on the command line is run; nothing of the peer is part of dapprof.
// (CPython 3.15's sampler, the other peer, is run through the same process: tachyon_peer.hpp.)
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../common/syscall_counter.hpp"

extern char** environ;

namespace dapprof::bench {

struct Figures {
  double asked = 0;  // samples/s asked; 0: as fast as possible
  double samples_per_s = 0, cpu_us_per_sample = 0, core_percent = 0, reads_per_sample = 0;
  double frames = 0;
  double syscalls_per_sample = 0;  // every system call, as the kernel counts them; 0: not counted
  double failed = 0;  // % of reads that failed (a torn stack the walk could not follow, ...)
  double retried = 0, paused = 0;  // % of consistent samples
  double stopped = 0;              // % of the run the program's threads were held stopped
  std::size_t plan_regions = 0, plan_bytes = 0;
};

// A peer profiler's process: started from an argv (looked up on PATH), its stdout and stderr to
// `output`, reaped with its rusage.
class PeerProcess {
 public:
  explicit PeerProcess(const std::vector<std::string>& argv,
                       const std::string& output = "/dev/null") {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, output.c_str(), O_WRONLY | O_APPEND, 0);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~PeerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;
  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // Waits for it to end; its user + system CPU seconds (with those of the children it reaped).
  std::optional<double> wait() {
    int status = 0;
    rusage ru{};
    if (pid_ <= 0 || wait4(pid_, &status, 0, &ru) != pid_) return std::nullopt;
    pid_ = -1;
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  }

 private:
  pid_t pid_ = -1;
};

inline std::vector<std::string> austin_argv(const std::string& path, pid_t pid, double rate,
                                            int seconds, const std::string& output) {
  const auto interval_us = std::max<long>(1, std::lround(1e6 / rate));
  return {path,
          "-i",
          std::to_string(interval_us),
          "-x",
          std::to_string(seconds),
          "-p",
          std::to_string(pid),
          "-o",
          output};
}

// austin sampling `pid` at `rate` for `seconds` (rounded up: it takes whole seconds). With
// `measure`, that is called 200 ms in, and its result (the program's work rate while sampled) is
// put in `*seen`; austin then runs a second longer so that it samples all the time measured. Its
// system calls are counted from 200 ms in, once it has started and attached.
inline std::optional<Figures> run_austin(const std::string& path, pid_t pid, double rate,
                                         double seconds,
                                         const std::function<std::optional<double>()>& measure = {},
                                         std::optional<double>* seen = nullptr) {
  using Clock = std::chrono::steady_clock;
  char output[] = "/tmp/dapprof-bench-austin-XXXXXX";
  const int fd = mkstemp(output);
  if (fd < 0) return std::nullopt;
  close(fd);
  const int whole = static_cast<int>(std::ceil(seconds)) + (measure ? 1 : 0);
  const auto begin = Clock::now();
  PeerProcess austin(austin_argv(path, pid, rate, whole, output));
  std::optional<SyscallCounter> calls;
  auto counted_from = begin;
  if (austin.started()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    calls.emplace(austin.pid());
    counted_from = Clock::now();
    if (measure && seen) *seen = measure();
  }
  const auto cpu = austin.wait();
  const auto end = Clock::now();
  // A counter keeps its count once the thread it watched has ended.
  const std::uint64_t counted = calls ? calls->count().value_or(0) : 0;
  const double wall = std::chrono::duration<double>(end - begin).count();
  std::ifstream in(output);
  std::uint64_t samples = 0, frames = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != 'P') continue;  // metadata lines start with '#'
    ++samples;
    frames += static_cast<std::uint64_t>(std::count(line.begin(), line.end(), ';')) - 1;
  }
  std::remove(output);
  if (!cpu || samples == 0) {
    fmt::print("  austin: no samples (is {} austin?)\n", path);
    return std::nullopt;
  }
  Figures f;
  f.asked = rate;
  f.samples_per_s = static_cast<double>(samples) / wall;
  f.cpu_us_per_sample = *cpu * 1e6 / static_cast<double>(samples);
  f.core_percent = 100 * *cpu / wall;
  f.frames = static_cast<double>(frames) / static_cast<double>(samples);
  // Its samples are not timed in its output: those of the counted time, at its mean rate.
  if (counted > 0)
    f.syscalls_per_sample =
        static_cast<double>(counted) /
        (f.samples_per_s * std::chrono::duration<double>(end - counted_from).count());
  return f;
}

}  // namespace dapprof::bench
