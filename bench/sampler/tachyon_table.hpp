#pragma once
// dapprof beside CPython 3.15's own sampler (tachyon_peer.hpp) on one target: CPU per sample at
// 1 kHz and the rate as fast as each goes, for each mode against its counterpart (dapprof
// nonblocking against tachyon's default, which reads without stopping the program; dapprof
// consistent against tachyon --blocking, which stops every thread for each sample). The issue's
// goal: every dapprof row at most 1.0x tachyon's CPU per sample and at least 1.0x its rate.
//
// This machine is shared and noisy, so the runs are interleaved in rounds (the order turned each
// round), the ratios are taken within a round, side by side, and the median of the rounds is what
// is printed.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../common/harness.hpp"
#include "dapprof_runs.hpp"
#include "tachyon_peer.hpp"
#include "target.hpp"

namespace dapprof::bench {

// One row of the table: a depth and a mode, medians of the rounds.
struct TachyonRow {
  std::string interp;
  int depth = 0;
  std::string mode;  // "nonblocking" or "consistent" (dapprof's names)
  std::optional<double> dapprof_cpu, tachyon_cpu, cpu_ratio;     // µs per sample at 1 kHz
  std::optional<double> dapprof_rate, tachyon_rate, rate_ratio;  // samples/s flat out
  std::vector<double> cpu_ratios, rate_ratios;  // each round's, printed beside their median
  // Nonblocking only: its stack reader alone flat out (Tachyon::unwinder), reading every frame
  // (as dapprof does, writing nothing into the program) and with its frame cache.
  std::optional<double> reader_rate, cached_reader_rate, reader_ratio;
  std::vector<double> reader_ratios;
};

namespace tachyon_detail {

inline constexpr double kFlatOut = 1'000'000;

inline std::optional<double> median_of(const std::vector<double>& v) {
  return v.empty() ? std::nullopt : std::optional(median(v));
}

inline std::string shown(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("n/a");
}

// " (rounds 0.95, 1.02)": a median's values, which tell how far one noisy round moved it.
inline std::string each(const std::vector<double>& v) {
  if (v.size() < 2) return "";
  return fmt::format(" (rounds {:.2f})", fmt::join(v, ", "));
}

}  // namespace tachyon_detail

// The rows of `interp` at `depth`: `rounds` rounds of `seconds` per run. Empty, with the reason
// printed, when tachyon cannot read this target.
inline std::vector<TachyonRow> tachyon_rows(Tachyon& tachyon, const Interpreter& interp, int depth,
                                            double seconds, int rounds) {
  using namespace tachyon_detail;
  if (const auto why = tachyon.enter(interp.root); !why.empty()) {
    fmt::print("  tachyon: not run beside {} ({})\n", interp.label, why);
    return {};
  }
  Target t(interp, depth, 0);
  if (t.pid <= 0) {
    fmt::print("  tachyon: {} at depth {} did not start\n", interp.label, depth);
    return {};
  }
  std::vector<std::string> modes{"nonblocking"};
  if (tachyon.has_blocking(interp.root)) modes.push_back("consistent");
  struct Job {
    bool dapprof;
    std::string mode;
    double rate;
  };
  std::vector<Job> jobs;
  // tachyon's run first: a target it cannot read is then known before anything else has run.
  for (const auto& mode : modes)
    for (double rate : {1000.0, kFlatOut})
      for (bool d : {false, true}) jobs.push_back({d, mode, rate});
  // Every figure of a round, by "dapprof|tachyon mode rate".
  std::vector<std::map<std::string, Figures>> got(static_cast<std::size_t>(rounds));
  const auto key = [](bool d, const std::string& mode, double rate) {
    return fmt::format("{} {} {:.0f}", d ? "dapprof" : "tachyon", mode, rate);
  };
  bool read_once = false;  // whether tachyon has read this target yet
  for (std::size_t r = 0; r < got.size(); ++r) {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const Job& j = jobs[(i + r) % jobs.size()];
      std::string why;
      const auto f = j.dapprof ? run_dapprof(t.pid, j.rate, j.mode == "nonblocking", seconds)
                               : tachyon.measure(interp.root, t.pid, j.rate, j.mode == "consistent",
                                                 seconds, &why);
      if (f) {
        got[r][key(j.dapprof, j.mode, j.rate)] = *f;
        read_once = read_once || !j.dapprof;
      } else if (!j.dapprof) {
        // What it printed says why; if it never read this target (one of another version: it
        // refuses to attach), the rest would fail alike.
        fmt::print("  tachyon: {}\n", why);
        if (!read_once) return {};
      }
    }
    for (const bool cache : {false, true}) {
      std::string why;
      if (const auto f = tachyon.unwinder(interp.root, t.pid, seconds, cache, &why)) {
        got[r][cache ? "reader cached" : "reader"] = *f;
      } else {
        fmt::print("  tachyon's reader alone: {}\n", why);
      }
    }
  }
  std::vector<TachyonRow> rows;
  for (const auto& mode : modes) {
    TachyonRow row;
    row.interp = interp.label;
    row.depth = depth;
    row.mode = mode;
    std::vector<double> dc, tc, cr, dr, tr, rr;
    for (const auto& g : got) {
      const auto d1 = g.find(key(true, mode, 1000)), t1 = g.find(key(false, mode, 1000));
      const auto dm = g.find(key(true, mode, kFlatOut)), tm = g.find(key(false, mode, kFlatOut));
      if (d1 != g.end()) dc.push_back(d1->second.cpu_us_per_sample);
      if (t1 != g.end()) tc.push_back(t1->second.cpu_us_per_sample);
      if (d1 != g.end() && t1 != g.end() && t1->second.cpu_us_per_sample > 0)
        cr.push_back(d1->second.cpu_us_per_sample / t1->second.cpu_us_per_sample);
      if (dm != g.end()) dr.push_back(dm->second.samples_per_s);
      if (tm != g.end()) tr.push_back(tm->second.samples_per_s);
      if (dm != g.end() && tm != g.end() && tm->second.samples_per_s > 0)
        rr.push_back(dm->second.samples_per_s / tm->second.samples_per_s);
    }
    row.dapprof_cpu = median_of(dc);
    row.tachyon_cpu = median_of(tc);
    row.cpu_ratio = median_of(cr);
    row.dapprof_rate = median_of(dr);
    row.tachyon_rate = median_of(tr);
    row.rate_ratio = median_of(rr);
    row.cpu_ratios = cr;
    row.rate_ratios = rr;
    if (mode == "nonblocking") {
      std::vector<double> ur, cur, urr;
      for (const auto& g : got) {
        const auto dm = g.find(key(true, mode, kFlatOut));
        const auto u = g.find("reader"), cu = g.find("reader cached");
        if (u != g.end()) ur.push_back(u->second.samples_per_s);
        if (cu != g.end()) cur.push_back(cu->second.samples_per_s);
        if (dm != g.end() && u != g.end() && u->second.samples_per_s > 0)
          urr.push_back(dm->second.samples_per_s / u->second.samples_per_s);
      }
      row.reader_rate = median_of(ur);
      row.cached_reader_rate = median_of(cur);
      row.reader_ratio = median_of(urr);
      row.reader_ratios = urr;
    }
    rows.push_back(row);
  }
  return rows;
}

// The table of `rows`, after a heading naming the rounds.
inline void print_tachyon_table(const std::vector<TachyonRow>& rows, int rounds) {
  using namespace tachyon_detail;
  if (rows.empty()) return;
  fmt::print(
      "\ndapprof beside CPython 3.15's sampler (tachyon), side by side in this run, medians of {} "
      "interleaved rounds (ratios taken within a round); nonblocking is tachyon's default, "
      "consistent is beside tachyon --blocking; goal: CPU ratio <= 1.0 and rate ratio >= 1.0\n",
      rounds);
  for (const auto& r : rows) {
    const auto mark = [](const std::optional<double>& ratio, bool at_most) {
      if (!ratio) return "";
      return (at_most ? *ratio <= 1.0 : *ratio >= 1.0) ? " ok" : " MISSED";
    };
    fmt::print(
        "  {} depth {:>4} / {:<11}: 1 kHz dapprof {:>6} µs/sample, tachyon {:>6} µs/sample, "
        "ratio {}{}{}; flat out dapprof {:>7}/s, tachyon {:>7}/s, ratio {}{}{}\n",
        r.interp, r.depth, r.mode, shown(r.dapprof_cpu, "{:.1f}"), shown(r.tachyon_cpu, "{:.1f}"),
        shown(r.cpu_ratio, "{:.2f}"), mark(r.cpu_ratio, true), each(r.cpu_ratios),
        shown(r.dapprof_rate, "{:.0f}"), shown(r.tachyon_rate, "{:.0f}"),
        shown(r.rate_ratio, "{:.2f}"), mark(r.rate_ratio, false), each(r.rate_ratios));
    if (r.reader_rate || r.cached_reader_rate)
      fmt::print(
          "  {} depth {:>4} / {:<11}  its stack reader alone flat out: reading every frame "
          "{:>7}/s (dapprof's sampler {}x{}), with its frame cache {:>7}/s\n",
          r.interp, r.depth, "", shown(r.reader_rate, "{:.0f}"), shown(r.reader_ratio, "{:.2f}"),
          each(r.reader_ratios), shown(r.cached_reader_rate, "{:.0f}"));
  }
  if (std::any_of(rows.begin(), rows.end(), [](const TachyonRow& r) { return r.reader_rate; }))
    fmt::print(
        "  (its frame cache writes the address of the top frame read into the program's thread "
        "state after each sample, so that the next sample reads only the frames pushed since; "
        "dapprof writes nothing into the program it profiles, and reads every frame)\n");
}

}  // namespace dapprof::bench
