// V8's CPU profile (Profiler.Profile in the Chrome DevTools Protocol), as VS Code reads it.
#include <algorithm>
#include <map>
#include <numeric>

#include "formats/call_tree.hpp"
#include "formats/json_out.hpp"
#include "formats/writers.hpp"

namespace dapprof::formats {

void write_cpuprofile(const Profile& profile, std::ostream& out, const WriteOptions& options) {
  const CallTree tree(profile, options);
  const auto& nodes = tree.nodes();

  // V8 numbers scripts; one id per file, "0" for frames without one.
  std::map<std::string, int> script_ids;
  const auto script_id = [&](const std::string& file) {
    if (file.empty()) return std::string("0");
    auto [it, added] = script_ids.try_emplace(file, static_cast<int>(script_ids.size()) + 1);
    return std::to_string(it->second);
  };

  // Hit counts are whole samples; a weighted sample still counts once in `samples`.
  std::vector<std::int64_t> hits(nodes.size(), 0);
  for (const auto leaf : tree.sample_leaves()) ++hits[leaf];

  Json json_nodes = Json::array();
  for (std::size_t id = 0; id < nodes.size(); ++id) {
    const auto& n = nodes[id];
    Json call_frame;
    if (n.frame == CallNode::kNoFrame) {
      call_frame = {{"functionName", "(root)"},
                    {"scriptId", "0"},
                    {"url", ""},
                    {"lineNumber", -1},
                    {"columnNumber", -1}};
    } else {
      const auto& f = tree.frames()[n.frame];
      const auto place = model::frame_place(f);
      call_frame = {{"functionName", f.function},
                    {"scriptId", script_id(place)},
                    {"url", place},
                    {"lineNumber", f.line > 0 ? f.line - 1 : -1},
                    {"columnNumber", f.line > 0 ? 0 : -1}};
    }
    Json node = {{"id", id + 1}, {"callFrame", std::move(call_frame)}, {"hitCount", hits[id]}};
    if (!n.children.empty()) {
      Json children = Json::array();
      for (const auto c : n.children) children.push_back(c + 1);
      node["children"] = std::move(children);
    }
    json_nodes.push_back(std::move(node));
  }

  // Samples in time order (threads interleave); deltas from startTime.
  std::vector<std::int64_t> times;
  times.reserve(profile.samples().size());
  for (const auto& s : profile.samples()) times.push_back(s.time_us);
  std::vector<std::size_t> order(times.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return times[a] < times[b]; });
  Json samples = Json::array();
  Json deltas = Json::array();
  std::int64_t previous = 0;
  for (const auto i : order) {
    samples.push_back(tree.sample_leaves()[i] + 1);
    deltas.push_back(times[i] - previous);
    previous = times[i];
  }

  const Json doc = {{"nodes", std::move(json_nodes)},
                    {"startTime", 0},
                    {"endTime", profile.end_us()},
                    {"samples", std::move(samples)},
                    {"timeDeltas", std::move(deltas)}};
  dump_json(doc, out);
  out << '\n';
}

}  // namespace dapprof::formats
