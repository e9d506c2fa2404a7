// Sampling cost, side by side: for Python targets 3, 100 and 1000 frames deep, dapprof's
// sampler (consistent, the default, and nonblocking) as fast as it goes and at 100 kHz, 10 kHz
// and 1 kHz asked, a loop making only the reads one sample needs, a loop only sleeping to each
// tick, and a peer profiler (austin) when one is given: rate achieved, CPU per sample, share of a
// core, reads and system calls per sample, how often a consistent read had to be retried or
// paused, and how much each slows the program at 1 kHz. Then the RSS of `dapprof record` (and the
// peer) over a minute, and the sampler issue's table: each row as filed beside this run's figure.
// With CPython 3.15's own sampler as a peer (tachyon=), a last table: dapprof against it on the
// targets it can read (its own version), CPU per sample at 1 kHz and rate flat out, by mode.
// Per target also: CPU per sample flat out with record --opcodes against without (same run).
//
//   sampler_bench [--seconds S] [--rounds R] [--python PATH|LABEL]... [--all] [--depth N]...
//                 [--peer austin=PATH] [--peer tachyon=PYTHON3.15] [--rss-seconds S]
//                 [--dapprof PATH]
//
// tachyon=PYTHON3.15 is CPython 3.15's interpreter as seen inside the target's root (e.g.
// /usr/bin/python3.15 of the Debian unstable root: --python sid-3.15); it runs there through
// chroot, so that peer needs root (it is skipped, saying why, without).
//
// Every figure of a target comes from the same run, interleaved, and the ratios are against
// that run's baseline (the program alone, the reads-only loop, the peer). At 1 kHz, R rounds of
// (dapprof consistent, dapprof nonblocking, austin), each between runs of the program alone;
// the rows and ratios there are the median of the rounds.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../common/harness.hpp"
#include "dapprof_runs.hpp"
#include "rss_run.hpp"
#include "sampler_peer.hpp"
#include "sleep_only.hpp"
#include "summary.hpp"
#include "tachyon_table.hpp"
#include "target.hpp"

namespace {

namespace bench = dapprof::bench;

using bench::Child;
using bench::Progress;
using bench::reads_only;
using bench::run_dapprof;
using bench::Target;
using bench::work_rate;

// The rates of the table: as fast as it goes (1 µs asked), 100 kHz and 10 kHz; 1 kHz, the rate a
// person profiles at, is measured in rounds instead.
constexpr double kMax = 1'000'000;
constexpr double kRates[] = {kMax, 100'000, 10'000};

void print_row(const std::string& who, const bench::Figures& f) {
  std::string extra;
  if (f.retried || f.paused)
    extra = fmt::format("  retried {:.2f}%  paused {:.2f}%", f.retried, f.paused);
  if (f.failed > 0) extra += fmt::format("  failed {:.2f}%", f.failed);
  if (f.plan_regions) extra = fmt::format("  ({} regions, {} bytes)", f.plan_regions, f.plan_bytes);
  const bool paced = f.asked > 0 && f.asked < kMax;
  fmt::print("  {:<22} {:>9} {:>9.0f}/s {:>6} {:>8.1f} µs {:>6.1f}% {:>6.1f} {:>6} {:>7.1f}{}\n",
             who, paced ? fmt::format("{:.0f} kHz", f.asked / 1000) : "max", f.samples_per_s,
             paced ? fmt::format("{:.2f}", f.samples_per_s / f.asked) : "", f.cpu_us_per_sample,
             f.core_percent, f.reads_per_sample,
             f.syscalls_per_sample > 0 ? fmt::format("{:.1f}", f.syscalls_per_sample) : "n/a",
             f.frames, extra);
}

// The row of "consistent", "nonblocking" or "austin".
std::string row_label(const std::string& who) {
  return who == "consistent"    ? "dapprof (consistent)"
         : who == "nonblocking" ? "dapprof nonblocking"
                                : who;
}

// The row of a loop that only sleeps to each tick: the ceiling of a sleeping sampler's rate
// here, and what its wakes alone cost.
bench::Figures sleep_row(double rate, double seconds) {
  const auto s = bench::sleep_only(rate, seconds);
  print_row("sleeps only (loop)", s.figures);
  fmt::print("  {:<22} wakes came {:.0f} µs (median) and {:.0f} µs (p99) after the time asked\n",
             "", s.late_p50_us, s.late_p99_us);
  return s.figures;
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
  m.failed = of(&bench::Figures::failed);
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

bench::TargetFigures bench_target(const bench::Interpreter& interp, int depth, double seconds,
                                  int rounds_asked, const std::optional<std::string>& austin) {
  bench::TargetFigures out;
  out.interp = interp.label;
  out.depth = depth;
  Target t(interp, depth, 0);
  if (t.pid <= 0) {
    fmt::print("{}: target did not start\n", interp.label);
    return out;
  }
  const pid_t target = t.pid;
  Child& launcher = t.launcher;
  fmt::print("\n{} ({}), stack depth {}:\n", interp.label, interp.path, depth);
  fmt::print("  {:<22} {:>9} {:>11} {:>6} {:>11} {:>7} {:>6} {:>6} {:>7}\n", "", "asked",
             "achieved", "ratio", "CPU/sample", "core", "reads", "calls", "frames");
  std::map<std::string, bench::Figures> at_100k;
  const bool peer = austin && interp.root.empty();  // a peer outside the root cannot read it
  for (double rate : kRates) {
    auto& kept = rate == kMax ? out.max : rate == 10'000 ? out.at_10k : at_100k;
    for (bool nonblocking : {false, true}) {
      const auto f = run_dapprof(target, rate, nonblocking, seconds);
      if (!f) continue;
      const char* who = nonblocking ? "nonblocking" : "consistent";
      print_row(row_label(who), *f);
      kept[who] = *f;
    }
    if (peer) {
      if (const auto f = bench::run_austin(*austin, target, rate, seconds)) {
        print_row("austin", *f);
        kept["austin"] = *f;
      }
    }
    if (rate == 10'000) kept["sleep"] = sleep_row(rate, seconds);
  }
  const auto fast = [&](const char* who) {
    const auto it = at_100k.find(who);
    return it == at_100k.end() ? nullptr : &it->second;
  };
  const bench::Figures* dapprof_100k = fast("consistent");
  const bench::Figures* austin_100k = fast("austin");
  Progress progress(launcher);
  const auto rounds =
      one_khz_rounds(target, progress, peer ? austin : std::nullopt, seconds, rounds_asked);
  for (const std::string who : {"consistent", "nonblocking", "austin"}) {
    if (const auto m = median_run(rounds, who)) {
      print_row(row_label(who), *m);
      out.at_1k[who] = *m;
    }
  }
  out.at_1k["sleep"] = sleep_row(1000, seconds);
  const auto reads = reads_only(target, seconds);
  if (reads) print_row("reads only (loop)", *reads);

  // record --opcodes, and the default (which reads the collector's state for its frame) against
  // --no-gc, flat out (where CPU per sample is the sampler's alone, not its wakes'), in
  // interleaved rounds, the order turned each round.
  std::vector<double> opcode_ratios, gc_ratios;
  std::optional<bench::Figures> plain_row, opcodes_row, no_gc_row;
  constexpr std::size_t kPlain = 0, kOpcodes = 1, kNoGc = 2;
  for (int r = 0; r < rounds_asked; ++r) {
    std::array<std::optional<bench::Figures>, 3> got;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const std::size_t run = (i + static_cast<std::size_t>(r)) % got.size();
      got[run] = run_dapprof(target, kMax, false, seconds, nullptr, nullptr, run == kOpcodes,
                             run != kNoGc);
    }
    const auto& plain = got[kPlain];
    if (!plain || plain->cpu_us_per_sample <= 0) continue;
    plain_row = plain;
    if (const auto& with = got[kOpcodes]) {
      opcode_ratios.push_back(with->cpu_us_per_sample / plain->cpu_us_per_sample);
      opcodes_row = with;
    }
    if (const auto& without = got[kNoGc]; without && without->cpu_us_per_sample > 0) {
      gc_ratios.push_back(plain->cpu_us_per_sample / without->cpu_us_per_sample);
      no_gc_row = without;
    }
  }
  if (plain_row) print_row("consistent, last round", *plain_row);
  if (opcodes_row) print_row("consistent --opcodes", *opcodes_row);
  if (no_gc_row) print_row("consistent --no-gc", *no_gc_row);

  fmt::print("  ratios (this run; 1 kHz: the median of {} interleaved rounds):\n", rounds.size());
  fmt::print("    CPU/sample flat out, --opcodes / without: {}  [goal <= 1.10]\n",
             over_rounds(opcode_ratios, "{:.2f}"));
  fmt::print("    CPU/sample flat out, GC frames (the default) / --no-gc: {}  [goal <= 1.10]\n",
             over_rounds(gc_ratios, "{:.2f}"));
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
  if (dapprof_100k && reads) {
    fmt::print(
        // What the sampler could reach is the lower of the rate asked and the reads' own rate:
        // a loop doing only the reads is never held to a schedule.
        "    rate at 100 kHz asked / min(100 kHz, reads-only loop): {}  [goal >= 0.90; "
        ">= 30,000/s at depth 100]\n",
        ratio(dapprof_100k->samples_per_s, std::min(100000.0, reads->samples_per_s)));
  }
  if (austin_100k && dapprof_100k) {
    fmt::print("    rate at 100 kHz asked, dapprof / austin: {}\n",
               ratio(dapprof_100k->samples_per_s, austin_100k->samples_per_s));
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
    if (v.empty()) continue;
    fmt::print("    program slowdown at 1 kHz, {}: {}{}\n", who, over_rounds(v, "{:+.1f}%"),
               who == "consistent" ? "  [goal <= 1%]" : "");
    out.slowdown[who] = bench::median(v);
  }
  return out;
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
  double rss_seconds = 60;
  std::string dapprof = DAPPROF_BINARY;
  app.add_option("--idle-threads", idle, "idle threads beside the busy one in the last test");
  app.add_option("--seconds", seconds, "time per configuration");
  app.add_option("--rounds", rounds, "interleaved rounds of the 1 kHz comparisons (median printed)")
      ->check(CLI::Range(1, 99));
  app.add_option("--python", pythons,
                 "interpreter(s) to use, by path or by tests/support/pythons.py label (default: "
                 "pyenv 3.12, Debian's 3.11, and 3.14 and 3.15 of the Debian unstable root)");
  app.add_flag("--all", all, "every interpreter tests/support/pythons.py finds");
  app.add_option("--depth", depths, "stack depths to measure");
  app.add_option("--peer", peers,
                 "a peer profiler to measure beside: austin=PATH, or tachyon=PYTHON3.15 (CPython "
                 "3.15's sampler, that interpreter inside the target's root; needs root)");
  app.add_option("--rss-seconds", rss_seconds,
                 "how long `dapprof record` (and austin) run while their RSS is read; 0: not")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--dapprof", dapprof, "the dapprof binary whose `record` is measured");
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
  if (!pythons.empty()) {
    // A label keeps what the path alone would lose: the root its interpreter runs in.
    const auto known = bench::interpreters(DAPPROF_SOURCE_DIR, true);
    for (const auto& p : pythons) {
      const auto it =
          std::find_if(known.begin(), known.end(), [&](const auto& i) { return i.label == p; });
      interps.push_back(it == known.end() ? bench::Interpreter{p, p, ""} : *it);
    }
  }
  if (interps.empty()) interps = bench::interpreters(DAPPROF_SOURCE_DIR, all);

  fmt::print(
      "CPU is the sampler's (dapprof: its sampling thread; austin: its process; tachyon: its "
      "process, its start-up taken out), user + system; reads = process_vm_readv calls per sample; "
      "retried/paused: consistent reads "
      "that found a stack moving and read again / paused the threads (the torn reads a "
      "consistent read caught); failed: reads whose stack could not be walked (the torn reads "
      "that show in nonblocking mode; one that walks is not caught there); calls = every "
      "system call per sample, as the kernel counts them.\n");
  if (const bench::SyscallCounter probe; !probe.error().empty())
    fmt::print("System calls are not counted (the calls column says n/a): {}\n", probe.error());
  bench::Summary summary;
  std::vector<bench::TachyonRow> beside_tachyon;
  for (const auto& interp : interps) {
    for (int depth : depths) {
      summary.add(bench_target(interp, depth, seconds, rounds, austin));
      if (!tachyon) continue;
      const auto rows = bench::tachyon_rows(*tachyon, interp, depth, seconds, rounds);
      beside_tachyon.insert(beside_tachyon.end(), rows.begin(), rows.end());
    }
    if (idle > 0) idle_threads(interp, idle, seconds);
  }
  if (rss_seconds > 0) {
    // On the first interpreter a peer can read too (one outside the Debian unstable root).
    const auto it =
        std::find_if(interps.begin(), interps.end(), [](const auto& i) { return i.root.empty(); });
    Target t(it == interps.end() ? interps.front() : *it, 100, 0);
    if (t.pid > 0) {
      fmt::print("\nRSS of `dapprof record --pid` and austin, 1 kHz, {:.0f} s, depth 100:\n",
                 rss_seconds);
      for (const auto& [who, r] : bench::rss_run(dapprof, austin, t.pid, rss_seconds)) {
        fmt::print("  {:<22} {:6.1f} MB at the end, {:+.1f} kB/s from 10 s in\n", row_label(who),
                   r.mib, r.growth_kib_s);
        summary.add_rss(who, r);
      }
      summary.set_rss_seconds(rss_seconds);
    }
  }
  summary.print();
  bench::print_tachyon_table(beside_tachyon, rounds);
  return 0;
}
