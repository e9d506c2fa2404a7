#pragma once
// Samples merged into a call tree: one node per distinct path from the root, with the weight of
// the samples passing through it (total) and ending in it (self).
#include <cstdint>
#include <limits>
#include <vector>

#include "formats/profile.hpp"

namespace dapprof::formats {

struct CallNode {
  static constexpr std::uint32_t kNoFrame = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t frame = kNoFrame;  // index into CallTree::frames(); kNoFrame for the root
  std::uint32_t parent = 0;
  std::uint32_t depth = 0;  // 0 for the root
  double total = 0;
  double self = 0;
  std::vector<std::uint32_t> children;  // in order of first appearance
};

class CallTree {
 public:
  static constexpr std::uint32_t kRoot = 0;
  CallTree(const Profile& profile, const WriteOptions& options);

  const std::vector<CallNode>& nodes() const { return nodes_; }
  const std::vector<model::Frame>& frames() const { return frames_; }
  // For each sample of the profile (same order), the node its stack ends in.
  const std::vector<std::uint32_t>& sample_leaves() const { return leaves_; }
  std::uint32_t max_depth() const { return max_depth_; }

 private:
  std::vector<CallNode> nodes_;
  std::vector<model::Frame> frames_;
  std::vector<std::uint32_t> leaves_;
  std::uint32_t max_depth_ = 0;
};

}  // namespace dapprof::formats
