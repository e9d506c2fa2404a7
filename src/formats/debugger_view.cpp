#include "formats/debugger_view.hpp"

#include <algorithm>

#include "formats/stack_map.hpp"

namespace dapprof::formats {

Profile without_debugger(const Profile& profile) {
  return map_stacks(
      profile, [](std::span<const model::Frame> stack, std::vector<model::Frame>& kept) {
        const auto debugger = std::find_if(stack.begin(), stack.end(),
                                           [](const model::Frame& f) { return f.debugger(); });
        kept.assign(stack.begin(), debugger);
        const bool program = debugger == stack.end() ||
                             std::any_of(kept.begin(), kept.end(),
                                         [](const model::Frame& f) { return !f.native(); });
        if (!program) kept.assign(1, model::debugger_frame());
      });
}

}  // namespace dapprof::formats
