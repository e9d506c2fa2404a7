#include "sampler/native/tail_calls.hpp"

#include <cstring>
#include <unordered_set>

namespace dapprof::sampler::native {
namespace {

// Longer than any wrapper worth reading: a jump past this is not a wrapper's last act.
constexpr std::uint64_t kMaxWrapper = 4096;
constexpr std::byte kJmpRel32{0xe9};

}  // namespace

std::unordered_map<std::uint64_t, std::string> tail_call_names(
    const ElfSymbols& elf, const std::vector<std::pair<std::uint64_t, std::string>>& methods) {
  std::unordered_set<std::uint64_t> own;  // a method's own function keeps its own name
  for (const auto& [start, name] : methods) own.insert(start);
  std::unordered_map<std::uint64_t, std::string> out;
  std::unordered_set<std::uint64_t> shared;  // jumped to by several methods: no one name
  for (const auto& [start, name] : methods) {
    const auto end = elf.next_function_start(start);
    if (!end || !elf.is_function_start(start)) continue;
    const auto code = elf.code_at(start, std::min(*end - start, kMaxWrapper));
    // Every E9 byte is read as a jump: one inside another instruction almost never lands
    // exactly on a function's start, which is required.
    for (std::size_t i = 0; i + 5 <= code.size(); ++i) {
      if (code[i] != kJmpRel32) continue;
      std::int32_t rel = 0;
      std::memcpy(&rel, code.data() + i + 1, 4);
      const std::uint64_t target = start + i + 5 + static_cast<std::uint64_t>(std::int64_t{rel});
      if ((target >= start && target < *end) || own.contains(target) ||
          !elf.is_function_start(target))
        continue;
      const auto [it, inserted] = out.try_emplace(target, name);
      if (!inserted && it->second != name) shared.insert(target);
    }
  }
  for (std::uint64_t target : shared) out.erase(target);
  return out;
}

}  // namespace dapprof::sampler::native
