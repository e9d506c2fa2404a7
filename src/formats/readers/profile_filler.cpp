#include <algorithm>

#include "formats/readers/readers.hpp"

namespace dapprof::formats::readers {

std::uint32_t ProfileFiller::thread(model::ThreadInfo info) {
  if (info.os_thread_id == 0) {
    // Same (pid, ident, name) as a thread made up before: the same thread.
    for (std::uint32_t i = 0; i < profile_.threads().size(); ++i) {
      const auto& t = profile_.threads()[i];
      if (t.pid == info.pid && t.thread_id == info.thread_id && t.name == info.name &&
          t.os_thread_id < next_tid_)
        return i;
    }
    info.os_thread_id = next_tid_++;
  }
  return profile_.add_thread(info);
}

void ProfileFiller::add(std::vector<model::Frame> root_first, std::int64_t time_us, double weight,
                        std::optional<std::uint32_t> fallback) {
  RootLabel root;
  std::size_t skip = 0;
  while (skip < root_first.size()) {
    // As written: a text label "thread (0x7f..)" was read as a function in a file.
    const auto& f = root_first[skip];
    auto parsed = f.line == 0 ? parse_root_label(frame_label(f), root) : std::nullopt;
    if (!parsed) break;
    root = std::move(*parsed);
    ++skip;
  }
  std::uint32_t thread_index;
  if (skip > 0) {
    model::ThreadInfo info;
    info.pid = root.pid.value_or(0);
    info.thread_id = root.thread_id.value_or(0);
    info.name = root.thread_name;
    if (root.pid && !root.command_line.empty())
      profile_.add_process({.pid = *root.pid, .command_line = root.command_line});
    thread_index = thread(std::move(info));
  } else if (fallback) {
    thread_index = *fallback;
  } else {
    if (!default_thread_) default_thread_ = thread(model::ThreadInfo{.name = "MainThread"});
    thread_index = *default_thread_;
  }
  innermost_first_.assign(root_first.rbegin(), root_first.rend() - static_cast<long>(skip));
  const auto stack = profile_.add_stack(innermost_first_, profile_.threads()[thread_index]);
  profile_.add_sample(thread_index, stack, std::max<std::int64_t>(time_us, 0), weight);
}

}  // namespace dapprof::formats::readers
