#include "protocol/instruction_counts.hpp"

#include <algorithm>
#include <functional>
#include <utility>

namespace dapprof::protocol {

std::size_t InstructionCounter::KeyHash::operator()(const Key& k) const noexcept {
  std::size_t seed = std::hash<FrameId>{}(k.frame);
  for (std::size_t part :
       {std::size_t(std::uint32_t(k.offset)), std::size_t(k.opcode),
        std::size_t(std::uint32_t(k.line)), std::size_t(std::uint32_t(k.column)),
        std::size_t(std::uint32_t(k.end_line)), std::size_t(std::uint32_t(k.end_column))})
    seed ^= part + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
  return seed;
}

const InstructionId* InstructionCounter::intern(const InstructionSite& site) {
  const auto& in = *site.instruction;
  const Key key{site.frame, in.offset, in.opcode, in.line, in.end_line, in.column, in.end_column};
  if (auto it = ids_.find(key); it != ids_.end()) return &it->second;
  if (ids_.size() >= kMaxInstructions) return nullptr;
  const auto id = static_cast<InstructionId>(ids_.size());
  auto [it, inserted] = ids_.emplace(key, id);
  new_.push_back({id, site.frame, in});
  return &it->second;
}

void InstructionCounter::add(std::span<const InstructionSite> innermost_first) {
  seen_.clear();
  bool innermost = true;
  for (const auto& site : innermost_first) {
    if (site.instruction == nullptr) continue;
    const InstructionId* id = intern(site);
    if (id == nullptr) {
      ++uncounted_;
      innermost = false;
      continue;
    }
    auto& count = pending_.try_emplace(*id, InstructionCount{*id, 0, 0}).first->second;
    if (innermost) ++count.own;
    innermost = false;
    // A recursive function is at one instruction in several frames: total counts the sample once.
    if (std::find(seen_.begin(), seen_.end(), *id) == seen_.end()) {
      seen_.push_back(*id);
      ++count.total;
    }
  }
}

std::vector<InstructionDefinition> InstructionCounter::take_definitions() {
  return std::exchange(new_, {});
}

std::vector<InstructionCount> InstructionCounter::take_counts() {
  std::vector<InstructionCount> out;
  out.reserve(pending_.size());
  for (const auto& [id, count] : pending_) out.push_back(count);
  pending_.clear();
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

std::vector<InstructionCount> merge_counts(std::vector<InstructionCount> a,
                                           const std::vector<InstructionCount>& b) {
  if (a.empty()) return b;
  std::vector<InstructionCount> out;
  out.reserve(a.size() + b.size());
  auto x = a.cbegin();
  auto y = b.cbegin();
  while (x != a.cend() || y != b.cend()) {
    if (y == b.cend() || (x != a.cend() && x->id < y->id)) {
      out.push_back(*x++);
    } else if (x == a.cend() || y->id < x->id) {
      out.push_back(*y++);
    } else {
      out.push_back({x->id, x->own + y->own, x->total + y->total});
      ++x, ++y;
    }
  }
  return out;
}

}  // namespace dapprof::protocol
