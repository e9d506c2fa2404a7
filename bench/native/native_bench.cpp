// What native frames cost: sampling CPU per sample and the slowdown of the target, with and
// without --native, at 100 Hz and 1000 Hz, side by side. The target (target.py) runs Python 20
// frames deep calling into zlib and reports its progress; each configuration is compared with
// the target running unsampled just before.
//
//   native_bench [--seconds S] [--python PATH]...
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../common/harness.hpp"
#include "sampler/sampler.hpp"

namespace {

using namespace dapprof::sampler;
using Clock = std::chrono::steady_clock;
namespace bench = dapprof::bench;

using bench::thread_cpu_seconds;

// The target program, which prints its progress: a loop count per line.
class Target : public bench::Child {
 public:
  using Child::Child;

  // Loops per second over `seconds`, from the progress lines (first and last seen).
  std::optional<double> rate(double seconds) {
    std::optional<std::pair<Clock::time_point, long>> first, last;
    const auto end = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < end) {
      auto l = read_line();
      if (!l) return std::nullopt;
      const auto point = std::pair{Clock::now(), std::stol(*l)};
      if (!first) first = point;
      last = point;
    }
    if (!first || last->first == first->first) return std::nullopt;
    return static_cast<double>(last->second - first->second) /
           std::chrono::duration<double>(last->first - first->first).count();
  }
};

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
  SamplerOptions options{.sampling = {.rate_hz = rate, .native = native}};
  const auto begin = Clock::now();
  auto sampler = Sampler::start(
      target.pid(), options,
      [&](dapprof::model::Snapshot&& s) {
        ++snaps;
        for (const auto& t : s.threads) {
          frames += t.frames.size();
          for (const auto& f : t.frames) natives += f.native();
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

// pyenv's 3.12, Debian's 3.11 (shared and static libpython) and the Debian unstable root's 3.14
// and 3.15, as tests/support finds them.
std::vector<std::string> default_pythons() {
  std::vector<std::string> paths;
  for (const auto& i : bench::interpreters(DAPPROF_SOURCE_DIR, false)) paths.push_back(i.path);
  return paths;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dapprof native frames benchmark"};
  double seconds = 3;
  std::vector<std::string> pythons;
  app.add_option("--seconds", seconds, "measuring time per configuration (and per baseline)");
  app.add_option("--python", pythons,
                 "interpreter(s) (default: pyenv 3.12, Debian 3.11, sid 3.14 and 3.15)");
  CLI11_PARSE(app, argc, argv);
  if (pythons.empty()) pythons = default_pythons();

  fmt::print(
      "Blocking mode; CPU is the sampling thread's (user+system) per sample; slowdown is\n"
      "the target's loss of throughput against the unsampled run just before.\n");
  for (const auto& python : pythons) {
    Target target({python, DAPPROF_SOURCE_DIR "/bench/native/target.py"});
    if (target.pid() <= 0 || target.read_line() != "ready") {
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
