#pragma once
// The asyncio tasks of a target, read from outside (PythonProcess::async_tasks): what
// `dapprof dump --async` prints, as CPython's `python -m asyncio pstree` does.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/frame.hpp"

namespace dapprof::sampler {

// The state the model knows (model/frame.hpp); unknown where the version does not say (see
// AsyncTasks::missing).
using model::task_state_name;
using model::TaskState;

struct AsyncTask {
  std::uint64_t id = 0;  // the task object's address (what `python -m asyncio ps` shows)
  std::string name;
  TaskState state = TaskState::Unknown;
  // The Linux TID of the thread whose task list holds the task; 0 for the interpreter's own list
  // (tasks of a thread that has ended).
  std::uint64_t os_thread_id = 0;
  // The tasks (and, rarely, other futures) that await this one: a TaskGroup's parent task,
  // gather's and shield's caller, a task doing `await task`.
  std::vector<std::uint64_t> awaited_by;
  // Innermost first: the suspended coroutines' frames, from the one the task runs down to the
  // one it awaits; for the running task, its thread's frames from the top down to its coroutine.
  std::vector<model::Frame> frames;
};

struct AsyncTasks {
  std::vector<AsyncTask> tasks;
  // Tasks whose object or coroutine chain read as nonsense (freed or moving while read): left
  // out, like a torn stack.
  std::uint64_t torn = 0;
  // The walk stopped at its limit (AsyncTasks::kMaxTasks tasks, kMaxChain coroutines per task).
  bool truncated = false;
  // What this version keeps that could not be read, or does not keep at all, one sentence each:
  // the output says so rather than printing a partial tree as if it were whole.
  std::vector<std::string> missing;

  static constexpr std::size_t kMaxTasks = 100000;
  static constexpr std::size_t kMaxChain = 256;
};

}  // namespace dapprof::sampler
