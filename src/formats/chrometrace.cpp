// Chrome's Trace Event Format: per thread, a B event when a frame appears on the sampled stack
// and an E event when it leaves, so each frame becomes a slice as long as it was seen.
#include <algorithm>

#include "formats/json_out.hpp"
#include "formats/writers.hpp"

namespace dapprof::formats {
namespace {

Json frame_event(const model::Frame& f, char phase, std::int64_t ts, const model::ThreadInfo& t) {
  Json e = {{"name", f.function}, {"cat", "python"}, {"ph", std::string(1, phase)},
            {"ts", ts},           {"pid", t.pid},    {"tid", t.os_thread_id}};
  if (phase == 'B') e["args"] = {{"file", model::frame_place(f)}, {"line", f.line}};
  return e;
}

}  // namespace

void write_chrometrace(const Profile& profile, std::ostream& out, const WriteOptions& options) {
  (void)options;  // threads and processes are always apart here: each has its own track
  Json events = Json::array();

  std::vector<pid_t> named_processes;
  for (const auto& t : profile.threads()) {
    if (std::find(named_processes.begin(), named_processes.end(), t.pid) == named_processes.end()) {
      named_processes.push_back(t.pid);
      events.push_back({{"name", "process_name"},
                        {"ph", "M"},
                        {"pid", t.pid},
                        {"args", {{"name", "python (pid " + std::to_string(t.pid) + ")"}}}});
    }
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", t.pid},
                      {"tid", t.os_thread_id},
                      {"args", {{"name", t.name.empty() ? "thread" : t.name}}}});
  }

  std::vector<std::vector<Sample>> by_thread(profile.threads().size());
  for (const auto& s : profile.samples()) by_thread[s.thread].push_back(s);

  const auto& frames = profile.frames();
  for (std::size_t ti = 0; ti < by_thread.size(); ++ti) {
    auto& samples = by_thread[ti];
    const auto& thread = profile.threads()[ti];
    std::stable_sort(samples.begin(), samples.end(),
                     [](const Sample& a, const Sample& b) { return a.time_us < b.time_us; });
    std::vector<std::uint32_t> open;  // frames currently open, root first
    std::int64_t last = 0;
    const auto close_to = [&](std::size_t keep, std::int64_t ts) {
      while (open.size() > keep) {
        events.push_back(frame_event(frames[open.back()], 'E', ts, thread));
        open.pop_back();
      }
    };
    for (const Sample& s : samples) {
      // A thread missing from several snapshots (idle, filtered) was not running these frames.
      if (!open.empty() && s.time_us - last > 2 * profile.interval_us) {
        close_to(0, last + profile.interval_us);
      }
      const auto& stack = profile.stacks()[s.stack];
      const std::vector<std::uint32_t> path(stack.rbegin(), stack.rend());
      std::size_t common = 0;
      while (common < open.size() && common < path.size() && open[common] == path[common]) {
        ++common;
      }
      close_to(common, s.time_us);
      for (std::size_t i = common; i < path.size(); ++i) {
        events.push_back(frame_event(frames[path[i]], 'B', s.time_us, thread));
        open.push_back(path[i]);
      }
      last = s.time_us;
    }
    close_to(0, last + profile.interval_us);
  }

  const Json doc = {{"traceEvents", std::move(events)},
                    {"displayTimeUnit", "ms"},
                    {"otherData", {{"exporter", "dapprof"}, {"name", profile.name}}}};
  dump_json(doc, out);
  out << '\n';
}

}  // namespace dapprof::formats
