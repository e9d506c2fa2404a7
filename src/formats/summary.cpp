#include "formats/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_set>

#include "formats/text.hpp"

namespace dapprof::formats {

Summary summarize(const Profile& profile) {
  // Per frame, the function it belongs to.
  std::map<std::pair<std::string, std::string>, std::size_t> function_ids;
  std::vector<std::size_t> function_of;
  Summary summary;
  for (const auto& f : profile.frames()) {
    // A task is an entry of its own, in "<task>": where its samples ran and waited in all.
    std::string place = f.task() || f.gc() ? model::frame_place(f) : f.file.str();
    auto [it, added] =
        function_ids.try_emplace({f.function.str(), place}, summary.functions.size());
    if (added) summary.functions.push_back(FunctionStats{f.function, std::move(place), 0, 0});
    function_of.push_back(it->second);
  }
  // Per stack: its innermost function and the set of functions on it, computed once.
  std::vector<std::vector<std::size_t>> on_stack(profile.stacks().size());
  for (std::size_t i = 0; i < profile.stacks().size(); ++i) {
    std::unordered_set<std::size_t> seen;
    for (const auto frame : profile.stacks()[i]) {
      if (seen.insert(function_of[frame]).second) on_stack[i].push_back(function_of[frame]);
    }
  }
  for (const auto& s : profile.samples()) {
    summary.samples += s.weight;
    const auto& stack = profile.stacks()[s.stack];
    if (stack.empty()) continue;
    summary.functions[function_of[stack.front()]].self += s.weight;
    for (const auto fn : on_stack[s.stack]) summary.functions[fn].total += s.weight;
  }
  std::erase_if(summary.functions, [](const FunctionStats& f) { return f.total == 0; });
  std::stable_sort(summary.functions.begin(), summary.functions.end(),
                   [](const FunctionStats& a, const FunctionStats& b) {
                     return a.self != b.self ? a.self > b.self : a.total > b.total;
                   });
  return summary;
}

std::string format_summary(const Summary& summary, std::size_t limit) {
  if (summary.samples <= 0) return "No samples.\n";
  const auto pct = [&](double n) { return 100.0 * n / summary.samples; };
  const auto row = [&](const FunctionStats& f) {
    const std::string where = f.file.empty() ? "" : fmt::format(" ({})", f.file);
    return fmt::format("  {:6.2f}% {:6.2f}% {:>8} {:>8}  {}{}\n", pct(f.self), pct(f.total),
                       std::llround(f.self), std::llround(f.total), valid_utf8(f.function),
                       valid_utf8(where));
  };
  const std::string header = fmt::format("  {:>7} {:>7} {:>8} {:>8}  {}\n", "%Own", "%Total",
                                         "OwnSmpl", "TotSmpl", "Function (file)");
  std::string out = fmt::format("Top functions by own samples (of {} thread samples):\n",
                                std::llround(summary.samples));
  out += header;
  auto by_self = summary.functions;
  for (std::size_t i = 0; i < std::min(limit, by_self.size()); ++i) out += row(by_self[i]);
  auto by_total = summary.functions;
  std::stable_sort(
      by_total.begin(), by_total.end(),
      [](const FunctionStats& a, const FunctionStats& b) { return a.total > b.total; });
  out += "Top functions by total samples:\n";
  out += header;
  for (std::size_t i = 0; i < std::min(limit, by_total.size()); ++i) out += row(by_total[i]);
  return out;
}

}  // namespace dapprof::formats
