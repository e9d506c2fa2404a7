// Collapsed ("folded") stacks: "root;...;leaf count" per line, as flamegraph.pl's stackcollapse
// scripts, inferno, py-spy's raw output and dapprof's write them. Lines carry no time: samples are
// laid out one interval apart in the file's order.
#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "formats/readers/readers.hpp"

namespace dapprof::formats::readers {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::optional<double> count_of(std::string_view s) {
  double value = 0;
  const auto* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, value);
  if (ec != std::errc{} || ptr != end || !std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

}  // namespace

Result<Profile> read_collapsed(std::string_view text) {
  Profile profile;
  ProfileFiller filler(profile);
  std::int64_t time_us = 0;
  std::size_t line_number = 0;
  std::vector<model::Frame> stack;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const auto line = trim(text.substr(0, newline));
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    const auto space = line.find_last_of(" \t");
    const auto count =
        space == std::string_view::npos ? std::nullopt : count_of(line.substr(space + 1));
    if (!count) {
      return malformed(fmt::format(
          "line {} is not a collapsed stack (\"frame;frame;frame COUNT\", the count last): {:.80}",
          line_number, line));
    }
    if (*count == 0) continue;
    stack.clear();
    auto frames = trim(line.substr(0, space));
    while (!frames.empty()) {
      const auto semicolon = frames.find(';');
      const auto label = frames.substr(0, semicolon);
      if (!label.empty()) stack.push_back(parse_frame_label(label));
      frames =
          semicolon == std::string_view::npos ? std::string_view{} : frames.substr(semicolon + 1);
    }
    if (stack.empty())
      return malformed(fmt::format("line {} has a count but no frames", line_number));
    filler.add(stack, time_us, *count);
    time_us += static_cast<std::int64_t>(std::llround(*count * profile.interval_us));
  }
  if (profile.samples().empty())
    return malformed("it holds no stacks (no \"frame;frame;frame COUNT\" line)");
  profile.duration_us = time_us;
  return profile;
}

}  // namespace dapprof::formats::readers
