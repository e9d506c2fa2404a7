#include "app/cli/top_screen.hpp"

#include <fmt/format.h>

#include "formats/profile.hpp"
#include "formats/text.hpp"

namespace dapprof::app::cli {
namespace {

using formats::TopGrouping;
using formats::TopSort;

constexpr std::string_view kKeyHelp =
    "Keys: 1 %Own  2 %Total  3 OwnTime  4 TotalTime (sort)  L lines/functions  space/p pause  "
    "q quit";

std::string_view sort_name(TopSort sort) {
  switch (sort) {
    case TopSort::OwnShare:
      return "%Own";
    case TopSort::TotalShare:
      return "%Total";
    case TopSort::OwnTime:
      return "OwnTime";
    case TopSort::TotalTime:
      break;
  }
  return "TotalTime";
}

std::string state_line(const TopHeader& h, const TopView& v) {
  std::string state;
  switch (h.target) {
    case TargetState::Running:
      state = v.display == DisplayState::Paused ? "PAUSED (sampling goes on; space or p resumes)"
                                                : "Running";
      break;
    case TargetState::Exited:
      state = fmt::format("Process {} exited{}; the last table stays until q", h.pid,
                          h.target_note.empty() ? "" : " " + h.target_note);
      break;
    case TargetState::Failed:
      state = fmt::format("Sampling failed: {}; q quits", h.target_note);
      break;
  }
  return fmt::format("{}. Sorted by {}, by {}.", state, sort_name(v.sort),
                     v.grouping == TopGrouping::Line ? "line" : "function");
}

// The state line is for the live screen only: the plain table says how it ended on stderr.
std::vector<std::string> header_lines(const TopHeader& h, const formats::TopFrame& f,
                                      const TopView& v, bool live) {
  std::vector<std::string> lines;
  // The command last: on a narrow screen it is what gets cut.
  lines.push_back(fmt::format("dapprof top: pid {}{} '{}'", h.pid,
                              h.python_version.empty() ? "" : " (Python " + h.python_version + ")",
                              formats::valid_utf8(h.command)));
  lines.push_back(fmt::format(
      "Samples: {}  Errors: {}  Rate: {:g}/s  Threads: {}  GIL: {:.2f}%  Active: {:.2f}%  "
      "Elapsed: {:.1f}s",
      f.samples, h.errors, h.rate_hz, h.threads ? std::to_string(*h.threads) : "-",
      100 * f.gil_share, 100 * f.active_share, std::chrono::duration<double>(h.elapsed).count()));
  if (live) lines.push_back(state_line(h, v));
  if (!h.warning.empty()) lines.push_back("Warning: " + formats::valid_utf8(h.warning));
  lines.emplace_back();
  lines.push_back(
      fmt::format("{:>7} {:>7} {:>9} {:>10}  {}", "%Own", "%Total", "OwnTime", "TotalTime",
                  v.grouping == TopGrouping::Line ? "Function (file:line)" : "Function (file)"));
  return lines;
}

std::string row_line(const formats::TopRow& r) {
  return fmt::format("{:6.2f}% {:6.2f}% {:>9} {:>10}  {}", 100 * r.own_share, 100 * r.total_share,
                     fmt::format("{:.2f}s", r.own_seconds), fmt::format("{:.2f}s", r.total_seconds),
                     formats::valid_utf8(formats::frame_label(r.where)));
}

}  // namespace

std::vector<std::string> screen_lines(const TopHeader& header, const formats::TopFrame& frame,
                                      const TopView& view, std::size_t rows) {
  auto lines = header_lines(header, frame, view, true);
  if (rows <= lines.size() + 1) {  // too small for a table: the key help still shows
    lines.resize(rows > 0 ? rows - 1 : 0);
    lines.emplace_back(kKeyHelp);
    return lines;
  }
  const auto room = rows - lines.size() - 1;
  const auto table = frame.rows(view.grouping, view.sort);
  for (std::size_t i = 0; i < std::min(room, table.size()); ++i)
    lines.push_back(row_line(table[i]));
  lines.resize(rows - 1);
  lines.emplace_back(kKeyHelp);
  return lines;
}

std::vector<std::string> plain_lines(const TopHeader& header, const formats::TopFrame& frame,
                                     const TopView& view) {
  auto lines = header_lines(header, frame, view, false);
  for (const auto& r : frame.rows(view.grouping, view.sort)) lines.push_back(row_line(r));
  return lines;
}

}  // namespace dapprof::app::cli
