// Memory of a long recording, synthetic: an hour at 1 kHz (3.6 million snapshots) of a 100-frame
// stack whose innermost line varies among a few values, added to a formats::Profile as `dapprof
// record` does, or with --live to the daemon's Recording as a live run does (batches flushed and
// encoded every 100 ms, as for a client that keeps up). Prints RSS every 10% and the bytes each
// sample takes.
//
//   memory_bench [--live] [--samples N] [--depth D] [--variants V] [--rate HZ]
//
// Target (from the issue): RSS after the hour at most 30 MB, for record and a live run alike.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <random>

#include "../common/rss.hpp"
#include "../common/synthetic_stacks.hpp"
#include "adapter/profiling/recording.hpp"
#include "formats/profile.hpp"
#include "protocol/backlog.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace dapprof;
constexpr double kTargetMiB = 30;

double mib(long kib) { return static_cast<double>(kib) / 1024; }

struct Options {
  std::size_t samples = 3'600'000;
  std::size_t depth = 100;
  std::size_t variants = 4;
  double rate = 1000;
  bool live = false;
};

// What either recording path needs from the loop: add one snapshot, and how many bytes its
// samples take (0 if it cannot tell).
template <typename Add, typename Bytes>
long run(const Options& o, Add&& add, Bytes&& sample_bytes) {
  const auto start = Clock::now();
  auto snaps = bench::synthetic_snapshots({.depth = o.depth, .variants = o.variants}, start);
  std::mt19937 rng(1);
  const long before = bench::rss_kib().value_or(0);
  fmt::print("{:>5} {:>10} {:>10} {:>12} {:>14}\n", "done", "samples", "RSS MiB", "growth MiB",
             "store B/sample");
  fmt::print("{:>5} {:>10} {:>10.1f} {:>12} {:>14}\n", "0%", 0, mib(before), "", "");
  const auto interval =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1 / o.rate));
  const auto t0 = Clock::now();
  long rss = before;
  for (std::size_t i = 0; i < o.samples; ++i) {
    auto& snap = snaps[rng() % snaps.size()];
    snap.time = start + static_cast<long>(i) * interval;
    add(snap);
    if ((i + 1) % (o.samples / 10) == 0 || i + 1 == o.samples) {
      rss = bench::rss_kib().value_or(0);
      const double per_sample = static_cast<double>(sample_bytes()) / static_cast<double>(i + 1);
      fmt::print("{:>4}% {:>10} {:>10.1f} {:>12.1f} {:>14.2f}\n", (i + 1) * 100 / o.samples, i + 1,
                 mib(rss), mib(rss - before), per_sample);
      std::fflush(stdout);
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  fmt::print("{:.2f} µs per snapshot added (wall, this machine)\n",
             seconds * 1e6 / static_cast<double>(o.samples));
  return rss;
}

void verdict(long rss) {
  fmt::print("RSS at the end: {:.1f} MiB  [target: <= {:.0f} MB: {}]\n", mib(rss), kTargetMiB,
             mib(rss) <= kTargetMiB ? "MET" : "MISSED");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dapprof memory benchmark: an hour of samples"};
  Options o;
  app.add_option("--samples", o.samples, "snapshots to add (default: an hour at 1 kHz)");
  app.add_option("--depth", o.depth, "frames per stack");
  app.add_option("--variants", o.variants, "lines the innermost frame varies among");
  app.add_option("--rate", o.rate, "sampling rate the snapshot times follow");
  app.add_flag("--live", o.live, "through the daemon's Recording, batches flushed every 100 ms");
  CLI11_PARSE(app, argc, argv);
  if (o.samples < 10 || o.variants < 1) {
    fmt::print(stderr, "need at least 10 samples and 1 variant\n");
    return 2;
  }

  fmt::print("{} snapshots of one thread, {} frames deep, innermost line among {}, at {} Hz; {}\n",
             o.samples, o.depth, o.variants, o.rate,
             o.live ? "the daemon's Recording (a live run)" : "formats::Profile (dapprof record)");
  if (!o.live) {
    formats::Profile profile;
    const auto start = Clock::now();
    const long rss = run(
        o, [&](const model::Snapshot& s) { profile.add_snapshot(s, start); },
        [&] { return profile.samples().encoded_bytes(); });
    fmt::print("{} samples, {} distinct stacks, {} frames; samples encoded in {:.1f} MiB\n",
               profile.samples().size(), profile.stacks().size(), profile.frames().size(),
               static_cast<double>(profile.samples().encoded_bytes()) / (1 << 20));
    verdict(rss);
    return 0;
  }

  adapter::profiling::Recording recording("memory_bench", o.rate,
                                          protocol::kDefaultMaxPendingSamples);
  const auto per_batch = std::max<std::size_t>(1, static_cast<std::size_t>(o.rate / 10));
  std::size_t added = 0, wire_bytes = 0;
  const long rss = run(
      o,
      [&](const model::Snapshot& s) {
        recording.add(model::Snapshot(s));
        if (++added % per_batch == 0) {
          recording.flush(Clock::now(), 0);
          if (auto batch = recording.take_batch())
            wire_bytes += protocol::to_json(*batch).dump().size();
        }
      },
      [&] { return recording.snapshot_profile().samples().encoded_bytes(); });
  const auto t0 = Clock::now();
  const auto copy = recording.snapshot_profile();
  const double copy_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  fmt::print(
      "snapshot_profile(): {:.2f} ms for {} samples ({:.1f} MiB encoded, shared); RSS then "
      "{:.1f} MiB\n",
      copy_ms, copy.samples().size(),
      static_cast<double>(copy.samples().encoded_bytes()) / (1 << 20),
      mib(bench::rss_kib().value_or(0)));
  fmt::print("{:.1f} bytes per sample on the wire (batches encoded and discarded)\n",
             static_cast<double>(wire_bytes) / static_cast<double>(added));
  verdict(rss);
  return 0;
}
