#include "formats/file_names.hpp"

#include "formats/stack_map.hpp"

namespace dapprof::formats {

bool shows_short_files(model::ProfileFormat format) {
  return format != model::ProfileFormat::Cpuprofile && format != model::ProfileFormat::Pprof;
}

Profile with_files(const Profile& profile,
                   const std::function<std::string(const std::string&)>& shorten) {
  return map_stacks(profile,
                    [&](std::span<const model::Frame> stack, std::vector<model::Frame>& out) {
                      out.assign(stack.begin(), stack.end());
                      for (auto& f : out)
                        if (!f.file.empty()) f.file = shorten(f.file);
                    });
}

}  // namespace dapprof::formats
