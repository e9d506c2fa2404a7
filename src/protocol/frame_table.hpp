#pragma once
// Frame IDs of the profilingData event: a stable hash of the frame, below 2^53 so that a
// JavaScript client reads it exactly, identical across batches, sessions, runs and versions.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/result.hpp"
#include "model/frame.hpp"

namespace dapprof::protocol {

using FrameId = std::uint64_t;

inline constexpr unsigned kFrameIdBits = 53;  // Number.MAX_SAFE_INTEGER == 2^53 - 1

// The bytes that identify a frame and are hashed (documented in docs/PROFILING.md, part of the
// protocol): file NUL line NUL function, plus NUL "native" NUL module for native frames.
std::string frame_key(const model::Frame& frame);

// XXH3 64-bit of the key with the given seed.
std::uint64_t xxh3_frame_hash(std::string_view key, std::uint64_t seed);

class FrameTable {
 public:
  // Injectable so that tests can force collisions (a constant hash, or very few bits).
  using HashFunction = std::function<std::uint64_t(std::string_view key, std::uint64_t seed)>;

  struct Interned {
    FrameId id = 0;
    bool is_new = false;  // first time this frame is seen in this run: send it in newFrames
  };

  // id_bits is clamped to 1..63; only tests use anything but 53.
  explicit FrameTable(unsigned id_bits = kFrameIdBits, HashFunction hash = xxh3_frame_hash);

  // The frame's ID. Seed 0 first; if that ID already belongs to a different frame, seeds 1, 2, ...
  // until a free ID is found, so the result depends only on the frames interned before it (the
  // same insertion order always gives the same IDs). Fails only when every ID is taken.
  Result<Interned> intern(const model::Frame& frame);
  // The same for a frame a store of the caller's has already interned as `index` (dense, from
  // 0): the ID is kept by index, so the run's frames are held once, by that store.
  Result<Interned> intern(std::uint32_t index, const model::Frame& frame);

  std::size_t size() const { return used_ids_.size(); }
  std::uint64_t capacity() const { return mask_ + 1; }      // how many distinct IDs exist
  std::uint64_t collisions() const { return collisions_; }  // rehashes done so far
  // Forgets every frame: the next profiling run announces frames again.
  void clear();

 private:
  std::uint64_t mask_;
  HashFunction hash_;
  // Keyed by the frame itself so that looking up a known frame (nearly every lookup) builds no
  // key string; the hash here only places entries, IDs come from hash_.
  struct FrameHasher {
    std::size_t operator()(const model::Frame& frame) const noexcept;
  };
  Result<FrameId> assign(const model::Frame& frame);
  std::unordered_map<model::Frame, FrameId, FrameHasher> by_frame_;
  std::vector<FrameId> by_index_;  // kNoId where not assigned yet
  static constexpr FrameId kNoId = ~FrameId{0};
  std::unordered_set<FrameId> used_ids_;
  std::uint64_t collisions_ = 0;
};

}  // namespace dapprof::protocol
