// The text labels of frames and of the pseudo-frames above a stack's root, read back.
#include <charconv>
#include <regex>

#include "formats/readers/readers.hpp"

namespace dapprof::formats::readers {
namespace {

template <typename T>
std::optional<T> number(std::string_view s, int base = 10) {
  T value{};
  const auto* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, value, base);
  if (ec != std::errc{} || ptr != end || s.empty()) return std::nullopt;
  return value;
}

}  // namespace

Error malformed(std::string_view what) {
  return Error{std::string(what), ErrorCode::InvalidArgument};
}

model::Frame parse_frame_label(std::string_view label) {
  model::Frame frame;
  // The file is in the last parentheses: a function's name may hold " (" itself, a path rarely.
  const auto open = label.rfind(" (");
  if (label.size() < 4 || label.back() != ')' || open == std::string_view::npos || open == 0) {
    frame.function = std::string(label);
    return frame;
  }
  frame.function = std::string(label.substr(0, open));
  auto place = label.substr(open + 2, label.size() - open - 3);
  if (const auto colon = place.rfind(':'); colon != std::string_view::npos) {
    if (const auto line = number<int>(place.substr(colon + 1))) {
      frame.line = *line;
      place = place.substr(0, colon);
    }
  }
  model::set_place(frame, std::string(place));
  return frame;
}

std::optional<RootLabel> parse_root_label(std::string_view label, RootLabel so_far) {
  // thread_frame: `thread (0x7f..)` or `thread (0x7f..) "name"`; py-spy spells the hex in
  // capitals. process_frame: `process 1234`; py-spy adds `:"command line"`.
  static const std::regex thread(R"re(thread \(0[xX]([0-9a-fA-F]+)\)(?: "(.*)")?)re");
  static const std::regex process(R"re(process (\d+)(?::"(.*)"|:.*)?)re");
  std::match_results<std::string_view::const_iterator> m;
  if (!so_far.thread_id && std::regex_match(label.begin(), label.end(), m, thread)) {
    so_far.thread_id = number<std::uint64_t>(std::string_view(&*m[1].first, m[1].length()), 16);
    if (m[2].matched) so_far.thread_name = m[2].str();
    return so_far;
  }
  if (!so_far.pid && !so_far.thread_id &&
      std::regex_match(label.begin(), label.end(), m, process)) {
    so_far.pid = number<pid_t>(std::string_view(&*m[1].first, m[1].length()));
    if (m[2].matched) so_far.command_line = m[2].str();
    return so_far;
  }
  return std::nullopt;
}

}  // namespace dapprof::formats::readers
