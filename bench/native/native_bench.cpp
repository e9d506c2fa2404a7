// What native frames cost: sampling CPU per sample and the slowdown of the target, with and
// without --native, at 100 Hz and 1000 Hz, side by side. The target (target.py) runs Python 20
// frames deep calling into zlib and reports its progress; each configuration is compared with
// the target running unsampled just before.
//
//   native_bench [--seconds S] [--python PATH]...
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sampler/sampler.hpp"

extern char** environ;

namespace {

using namespace dapprof::sampler;
using Clock = std::chrono::steady_clock;

// A program started from an argv (no shell), its stdout piped to us, killed on destruction.
class Target {
 public:
  explicit Target(const std::vector<std::string>& argv) {
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    fd_ = out[0];
  }
  ~Target() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }
  Target(const Target&) = delete;
  Target& operator=(const Target&) = delete;
  pid_t pid() const { return pid_; }

  // The next line, or nullopt after 30 s or at end of file.
  std::optional<std::string> line() {
    std::string text;
    char c;
    pollfd p{fd_, POLLIN, 0};
    while (poll(&p, 1, 30000) == 1 && read(fd_, &c, 1) == 1) {
      if (c == '\n') return text;
      text += c;
    }
    return std::nullopt;
  }

  // Loops per second over `seconds`, from the progress lines (first and last seen).
  std::optional<double> rate(double seconds) {
    std::optional<std::pair<Clock::time_point, long>> first, last;
    const auto end = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < end) {
      auto l = line();
      if (!l) return std::nullopt;
      const auto point = std::pair{Clock::now(), std::stol(*l)};
      if (!first) first = point;
      last = point;
    }
    if (!first || last->first == first->first) return std::nullopt;
    return static_cast<double>(last->second - first->second) /
           std::chrono::duration<double>(last->first - first->first).count();
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
};

double thread_cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct Row {
  double samples_per_s = 0, cpu_us = 0, frames = 0, native_frames = 0, slowdown = 0;
  std::uint64_t errors = 0;
};

std::optional<Row> measure(Target& target, double rate, bool native, double seconds) {
  const auto baseline = target.rate(seconds);
  if (!baseline) return std::nullopt;
  std::mutex m;
  std::condition_variable cv;
  bool stopped = false;
  double cpu = 0;
  std::uint64_t snaps = 0, frames = 0, natives = 0;
  SamplerOptions options{.rate_hz = rate, .native = native};
  const auto begin = Clock::now();
  auto sampler = Sampler::start(
      target.pid(), options,
      [&](Snapshot&& s) {
        ++snaps;
        for (const auto& t : s.threads) {
          frames += t.frames.size();
          for (const auto& f : t.frames) natives += f.native;
        }
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
  const auto sampled = target.rate(seconds);
  (*sampler)->stop();
  const double wall = std::chrono::duration<double>(Clock::now() - begin).count();
  std::unique_lock lock(m);
  cv.wait(lock, [&] { return stopped; });
  if (!sampled) return std::nullopt;
  const auto stats = (*sampler)->stats();
  Row row;
  const double reads = static_cast<double>(stats.samples + stats.errors);
  row.samples_per_s = static_cast<double>(stats.samples) / wall;
  row.cpu_us = reads > 0 ? cpu * 1e6 / reads : 0;
  row.frames = snaps ? static_cast<double>(frames) / static_cast<double>(snaps) : 0;
  row.native_frames = snaps ? static_cast<double>(natives) / static_cast<double>(snaps) : 0;
  row.slowdown = 100 * (1 - *sampled / *baseline);
  row.errors = stats.errors;
  return row;
}

// pyenv's 3.12 and Debian's 3.11 (shared and static libpython), as tests/support finds them.
std::vector<std::string> default_pythons() {
  Target list({"/usr/bin/python3", DAPPROF_SOURCE_DIR "/tests/support/pythons.py"});
  std::vector<std::string> found, all;
  while (auto line = list.line()) {
    std::istringstream in(*line);
    std::string label, path;
    if (!(in >> label >> path)) continue;
    all.push_back(path);
    if (label.starts_with("pyenv-3.12") || label.starts_with("debian")) found.push_back(path);
  }
  return found.empty() ? all : found;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dapprof native frames benchmark"};
  double seconds = 3;
  std::vector<std::string> pythons;
  app.add_option("--seconds", seconds, "measuring time per configuration (and per baseline)");
  app.add_option("--python", pythons, "interpreter(s) (default: pyenv 3.12 and Debian 3.11)");
  CLI11_PARSE(app, argc, argv);
  if (pythons.empty()) pythons = default_pythons();

  fmt::print(
      "Blocking mode; CPU is the sampling thread's (user+system) per sample; slowdown is\n"
      "the target's loss of throughput against the unsampled run just before.\n");
  for (const auto& python : pythons) {
    Target target({python, DAPPROF_SOURCE_DIR "/bench/native/target.py"});
    if (target.pid() <= 0 || target.line() != "ready") {
      fmt::print("{}: target did not start\n", python);
      continue;
    }
    fmt::print("\n{} (target: Python 20 frames deep calling zlib):\n", python);
    fmt::print("  {:>8} | {:>28} | {:>28}\n", "", "Python frames only", "--native");
    fmt::print("  {:>8} | {:>9} {:>8} {:>9} | {:>9} {:>8} {:>9}   {}\n", "rate", "µs CPU",
               "slowdown", "samples/s", "µs CPU", "slowdown", "samples/s", "frames (native)");
    for (double rate : {100.0, 1000.0}) {
      const auto python_only = measure(target, rate, false, seconds);
      const auto native = measure(target, rate, true, seconds);
      if (!python_only || !native) {
        fmt::print("  {:>6} Hz: measurement failed\n", rate);
        continue;
      }
      fmt::print(
          "  {:>5} Hz | {:>9.1f} {:>7.1f}% {:>9.0f} | {:>9.1f} {:>7.1f}% {:>9.0f}   {:.1f} "
          "({:.1f}){}\n",
          rate, python_only->cpu_us, python_only->slowdown, python_only->samples_per_s,
          native->cpu_us, native->slowdown, native->samples_per_s, native->frames,
          native->native_frames,
          python_only->errors + native->errors
              ? fmt::format("  errors {}/{}", python_only->errors, native->errors)
              : "");
    }
  }
  return 0;
}
