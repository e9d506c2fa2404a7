#pragma once
// Stack IDs of the profilingData event in a run started with `stacks`: each distinct stack (its
// frame IDs, root first) gets the next number, 0, 1, 2, ..., the first time it is sampled, and
// keeps it for the whole run. Dense rather than hashed like frame IDs because a stack ID is sent
// once per sample: a few digits instead of sixteen is most of what the mode saves. The table
// grows with the run's distinct stacks only, never with its samples.
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "protocol/frame_table.hpp"

namespace dapprof::protocol {

using StackId = std::uint64_t;

class StackIds {
 public:
  struct Interned {
    StackId id = 0;
    bool is_new = false;  // first use in this run: send it in newStacks
  };

  // The ID of a stack given as its frame IDs, root first.
  Interned intern(std::span<const FrameId> root_first);
  // The same for a stack a store of the caller's has already interned as `index` (dense, from
  // 0): only the ID is kept by index, so the run's stacks are held once, by that store.
  Interned intern(std::uint32_t index);
  // The ID given to `index`, if it was interned.
  std::optional<StackId> find(std::uint32_t index) const;

  std::size_t size() const { return next_; }

 private:
  struct StackHasher {
    std::size_t operator()(const std::vector<FrameId>& stack) const noexcept;
  };
  static constexpr StackId kNoId = ~StackId{0};
  StackId next_ = 0;
  std::unordered_map<std::vector<FrameId>, StackId, StackHasher> by_stack_;
  std::vector<StackId> by_index_;  // kNoId where not assigned yet
};

}  // namespace dapprof::protocol
