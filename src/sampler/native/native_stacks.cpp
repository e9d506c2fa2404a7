#include "sampler/native/native_stacks.hpp"

#include <spdlog/spdlog.h>

#include "sampler/native/merge.hpp"

namespace dapprof::sampler::native {

NativeStacks::NativeStacks(pid_t pid, std::vector<std::string> interpreter_files, bool keep_all)
    : modules_(pid), symbolizer_(modules_, std::move(interpreter_files)), keep_all_(keep_all) {}

Result<std::unique_ptr<NativeStacks>> NativeStacks::create(
    pid_t pid, std::vector<std::string> interpreter_files, bool keep_all) {
  std::unique_ptr<NativeStacks> stacks(
      new NativeStacks(pid, std::move(interpreter_files), keep_all));
  if (auto s = stacks->modules_.load(); !s) return s.error();
  auto unwinder = Unwinder::create(stacks->modules_);
  if (!unwinder) return unwinder.error();
  stacks->unwinder_ = std::move(*unwinder);
  return stacks;
}

void NativeStacks::unwind(std::span<const pid_t> tids) {
  stacks_.clear();
  for (pid_t tid : tids) {
    auto stack = unwinder_->unwind(tid);
    if (!stack) {
      if (failures_++ == 0) spdlog::debug("native stack of thread {}: {}", tid, stack.message());
      continue;
    }
    stacks_.emplace(tid, std::move(*stack));
  }
}

std::vector<model::Frame> NativeStacks::merge(pid_t tid, std::vector<model::Frame> python,
                                              std::span<const std::uint32_t> eval_groups,
                                              std::span<const std::uint64_t> eval_entries) {
  const auto it = stacks_.find(tid);
  if (it == stacks_.end()) return python;
  const auto natives = symbolizer_.resolve(it->second.addresses);
  return native::merge(
      MergeInput{natives, python, eval_groups, keep_all_, eval_entries, it->second.stack_pointers});
}

}  // namespace dapprof::sampler::native
