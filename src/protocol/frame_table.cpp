#include "protocol/frame_table.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>

namespace dapprof::protocol {

std::string frame_key(const model::Frame& frame) {
  std::string key;
  key.reserve(frame.file.size() + frame.function.size() + frame.module.size() + 24);
  key += frame.file;
  key += '\0';
  key += std::to_string(frame.line);
  key += '\0';
  key += frame.function;
  if (frame.native()) {
    key += '\0';
    key += "native";
    key += '\0';
    key += frame.module;
  } else if (frame.task()) {
    key += '\0';
    key += "task";
    key += '\0';
    key += model::task_state_name(frame.task_state);
  } else if (frame.exception()) {
    key += '\0';
    key += "exception";
  } else if (frame.gc()) {
    key += '\0';
    key += "gc";
  }
  return key;
}

std::uint64_t xxh3_frame_hash(std::string_view key, std::uint64_t seed) {
  return XXH3_64bits_withSeed(key.data(), key.size(), seed);
}

std::size_t FrameTable::FrameHasher::operator()(const model::Frame& frame) const noexcept {
  const std::hash<std::string_view> h;
  std::size_t seed = h(frame.file);
  for (std::size_t part :
       {h(frame.function), std::hash<int>{}(frame.line), h(frame.module),
        static_cast<std::size_t>(frame.kind), static_cast<std::size_t>(frame.task_state)})
    seed ^= part + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
  return seed;
}

FrameTable::FrameTable(unsigned id_bits, HashFunction hash)
    : mask_((std::uint64_t{1} << std::clamp(id_bits, 1u, 63u)) - 1), hash_(std::move(hash)) {}

Result<FrameTable::Interned> FrameTable::intern(const model::Frame& frame) {
  if (const auto it = by_frame_.find(frame); it != by_frame_.end())
    return Interned{it->second, false};
  auto id = assign(frame);
  if (!id) return id.error();
  by_frame_.emplace(frame, *id);
  return Interned{*id, true};
}

Result<FrameTable::Interned> FrameTable::intern(std::uint32_t index, const model::Frame& frame) {
  if (index < by_index_.size() && by_index_[index] != kNoId)
    return Interned{by_index_[index], false};
  auto id = assign(frame);
  if (!id) return id.error();
  if (index >= by_index_.size()) by_index_.resize(std::size_t{index} + 1, kNoId);
  by_index_[index] = *id;
  return Interned{*id, true};
}

Result<FrameId> FrameTable::assign(const model::Frame& frame) {
  if (used_ids_.size() > mask_)
    return Error{fmt::format("all {} frame IDs are in use", capacity()), ErrorCode::Generic};

  // Rehashing with successive seeds resolves collisions deterministically. A bad hash function
  // (constant, as in tests) could cycle forever, so after many seeds probe linearly instead:
  // still deterministic, and it always ends because a free ID exists.
  const std::string key = frame_key(frame);
  constexpr std::uint64_t kMaxSeeds = 64;
  FrameId id = 0;
  bool found = false;
  for (std::uint64_t seed = 0; seed < kMaxSeeds && !found; ++seed) {
    id = hash_(key, seed) & mask_;
    found = !used_ids_.contains(id);
    if (!found) ++collisions_;
  }
  while (!found) {
    id = (id + 1) & mask_;
    found = !used_ids_.contains(id);
  }
  used_ids_.insert(id);
  return id;
}

void FrameTable::clear() {
  used_ids_.clear();
  by_frame_.clear();
  by_index_.clear();
  collisions_ = 0;
}

}  // namespace dapprof::protocol
