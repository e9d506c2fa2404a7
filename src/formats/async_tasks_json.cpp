#include "formats/async_tasks_json.hpp"

#include <fmt/format.h>

namespace dapprof::formats {
namespace {

using Json = nlohmann::ordered_json;

// A string, not a number: addresses exceed what a JSON number holds exactly in most readers.
std::string hex(std::uint64_t id) { return fmt::format("{:#x}", id); }

}  // namespace

Json async_tasks_to_json(const sampler::AsyncTasks& tasks, const std::string& python_version) {
  Json list = Json::array();
  for (const auto& t : tasks.tasks) {
    Json by = Json::array();
    for (auto id : t.awaited_by) by.push_back(hex(id));
    Json frames = Json::array();
    for (const auto& f : t.frames)
      frames.push_back({{"name", f.function}, {"file", f.file}, {"line", f.line}});
    list.push_back({{"id", hex(t.id)},
                    {"name", t.name},
                    {"state", sampler::task_state_name(t.state)},
                    {"thread", t.os_thread_id},
                    {"awaited_by", std::move(by)},
                    {"frames", std::move(frames)}});
  }
  return {{"python_version", python_version},
          {"tasks", std::move(list)},
          {"torn", tasks.torn},
          {"truncated", tasks.truncated},
          {"missing", tasks.missing}};
}

}  // namespace dapprof::formats
