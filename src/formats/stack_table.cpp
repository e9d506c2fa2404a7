#include "formats/stack_table.hpp"

#include <xxhash.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace dapprof::formats {
namespace {

std::uint32_t next_index(std::size_t size) {
  if (size >= std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("profile: too many distinct frames or stacks");
  }
  return static_cast<std::uint32_t>(size);
}

std::uint64_t frame_hash(const model::Frame& f) {
  XXH64_hash_t h = XXH3_64bits(f.function.data(), f.function.size());
  h = XXH3_64bits_withSeed(f.file.data(), f.file.size(), h);
  h = XXH3_64bits_withSeed(f.module.data(), f.module.size(), h);
  const std::int64_t tail =
      (static_cast<std::int64_t>(f.line) << 5) | (static_cast<std::int64_t>(f.task_state) << 3) |
      (static_cast<std::int64_t>(f.origin) << 2) | static_cast<std::int64_t>(f.kind);
  h = XXH3_64bits_withSeed(&tail, sizeof tail, h);
  if (!f.instruction) return h;  // a profile without opcodes hashes as it always did
  const auto& i = *f.instruction;
  const std::int64_t where[] = {(std::int64_t{i.offset} << 8) | i.opcode, i.column, i.end_column};
  return XXH3_64bits_withSeed(where, sizeof where, h);
}

std::uint64_t stack_hash(const StackTable::Stack& s) {
  return XXH3_64bits(s.data(), s.size() * sizeof(std::uint32_t));
}

}  // namespace

bool StackTable::same_frame(const model::Frame& frame, std::uint32_t index) const {
  // The fields that differ most often first: the line, then the cheap ones.
  const auto& kept = frames_[index];
  return frame.line == kept.line && frame.kind == kept.kind &&
         frame.task_state == kept.task_state && frame.origin == given_origin_[index] &&
         frame.instruction == kept.instruction && frame.function == kept.function &&
         frame.file == kept.file && frame.module == kept.module;
}

std::uint32_t StackTable::add_frame(const model::Frame& frame) {
  const auto hash = frame_hash(frame);
  for (auto [it, end] = frame_by_hash_.equal_range(hash); it != end; ++it) {
    if (same_frame(frame, it->second)) return it->second;
  }
  const auto id = next_index(frames_.size());
  // Classified here, once per distinct frame, rather than per sample.
  frames_.push_back(frame.origin == model::FrameOrigin::Program ? model::classified(frame) : frame);
  given_origin_.push_back(frame.origin);
  frame_by_hash_.emplace(hash, id);
  return id;
}

std::uint32_t StackTable::intern_scratch() {
  const auto hash = stack_hash(scratch_);
  for (auto [it, end] = stack_by_hash_.equal_range(hash); it != end; ++it) {
    if (stacks_[it->second] == scratch_) return it->second;
  }
  const auto id = next_index(stacks_.size());
  stacks_.push_back(scratch_);
  stack_by_hash_.emplace(hash, id);
  return id;
}

std::uint32_t StackTable::add_stack(std::span<const model::Frame> innermost_first) {
  scratch_.clear();
  for (const auto& f : innermost_first) scratch_.push_back(add_frame(f));
  return intern_scratch();
}

std::uint32_t StackTable::add_stack(std::span<const model::Frame> innermost_first,
                                    std::uint32_t previous) {
  if (previous >= stacks_.size()) return add_stack(innermost_first);
  // Stacks change at their innermost end: compare from the root down while the frames agree.
  const auto& before = stacks_[previous];
  const std::size_t size = innermost_first.size();
  const std::size_t limit = std::min(size, before.size());
  std::size_t common = 0;
  while (common < limit &&
         same_frame(innermost_first[size - 1 - common], before[before.size() - 1 - common])) {
    ++common;
  }
  if (common == size && size == before.size()) return previous;
  // A change in the middle (a loop calling on from another line) may leave the innermost frames
  // as they were too.
  std::size_t inner = 0;
  while (inner < limit - common && same_frame(innermost_first[inner], before[inner])) ++inner;
  scratch_.resize(size);
  std::copy(before.begin(), before.begin() + static_cast<std::ptrdiff_t>(inner), scratch_.begin());
  std::copy(before.end() - static_cast<std::ptrdiff_t>(common), before.end(),
            scratch_.end() - static_cast<std::ptrdiff_t>(common));
  for (std::size_t i = inner; i < size - common; ++i) scratch_[i] = add_frame(innermost_first[i]);
  return intern_scratch();
}

}  // namespace dapprof::formats
