#include "formats/debugger_view.hpp"

#include <algorithm>
#include <optional>

namespace dapprof::formats {

Profile without_debugger(const Profile& profile) {
  Profile out;
  out.name = profile.name;
  out.interval_us = profile.interval_us;
  out.duration_us = profile.duration_us;
  for (const auto& thread : profile.threads()) out.add_thread(thread);  // same indices

  const auto& frames = profile.frames();
  std::vector<std::optional<std::uint32_t>> mapped(profile.stacks().size());
  std::vector<model::Frame> kept;
  for (const auto& sample : profile.samples()) {
    auto& stack_id = mapped[sample.stack];
    if (!stack_id) {
      const auto& stack = profile.stacks()[sample.stack];  // innermost first
      const auto debugger = std::find_if(stack.begin(), stack.end(), [&](std::uint32_t f) {
        return frames[f].debugger();
      });
      kept.clear();
      for (auto it = stack.begin(); it != debugger; ++it) kept.push_back(frames[*it]);
      const bool program = debugger == stack.end() ||
                           std::any_of(kept.begin(), kept.end(),
                                       [](const model::Frame& f) { return !f.native(); });
      if (!program) kept.assign(1, model::debugger_frame());
      stack_id = out.add_stack(kept);
    }
    out.add_sample(sample.thread, *stack_id, sample.time_us, sample.weight);
  }
  return out;
}

}  // namespace dapprof::formats
