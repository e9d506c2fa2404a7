#include "sampler/python/task_sampling.hpp"

#include <fmt/format.h>

#include "sampler/python/task_stacks.hpp"

namespace dapprof::sampler::python {

Status async_sampling_supported(const Layout& layout, const std::string& version) {
  if (layout.at_least(3, 8)) return Ok{};
  return Error{fmt::format("sampling by asyncio task needs CPython 3.8 or newer; this program "
                           "runs Python {}",
                           version),
               ErrorCode::UnsupportedVersion};
}

bool TaskSampling::found(std::chrono::steady_clock::time_point now) {
  if (target_ || legacy_ready_) return true;
  if (looked_ && now - *looked_ < kLookAgain) return false;
  looked_ = now;
  if (!objects_.layout().at_least(3, 14)) return true;  // the legacy reader looks each time
  auto target = find_asyncio(pid_, objects_.memory(), interp_.binary);
  if (!target) return false;  // not imported yet (or not readable): samples stay the threads'
  target_ = *target;
  if (mode_ == model::AsyncMode::Running)
    running_.emplace(objects_, walker_, *target_);
  else
    all_.emplace(objects_, walker_, interp_, *target_);
  return true;
}

Status TaskSampling::apply(model::Snapshot& snap, const std::vector<SampledThread>& threads,
                           const std::unordered_map<std::uint64_t, model::ThreadInfo>& infos) {
  if (mode_ == model::AsyncMode::Off || !found(snap.time)) return Ok{};
  Result<AsyncTasks> tasks = Error{};
  try {
    if (running_)
      tasks = running_->read(snap, threads);
    else if (all_)
      tasks = all_->read();
    else
      tasks = (legacy_ ? *legacy_ : legacy_.emplace(pid_, objects_, walker_, interp_)).read();
  } catch (const std::exception& e) {
    // As a snapshot: nothing read from a running target may bring the profiler down.
    return Error{fmt::format("reading the asyncio tasks of process {} failed: {}", pid_, e.what()),
                 ErrorCode::TornRead};
  }
  if (!running_ && !all_) {
    // 3.8-3.13: until asyncio is imported, samples stay the threads' (looked for once a second).
    legacy_ready_ = tasks || tasks.code() != ErrorCode::NotPython;
    if (!legacy_ready_) return Ok{};
  }
  if (!tasks) return tasks.error();
  torn_ += tasks->torn;
  apply_task_stacks(snap, *tasks, mode_, infos);
  return Ok{};
}

}  // namespace dapprof::sampler::python
