// What adding a sample to a profile costs: formats::Profile::add_snapshot against the way it was
// done before (legacy_profile.hpp), in the same run, at stack depths 3, 100 and 1000, for a
// program busy in one place (the innermost frame's line varies among a few) and one whose stack
// changes halfway down.
//
//   profile_bench [--samples N] [--rounds R] [--depth D]... [--threads T]
#include <fmt/format.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <vector>

#include "../common/harness.hpp"
#include "../common/synthetic_stacks.hpp"
#include "formats/profile.hpp"
#include "legacy_profile.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace dapprof;

// CPU time rather than wall time: the figures should not depend on what else the machine runs.
double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// CPU ns per thread sample of adding `count` snapshots, cycling through `snaps`.
template <typename P>
double ns_per_sample(std::vector<model::Snapshot>& snaps, std::size_t count, std::size_t& stacks) {
  P profile;
  const auto start = Clock::now();
  const double t0 = thread_cpu_ns();
  for (std::size_t i = 0; i < count; ++i) {
    auto& snap = snaps[i % snaps.size()];
    snap.time = start + std::chrono::milliseconds(i);
    profile.add_snapshot(snap, start);
  }
  const double ns = thread_cpu_ns() - t0;
  if constexpr (requires { profile.stack_count(); })
    stacks = profile.stack_count();
  else
    stacks = profile.stacks().size();
  return ns / static_cast<double>(count * snaps.front().threads.size());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dapprof profile benchmark: the cost of adding a sample"};
  std::size_t frames_per_round = 20'000'000, rounds = 5, threads = 1;
  std::vector<std::size_t> depths{3, 100, 1000};
  app.add_option("--frames", frames_per_round, "frames added per path and round (sets samples)");
  app.add_option("--rounds", rounds, "rounds, alternating old and new; the median is printed");
  app.add_option("--depth", depths, "stack depths");
  app.add_option("--threads", threads, "threads per snapshot");
  CLI11_PARSE(app, argc, argv);

  fmt::print(
      "CPU ns per thread sample of Profile::add_snapshot, median of {} rounds; old = the\n"
      "per-frame lookup (bench/formats/legacy_profile.hpp), new = formats::Profile.\n\n",
      rounds);
  fmt::print("{:>6}  {:<34} {:>10} {:>10} {:>9} {:>7}\n", "depth", "what varies", "old ns",
             "new ns", "new/old", "stacks");
  for (const auto depth : depths) {
    struct Pattern {
      const char* name;
      std::size_t varying;
    };
    for (const Pattern pattern :
         {Pattern{"innermost line among 4", 0}, Pattern{"frame halfway down among 4", depth / 2}}) {
      if (depth < 2 && pattern.varying > 0) continue;
      bench::SyntheticStacks shape{
          .depth = depth, .variants = 4, .varying = pattern.varying, .threads = threads};
      auto snaps = bench::synthetic_snapshots(shape, Clock::now());
      const std::size_t count = std::max<std::size_t>(1000, frames_per_round / depth / threads);
      std::vector<double> old_ns, new_ns;
      std::size_t old_stacks = 0, new_stacks = 0;
      for (std::size_t r = 0; r < rounds; ++r) {
        old_ns.push_back(ns_per_sample<bench::LegacyProfile>(snaps, count, old_stacks));
        new_ns.push_back(ns_per_sample<formats::Profile>(snaps, count, new_stacks));
      }
      if (old_stacks != new_stacks) {
        fmt::print("error: {} stacks before, {} now\n", old_stacks, new_stacks);
        return 1;
      }
      const double o = bench::median(old_ns), n = bench::median(new_ns);
      fmt::print("{:>6}  {:<34} {:>10.1f} {:>10.1f} {:>9.3f} {:>7}\n", depth, pattern.name, o, n,
                 n / o, new_stacks);
    }
  }
  return 0;
}
