#include "formats/stack_map.hpp"

#include <optional>

namespace dapprof::formats {

Profile map_stacks(const Profile& profile, const StackRewrite& rewrite) {
  Profile out;
  out.name = profile.name;
  out.interval_us = profile.interval_us;
  out.duration_us = profile.duration_us;
  out.start_unix_ns = profile.start_unix_ns;
  out.show_processes = profile.show_processes;
  for (const auto& [pid, process] : profile.processes()) out.add_process(process);
  for (const auto& thread : profile.threads()) out.add_thread(thread);  // same indices

  const auto& frames = profile.frames();
  std::vector<std::optional<std::uint32_t>> mapped(profile.stacks().size());
  std::vector<model::Frame> in, rewritten;
  for (const auto& sample : profile.samples()) {
    auto& stack_id = mapped[sample.stack];
    if (!stack_id) {
      in.clear();
      for (const std::uint32_t f : profile.stacks()[sample.stack]) in.push_back(frames[f]);
      rewritten.clear();
      rewrite(in, rewritten);
      stack_id = out.add_stack(rewritten);
    }
    out.add_sample(sample.thread, *stack_id, sample.time_us, sample.weight, sample.state);
  }
  return out;
}

}  // namespace dapprof::formats
