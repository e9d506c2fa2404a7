#pragma once
// Async sampling modes (model::AsyncMode) for one process: after each sample's stacks are read,
// the asyncio tasks are read and the sample rewritten as the tasks' stacks (task_stacks.hpp).
// Until the program has imported asyncio, samples stay as they are; the tasks are looked for again
// at most once a second. 3.14+: a "running" sample reads the running tasks and their awaiters
// only (running_tasks.hpp), an "all" sample every task. 3.8-3.13 keep no record of who awaits a
// task but its reverse, so every sample, in either mode, reads every task (asyncio_legacy.hpp):
// its cost grows with the number of tasks.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"
#include "model/sampling_settings.hpp"
#include "model/snapshot.hpp"
#include "sampler/python/asyncio_debug.hpp"
#include "sampler/python/asyncio_legacy.hpp"
#include "sampler/python/asyncio_tasks.hpp"
#include "sampler/python/discovery.hpp"
#include "sampler/python/running_tasks.hpp"

namespace dapprof::sampler::python {

class TaskSampling {
 public:
  static constexpr std::chrono::seconds kLookAgain{1};

  TaskSampling(pid_t pid, const Objects& objects, StackWalker& walker, const Interpreter& interp,
               model::AsyncMode mode)
      : pid_(pid), objects_(objects), walker_(walker), interp_(interp), mode_(mode) {}

  model::AsyncMode mode() const { return mode_; }
  // `threads` parallel to snap.threads; `infos`: every thread of the process by TID (for the
  // waiting tasks of threads the sample left out). TornRead when the tasks moved while read.
  Status apply(model::Snapshot& snap, const std::vector<SampledThread>& threads,
               const std::unordered_map<std::uint64_t, model::ThreadInfo>& infos);
  // Tasks left out of samples since the start because they read as nonsense ("all" mode).
  std::uint64_t torn() const { return torn_; }

 private:
  // The tasks' offsets, once asyncio is imported; false until then.
  bool found(std::chrono::steady_clock::time_point now);

  pid_t pid_;
  const Objects& objects_;
  StackWalker& walker_;
  const Interpreter& interp_;
  model::AsyncMode mode_;
  std::optional<AsyncioTarget> target_;
  std::optional<std::chrono::steady_clock::time_point> looked_;
  std::optional<RunningTasks> running_;
  std::optional<AsyncioTaskReader> all_;
  std::optional<LegacyAsyncioReader> legacy_;  // 3.8-3.13, kept for what it found by name
  bool legacy_ready_ = false;                  // 3.8-3.13: asyncio was found imported
  std::uint64_t torn_ = 0;
};

// Whether PythonProcess can sample this version by task (AttachOptions::async): an error that
// says why not, for attach to return.
Status async_sampling_supported(const Layout& layout, const std::string& version);

}  // namespace dapprof::sampler::python
