#include "protocol/stack_ids.hpp"

namespace dapprof::protocol {

std::size_t StackIds::StackHasher::operator()(const std::vector<FrameId>& stack) const noexcept {
  std::size_t seed = stack.size();
  for (const FrameId id : stack) seed ^= id + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
  return seed;
}

StackIds::Interned StackIds::intern(std::span<const FrameId> root_first) {
  auto [it, inserted] = by_stack_.try_emplace({root_first.begin(), root_first.end()}, next_);
  if (inserted) ++next_;
  return {it->second, inserted};
}

StackIds::Interned StackIds::intern(std::uint32_t index) {
  if (index >= by_index_.size()) by_index_.resize(std::size_t{index} + 1, kNoId);
  if (by_index_[index] != kNoId) return {by_index_[index], false};
  by_index_[index] = next_++;
  return {by_index_[index], true};
}

std::optional<StackId> StackIds::find(std::uint32_t index) const {
  if (index >= by_index_.size() || by_index_[index] == kNoId) return std::nullopt;
  return by_index_[index];
}

}  // namespace dapprof::protocol
