#pragma once
// The sampler issue's table, printed again at the end of a run: each row as it was filed, and
// this run's figure beside it, for austin, dapprof nonblocking and dapprof's default mode
// (consistent, which replaced the blocking mode of the filing). Wake-ups on this machine have
// grown dearer since the filing, so the CPU rows also print each figure against austin's of the
// same run, which both pay alike.
#include <fmt/format.h>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sampler_peer.hpp"

namespace dapprof::bench {

// The columns: who ran, as sampler_bench names them.
inline constexpr std::array<const char*, 3> kColumns{"austin", "nonblocking", "consistent"};

// One interpreter at one stack depth: the figures of every rate, by who ran.
struct TargetFigures {
  std::string interp;
  int depth = 0;
  std::map<std::string, Figures> max, at_10k, at_1k;  // at 1 kHz: medians of the rounds
  std::map<std::string, double> slowdown;             // percent, median of the rounds
};

// The RSS of a recording after a while, and how it grew from 10 s in.
struct RssFigures {
  double mib = 0, growth_kib_s = 0;
};

class Summary {
 public:
  void add(TargetFigures t) { targets_.push_back(std::move(t)); }
  void add_rss(const std::string& who, RssFigures r) { rss_[who] = r; }
  void set_rss_seconds(double s) { rss_seconds_ = s; }

  void print() const {
    const TargetFigures* d3 = find("3.12", 3);
    const TargetFigures* d100 = find("3.12", 100);
    const TargetFigures* d1000 = find("3.12", 1000);
    const TargetFigures* s311 = find("debian", 100);
    if (!s311) s311 = find("3.11", 100);
    fmt::print(
        "\nThe issue's table: as filed -> this run (pyenv 3.12 unless named; 1 kHz figures "
        "are medians of the rounds; \"consistent\" is the default mode, which replaced the "
        "filing's blocking one)\n");
    fmt::print("  {:<46}", "");
    for (const char* c : kColumns) fmt::print(" {:>30}", c);
    fmt::print("\n");
    cpu_row("CPU µs/sample at 1 kHz, depth 3", d3, {22.9, 32.5, 63.2});
    cpu_row("CPU µs/sample at 1 kHz, depth 100", d100, {73.2, 43.1, 75.8});
    cpu_row("CPU µs/sample at 1 kHz, depth 1000", d1000, {692, 144, 179});
    ratio_row("  the same / austin's, depth 3", d3, {22.9, 32.5, 63.2});
    ratio_row("  the same / austin's, depth 100", d100, {73.2, 43.1, 75.8});
    ratio_row("  the same / austin's, depth 1000", d1000, {692, 144, 179});
    rate_row("max samples/s on one core, depth 3", d3, {"273,700 (99%)", "12,400 (40%)", "8,900"});
    rate_row("max samples/s, depth 100", d100, {"17,000", "11,100 (46%)", "8,100"});
    row("achieved / asked at 10 kHz, depth 100", {"0.57", "0.99", "0.98"}, [&](const char* who) {
      const Figures* f = d100 ? get(d100->at_10k, who) : nullptr;
      return f ? fmt::format("{:.2f}", f->samples_per_s / f->asked) : std::string("n/a");
    });
    if (const Figures* sleep = d100 ? get(d100->at_10k, "sleep") : nullptr)
      fmt::print("  {:<46} {:.2f}: what a loop that only sleeps to each tick reached\n",
                 "  the same, this machine's ceiling", sleep->samples_per_s / sleep->asked);
    slowdown_row("slowdown at 1 kHz, attach, 3.12 depth 100", d100, {"±0.5%", "±1%", "+6.6%"});
    slowdown_row("slowdown at 1 kHz, attach, 3.11 depth 100", s311, {"+0.4%", "±0", "+9.8%"});
    row("system calls per sample at 1 kHz, depth 3", {"8", "16", "27"}, [&](const char* who) {
      const Figures* f = d3 ? get(d3->at_1k, who) : nullptr;
      return f && f->syscalls_per_sample > 0 ? fmt::format("{:.1f}", f->syscalls_per_sample)
                                             : std::string("n/a");
    });
    if (rss_seconds_ > 0)
      row(fmt::format("RSS of record after {:.0f} s at 1 kHz, depth 100", rss_seconds_),
          {"1.8 MB flat", "9.3 MB +24 kB/s", "9.3 MB +24 kB/s"}, [&](const char* who) {
            const auto it = rss_.find(who);
            if (it == rss_.end()) return std::string("n/a");
            return fmt::format("{:.1f} MB {:+.1f} kB/s", it->second.mib, it->second.growth_kib_s);
          });
    fmt::print("  (program slowdown through debugpy, 100 Hz / 1 kHz: bench/live prints it)\n");
  }

 private:
  const TargetFigures* find(const std::string& interp, int depth) const {
    for (const auto& t : targets_)
      if (t.depth == depth && t.interp.find(interp) != std::string::npos) return &t;
    return nullptr;
  }
  static const Figures* get(const std::map<std::string, Figures>& m, const std::string& who) {
    const auto it = m.find(who);
    return it == m.end() ? nullptr : &it->second;
  }
  template <class Now>
  static void row(const std::string& label, const std::array<std::string, 3>& filed, Now now) {
    fmt::print("  {:<46}", label);
    for (std::size_t i = 0; i < kColumns.size(); ++i)
      fmt::print(" {:>30}", fmt::format("{} -> {}", filed[i], now(kColumns[i])));
    fmt::print("\n");
  }
  static void cpu_row(const std::string& label, const TargetFigures* t,
                      const std::array<double, 3>& filed) {
    row(label,
        {fmt::format("{:g}", filed[0]), fmt::format("{:g}", filed[1]),
         fmt::format("{:g}", filed[2])},
        [&](const char* who) {
          const Figures* f = t ? get(t->at_1k, who) : nullptr;
          return f ? fmt::format("{:.1f}", f->cpu_us_per_sample) : std::string("n/a");
        });
  }
  static void ratio_row(const std::string& label, const TargetFigures* t,
                        const std::array<double, 3>& filed) {
    const Figures* austin = t ? get(t->at_1k, "austin") : nullptr;
    row(label,
        {"1", fmt::format("{:.2f}", filed[1] / filed[0]),
         fmt::format("{:.2f}", filed[2] / filed[0])},
        [&](const char* who) {
          const Figures* f = t ? get(t->at_1k, who) : nullptr;
          return f && austin && austin->cpu_us_per_sample > 0
                     ? fmt::format("{:.2f}", f->cpu_us_per_sample / austin->cpu_us_per_sample)
                     : std::string("n/a");
        });
  }
  static void rate_row(const std::string& label, const TargetFigures* t,
                       const std::array<std::string, 3>& filed) {
    row(label, filed, [&](const char* who) {
      const Figures* f = t ? get(t->max, who) : nullptr;
      return f ? fmt::format("{:.0f} ({:.0f}%)", f->samples_per_s, f->core_percent)
               : std::string("n/a");
    });
  }
  static void slowdown_row(const std::string& label, const TargetFigures* t,
                           const std::array<std::string, 3>& filed) {
    row(label, filed, [&](const char* who) {
      if (!t || !t->slowdown.contains(who)) return std::string("n/a");
      return fmt::format("{:+.1f}%", t->slowdown.at(who));
    });
  }

  std::vector<TargetFigures> targets_;
  std::map<std::string, RssFigures> rss_;
  double rss_seconds_ = 0;
};

}  // namespace dapprof::bench
