// V8's CPU profile (Profiler.Profile of the Chrome DevTools Protocol): a call tree of nodes, and
// the leaf node of each sample with the time since the previous one. Written by Chrome DevTools,
// Node.js (--cpu-prof) and dapprof.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "formats/readers/readers.hpp"

namespace dapprof::formats::readers {
namespace {

model::Frame frame_of(const Json& call_frame) {
  model::Frame frame;
  frame.function = call_frame.value("functionName", std::string());
  if (frame.function.empty()) frame.function = "(anonymous)";
  const auto line = call_frame.value("lineNumber", -1);  // 0-based, -1 unknown
  frame.line = line >= 0 ? line + 1 : 0;
  model::set_place(frame, call_frame.value("url", std::string()));
  return frame;
}

}  // namespace

bool looks_like_cpuprofile(const Json& doc) {
  if (!doc.is_object()) return false;
  const auto nodes = doc.find("nodes");
  return nodes != doc.end() && nodes->is_array() &&
         (nodes->empty() || (nodes->front().is_object() && nodes->front().contains("callFrame")));
}

Result<Profile> read_cpuprofile(const Json& doc) {
  struct Node {
    model::Frame frame;
    std::int64_t parent = -1;  // index into nodes
    std::int64_t hits = 0;
    bool root = false;  // V8's "(root)", above every stack
  };
  std::vector<Node> nodes;
  std::unordered_map<std::int64_t, std::size_t> index_of;
  for (const auto& n : doc.at("nodes")) {
    const auto id = n.at("id").get<std::int64_t>();
    if (!index_of.emplace(id, nodes.size()).second)
      return malformed(fmt::format("node id {} is used twice", id));
    Node node{frame_of(n.at("callFrame")), -1, n.value("hitCount", std::int64_t{0}), false};
    node.root = node.frame.function == "(root)" && node.frame.file.empty();
    nodes.push_back(std::move(node));
  }
  const auto find = [&](const Json& id) -> Result<std::size_t> {
    const auto it = index_of.find(id.get<std::int64_t>());
    if (it == index_of.end())
      return malformed(fmt::format("node {} is not in \"nodes\"", id.dump()));
    return it->second;
  };
  std::size_t i = 0;
  for (const auto& n : doc.at("nodes")) {
    for (const auto& c : n.value("children", Json::array())) {
      auto child = find(c);
      if (!child) return child.error();
      nodes[*child].parent = static_cast<std::int64_t>(i);
    }
    if (n.contains("parent")) {  // the older form names the parent instead
      auto parent = find(n["parent"]);
      if (!parent) return parent.error();
      nodes[i].parent = static_cast<std::int64_t>(*parent);
    }
    ++i;
  }

  Profile profile;
  ProfileFiller filler(profile);
  const auto stack_of = [&](std::size_t leaf) -> Result<std::vector<model::Frame>> {
    std::vector<model::Frame> root_first;
    std::size_t depth = 0;
    for (auto n = static_cast<std::int64_t>(leaf); n >= 0; n = nodes[n].parent) {
      if (++depth > nodes.size()) return malformed("the nodes' parents make a cycle");
      if (!nodes[n].root) root_first.push_back(nodes[n].frame);
    }
    std::reverse(root_first.begin(), root_first.end());
    return root_first;
  };

  const auto samples = doc.value("samples", Json::array());
  const auto deltas = doc.value("timeDeltas", Json::array());
  if (!samples.empty()) {
    if (!deltas.empty() && deltas.size() != samples.size())
      return malformed("\"samples\" and \"timeDeltas\" differ in length");
    std::int64_t time_us = 0;
    for (std::size_t s = 0; s < samples.size(); ++s) {
      auto leaf = find(samples[s]);
      if (!leaf) return leaf.error();
      time_us += deltas.empty() ? profile.interval_us : deltas[s].get<std::int64_t>();
      auto stack = stack_of(*leaf);
      if (!stack) return stack.error();
      filler.add(std::move(*stack), time_us, 1);
    }
    const auto start = doc.value("startTime", std::int64_t{0});
    const auto end = doc.value("endTime", std::int64_t{0});
    if (end > start) {
      profile.duration_us = end - start;
      profile.interval_us = std::max<std::int64_t>(
          1, profile.duration_us / static_cast<std::int64_t>(samples.size()));
    }
  } else {
    // Without samples only the hit counts say where time went; they have no order.
    std::int64_t time_us = 0;
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      if (nodes[n].hits <= 0) continue;
      auto stack = stack_of(n);
      if (!stack) return stack.error();
      filler.add(std::move(*stack), time_us, static_cast<double>(nodes[n].hits));
      time_us += nodes[n].hits * profile.interval_us;
    }
  }
  return profile;
}

}  // namespace dapprof::formats::readers
