// Sampling a process pool: one sampler on pools of 1, 8 and 32 CPU-bound worker processes
// (tests/fixtures/pool_workers.py, multiprocessing.Pool), dapprof's sampler with `subprocesses`
// beside austin -C and CPython 3.15's sampler with --subprocesses: the CPU each spends per sample,
// the samples each worker got per second against the rate asked, and how CPU per sample moves from
// 1 worker to 32 (the goal: flat, 32/1 <= 1.2x).
//
//   pool_bench [--seconds S] [--rate HZ] [--workers N]... [--python PATH|LABEL]... [--all]
//              [--peer austin=PATH] [--peer tachyon=PYTHON3.15]
//
// austin reads the interpreters outside the Debian unstable root; tachyon (see tachyon_peer.hpp:
// run in the target's root through chroot, so it needs root) reads only its own version there.
// A peer that cannot run, or cannot read a target, is skipped with the reason.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../common/harness.hpp"
#include "pool_runs.hpp"
#include "tachyon_peer.hpp"

namespace {

namespace bench = dapprof::bench;

// CPU per sample by sampler and pool size, for the ratios at the end.
using Table = std::map<std::string, std::map<int, double>>;

void print_row(const std::string& who, int workers, double rate, const bench::PoolFigures& f) {
  fmt::print("  {:<34} {:>7} {:>10.0f}/s {:>9.1f}/s {:>6.2f} {:>7} {:>10.1f} µs\n", who, workers,
             f.samples_per_s, f.per_worker, f.per_worker / rate,
             fmt::format("{}/{}", f.workers_seen, workers), f.cpu_us_per_sample);
}

void pools_of(const bench::Interpreter& interp, const std::vector<int>& sizes, double rate,
              double seconds, const std::optional<std::string>& austin,
              std::optional<bench::Tachyon>& tachyon, Table& table) {
  fmt::print("\n{} ({}), {:.0f} Hz asked, {:.0f} s per run:\n", interp.label, interp.path, rate,
             seconds);
  fmt::print("  {:<34} {:>7} {:>12} {:>11} {:>6} {:>7} {:>13}\n", "", "workers", "samples",
             "per worker", "share", "seen", "CPU/sample");
  std::string tachyon_skip;
  if (tachyon) tachyon_skip = tachyon->enter(interp.root);
  const int whole = std::max(1, static_cast<int>(seconds + 0.5));
  for (const int n : sizes) {
    // Long enough for every sampler's runs; it is killed after them.
    const bench::Pool pool(interp, n, 30 + 4 * seconds);
    if (pool.pid <= 0) {
      fmt::print("  a pool of {} did not start\n", n);
      continue;
    }
    if (const auto f = bench::pool_dapprof(pool.pid, n, rate, seconds)) {
      const auto who = fmt::format("dapprof ({})", interp.label);
      print_row(who, n, rate, *f);
      table[who][n] = f->cpu_us_per_sample;
    }
    if (austin && interp.root.empty()) {
      if (const auto f = bench::pool_austin(*austin, pool.pid, n, rate, whole)) {
        const auto who = fmt::format("austin -C ({})", interp.label);
        print_row(who, n, rate, *f);
        table[who][n] = f->cpu_us_per_sample;
      }
    }
    if (tachyon && tachyon_skip.empty()) {
      std::string why;
      if (const auto f =
              bench::pool_tachyon(*tachyon, interp.root, pool.pid, n, rate, whole, &why)) {
        const auto who = fmt::format("tachyon --subprocesses ({})", interp.label);
        print_row(who, n, rate, *f);
        table[who][n] = f->cpu_us_per_sample;
      } else {
        fmt::print("  tachyon: {}\n", why);
      }
    }
  }
  if (tachyon && !tachyon_skip.empty()) fmt::print("  tachyon skipped: {}\n", tachyon_skip);
}

void print_ratios(const Table& table, const std::vector<int>& sizes) {
  if (sizes.size() < 2) return;
  const int first = sizes.front(), last = sizes.back();
  fmt::print("\nCPU per sample (µs) by pool size, and {} workers against {} [goal <= 1.2x]:\n",
             last, first);
  std::string header = fmt::format("  {:<40}", "");
  for (int n : sizes) header += fmt::format(" {:>8}", n);
  fmt::print("{} {:>8}\n", header, fmt::format("{}/{}", last, first));
  for (const auto& [who, by_size] : table) {
    std::string row = fmt::format("  {:<40}", who);
    for (int n : sizes) {
      const auto it = by_size.find(n);
      row +=
          it == by_size.end() ? fmt::format(" {:>8}", "n/a") : fmt::format(" {:>8.1f}", it->second);
    }
    const auto a = by_size.find(first), b = by_size.find(last);
    const bool both = a != by_size.end() && b != by_size.end() && a->second > 0;
    fmt::print("{} {:>8}\n", row, both ? fmt::format("{:.2f}x", b->second / a->second) : "n/a");
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"CPU per sample and rate per worker of samplers on process pools"};
  double seconds = 4, rate = 100;
  bool all = false;
  std::vector<int> sizes{1, 8, 32};
  std::vector<std::string> pythons, peers;
  app.add_option("--seconds", seconds, "time per run");
  app.add_option("--rate", rate, "samples per second asked of each process");
  app.add_option("--workers", sizes, "pool sizes, in order (the ratio is last/first)");
  app.add_option("--python", pythons, "interpreters, by path or label (default: see --all)");
  app.add_flag("--all", all, "every interpreter the tests find");
  app.add_option("--peer", peers, "austin=PATH, or tachyon=PYTHON3.15 (inside the target's root)");
  CLI11_PARSE(app, argc, argv);

  std::optional<std::string> austin;
  std::optional<bench::Tachyon> tachyon;
  for (const auto& p : peers) {
    if (p.starts_with("austin=")) {
      austin = p.substr(7);
    } else if (p.starts_with("tachyon=")) {
      tachyon.emplace(p.substr(8));
    } else {
      fmt::print(stderr, "unknown peer {} (known: austin=PATH, tachyon=PYTHON3.15)\n", p);
      return 2;
    }
  }
  std::vector<bench::Interpreter> interps;
  for (const auto& i : bench::interpreters(DAPPROF_SOURCE_DIR, true)) {
    const bool asked = std::find_if(pythons.begin(), pythons.end(), [&](const auto& p) {
                         return p == i.label || p == i.path;
                       }) != pythons.end();
    // By default a shared and a static libpython outside the root, and 3.15 inside it.
    const bool picked =
        i.label.starts_with("pyenv-3.12") || i.label == "debian-3.11" || i.label == "sid-3.15";
    if (pythons.empty() ? (all || picked) : asked) interps.push_back(i);
  }
  if (!austin) fmt::print("austin: not given (--peer austin=PATH); its rows are left out\n");
  if (!tachyon)
    fmt::print("tachyon: not given (--peer tachyon=PYTHON3.15); its rows are left out\n");
  fmt::print(
      "CPU is the sampler's (dapprof: its sampling thread; austin: its process; tachyon: its "
      "processes, a 1 s run's subtracted); samples are of every process of the pool; per worker: "
      "samples/s of a worker spinning, share: of the rate asked.\n");
  Table table;
  for (const auto& interp : interps) pools_of(interp, sizes, rate, seconds, austin, tachyon, table);
  print_ratios(table, sizes);
  return 0;
}
