#include "formats/snapshot_json.hpp"

namespace dapprof::formats {

nlohmann::ordered_json snapshot_to_json(const model::Snapshot& snapshot,
                                        const std::string& python_version) {
  using Json = nlohmann::ordered_json;
  Json threads = Json::array();
  for (const auto& t : snapshot.threads) {
    Json frames = Json::array();
    std::size_t python_frames = 0;  // t.locals has an entry per Python frame
    for (const auto& f : t.frames) {
      Json frame = {{"function", f.function}, {"file", f.file}, {"line", f.line}};
      if (f.native()) {
        frame["native"] = true;
        frame["module"] = f.module;
      } else if (f.gc()) {
        frame["gc"] = true;
      } else if (python_frames < t.locals.size()) {
        Json locals = Json::array();
        for (const auto& v : t.locals[python_frames])
          locals.push_back({{"name", v.name}, {"value", v.value}, {"argument", v.argument}});
        frame["locals"] = std::move(locals);
      }
      if (const auto& i = f.instruction) {
        Json instruction = {{"offset", i->offset},
                            {"opcode", i->opcode},
                            {"name", i->name},
                            {"base_opcode", i->base_opcode},
                            {"base_name", i->base_name}};
        if (i->line > 0) {
          instruction["line"] = i->line;
          instruction["end_line"] = i->end_line;
        }
        if (i->has_columns()) {
          instruction["column"] = i->column;
          instruction["end_column"] = i->end_column;
        }
        frame["instruction"] = std::move(instruction);
      }
      if (f.python()) ++python_frames;
      frames.push_back(std::move(frame));
    }
    threads.push_back({{"thread_id", t.info.thread_id},
                       {"os_thread_id", t.info.os_thread_id},
                       {"name", t.info.name},
                       {"status", t.status()},
                       {"owns_gil", t.owns_gil},
                       {"active", t.active},
                       {"frames", std::move(frames)}});
  }
  return {
      {"pid", snapshot.pid}, {"python_version", python_version}, {"threads", std::move(threads)}};
}

}  // namespace dapprof::formats
