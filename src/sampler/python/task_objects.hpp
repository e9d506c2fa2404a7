#pragma once
// The fields of a CPython 3.14+ asyncio Task object, read from a copy of its bytes (offsets from
// the target's .AsyncioDebug section), and the objects they point at: its name and the set or
// single object of its awaiters. Shared by the reader of every task (dump --async, async "all")
// and the reader of the running tasks alone (async "running").
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"
#include "sampler/async_tasks.hpp"
#include "sampler/python/asyncio_debug.hpp"
#include "sampler/python/objects.hpp"

namespace dapprof::sampler::python {

// A task's name from its task_name field: a str, or (a task named by asyncio's counter, until its
// name is asked for) the int N of "Task-N". Shared by every version's reader.
Result<std::string> task_name_text(const Objects& objects, Address name);

struct TaskFields {
  Address name = 0;        // a str, or the int of asyncio's counter (Task-N) until asked for
  Address coro = 0;        // its coroutine (0 once finished)
  Address awaited_by = 0;  // a task or future, a set of them, or 0
  // What the task's last step yielded and it now waits for (0 while it runs or is ready to);
  // 0 too where it cannot be read.
  Address fut_waiter = 0;
  bool awaited_by_is_set = false;
  int cancels = 0;  // Task.cancelling(); -1 where it cannot be known
};

class TaskObjects {
 public:
  TaskObjects(const Objects& objects, const AsyncioTarget& target)
      : objects_(objects), target_(target) {}

  std::uint64_t size() const { return target_.offsets.task_size; }
  // Whether the bytes are a Task's rather than another future's (what a task may be awaited by).
  bool is_task(std::span<const std::byte> object) const {
    return load<char>(object, target_.offsets.task_is_task) != 0;
  }
  // TornRead for bytes that are not a task (a future in a task list, or memory reused).
  Result<TaskFields> fields(std::span<const std::byte> task) const;
  // The task's name as Task.get_name() would give it.
  Result<std::string> name(Address name) const;
  // The name, from a cache kept while the same name object stays at the task (names change
  // rarely; the cache is cleared when it grows past a bound).
  Result<std::string> cached_name(Address task, Address name);
  Result<std::vector<std::uint64_t>> awaiters(const TaskFields& task) const;
  static TaskState state(const TaskFields& task, bool running);

 private:
  const Objects& objects_;
  AsyncioTarget target_;
  struct Named {
    Address name = 0;
    std::string text;
  };
  std::unordered_map<Address, Named> names_;
};

}  // namespace dapprof::sampler::python
