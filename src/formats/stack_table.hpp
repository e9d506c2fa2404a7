#pragma once
// The frames and stacks of a profile, each kept once and numbered in order of first appearance:
// the part of a recording that grows with what the program did rather than with its length.
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/frame.hpp"

namespace dapprof::formats {

class StackTable {
 public:
  using Stack = std::vector<std::uint32_t>;  // frame indices, innermost first (as sampled)

  // Frames are the same when every field of model::Frame is; the one kept is classified
  // (model::classified) if its origin was not given.
  std::uint32_t add_frame(const model::Frame& frame);
  std::uint32_t add_stack(std::span<const model::Frame> innermost_first);
  // The same, given a stack added before that probably shares the new one's outer frames (the
  // same thread's previous stack): those are compared with it instead of being looked up. A
  // thread sampled again in the same code costs a comparison of its frames and nothing else.
  std::uint32_t add_stack(std::span<const model::Frame> innermost_first, std::uint32_t previous);

  const std::vector<model::Frame>& frames() const { return frames_; }
  const std::vector<Stack>& stacks() const { return stacks_; }

 private:
  // Whether `frame` is the one interned as `index`.
  bool same_frame(const model::Frame& frame, std::uint32_t index) const;
  // The index of scratch_'s stack, added if new.
  std::uint32_t intern_scratch();

  std::vector<model::Frame> frames_;
  // The origin each frame was added with: part of its identity, which classification changes.
  std::vector<model::FrameOrigin> given_origin_;
  // Keyed by hash, so that a frame or stack is held once (in frames_ or stacks_), not again as a
  // key; equal hashes of different content are told apart by comparing with what is kept.
  std::unordered_multimap<std::uint64_t, std::uint32_t> frame_by_hash_;
  std::vector<Stack> stacks_;
  std::unordered_multimap<std::uint64_t, std::uint32_t> stack_by_hash_;
  Stack scratch_;  // the stack being looked up: no allocation for one seen before
};

}  // namespace dapprof::formats
