#include "formats/call_tree.hpp"

#include <algorithm>
#include <unordered_map>

namespace dapprof::formats {

CallTree::CallTree(const Profile& profile, const WriteOptions& options) {
  const DisplayStacks display(profile, options);
  frames_ = display.frames();
  nodes_.emplace_back();
  // (parent node, frame) -> child node
  std::unordered_map<std::uint64_t, std::uint32_t> child_of;
  leaves_.reserve(profile.samples().size());
  for (const auto& sample : profile.samples()) {
    std::uint32_t node = kRoot;
    nodes_[node].total += sample.weight;
    for (const auto frame : display.path(sample)) {
      const std::uint64_t key = (static_cast<std::uint64_t>(node) << 32) | frame;
      auto [it, added] = child_of.try_emplace(key, static_cast<std::uint32_t>(nodes_.size()));
      if (added) {
        CallNode child;
        child.frame = frame;
        child.parent = node;
        child.depth = nodes_[node].depth + 1;
        max_depth_ = std::max(max_depth_, child.depth);
        nodes_[node].children.push_back(it->second);
        nodes_.push_back(std::move(child));
      }
      node = it->second;
      nodes_[node].total += sample.weight;
    }
    nodes_[node].self += sample.weight;
    leaves_.push_back(node);
  }
}

}  // namespace dapprof::formats
