// https://www.speedscope.app/file-format-schema.json
#include <fmt/format.h>

#include "formats/instructions.hpp"
#include "formats/json_out.hpp"
#include "formats/writers.hpp"

namespace dapprof::formats {
namespace {

// With processes shown, the process's command line follows its pid: speedscope lists its
// profiles by title alone.
std::string thread_title(const Profile& profile, const model::ThreadInfo& t) {
  const std::string name = t.name.empty() ? std::string("thread") : t.name;
  auto title =
      fmt::format("{} (thread 0x{:x}, tid {}) pid {}", name, t.thread_id, t.os_thread_id, t.pid);
  if (!profile.process_level()) return title;
  const auto process = profile.process(t.pid);
  if (!process.command_line.empty()) title += fmt::format(" \"{}\"", process.command_line);
  return title;
}

}  // namespace

void write_speedscope(const Profile& profile, std::ostream& out, const WriteOptions&) {
  Json frames = Json::array();
  for (const auto& f : profile.frames()) {
    // With --opcodes, each instruction of a line is a frame of its own, named after it: speedscope
    // keys frames by name, file and line, and shows only the name.
    Json frame = {{"name", f.instruction ? fmt::format("{} [{}]", f.function,
                                                       instruction_label(*f.instruction))
                                         : f.function.str()}};
    // A native frame without line tables is still placed: in its shared object.
    if (auto place = model::frame_place(f); !place.empty()) frame["file"] = std::move(place);
    if (f.line > 0) frame["line"] = f.line;
    // speedscope's columns are 1-based; CPython's 0-based.
    if (f.instruction && f.instruction->has_columns()) frame["col"] = f.instruction->column + 1;
    frames.push_back(std::move(frame));
  }

  struct PerThread {
    Json samples = Json::array();
    Json weights = Json::array();
    double total = 0;
  };
  std::vector<PerThread> per_thread(profile.threads().size());
  for (const auto& s : profile.samples()) {
    const auto& stack = profile.stacks()[s.stack];
    auto& t = per_thread[s.thread];
    t.samples.push_back(Json(std::vector<std::uint32_t>(stack.rbegin(), stack.rend())));
    t.weights.push_back(s.weight);
    t.total += s.weight;
  }

  Json profiles = Json::array();
  for (std::size_t i = 0; i < per_thread.size(); ++i) {
    auto& t = per_thread[i];
    profiles.push_back({{"type", "sampled"},
                        {"name", thread_title(profile, profile.threads()[i])},
                        {"unit", "none"},
                        {"startValue", 0},
                        {"endValue", t.total},
                        {"samples", std::move(t.samples)},
                        {"weights", std::move(t.weights)}});
  }

  Json doc = {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
              {"shared", {{"frames", std::move(frames)}}},
              {"profiles", std::move(profiles)},
              {"name", profile.name},
              {"exporter", "dapprof"}};
  if (!doc["profiles"].empty()) doc["activeProfileIndex"] = 0;
  dump_json(doc, out);
  out << '\n';
}

}  // namespace dapprof::formats
