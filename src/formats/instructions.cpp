#include "formats/instructions.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "formats/stack_map.hpp"

namespace dapprof::formats {

bool shows_instructions(model::ProfileFormat format, const WriteOptions& options) {
  return (format == model::ProfileFormat::Speedscope && options.instruction_frames) ||
         format == model::ProfileFormat::Gecko || format == model::ProfileFormat::Pprof;
}

bool has_instructions(const Profile& profile) {
  const auto& frames = profile.frames();
  return std::any_of(frames.begin(), frames.end(),
                     [](const model::Frame& f) { return f.instruction.has_value(); });
}

Profile without_instructions(const Profile& profile) {
  return map_stacks(profile,
                    [](std::span<const model::Frame> stack, std::vector<model::Frame>& out) {
                      out.assign(stack.begin(), stack.end());
                      for (auto& f : out) f.instruction.reset();
                    });
}

std::string instruction_label(const model::Instruction& instruction) {
  return fmt::format("{} @{}", instruction_name(instruction), instruction.offset);
}

}  // namespace dapprof::formats
