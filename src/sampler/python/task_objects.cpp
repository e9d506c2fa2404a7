#include "sampler/python/task_objects.hpp"

#include <fmt/format.h>

namespace dapprof::sampler::python {
namespace {

constexpr std::uint64_t kLongSubclass = 1ul << 24;     // Py_TPFLAGS_LONG_SUBCLASS
constexpr std::uint64_t kUnicodeSubclass = 1ul << 28;  // Py_TPFLAGS_UNICODE_SUBCLASS
// A set of awaiters is small (a task awaited by a few); a larger table is a misread.
constexpr std::uint64_t kMaxSetSlots = 1u << 16;
constexpr std::size_t kMaxNameChars = 255;
// TaskObj declares `int task_num_cancels_requested; PyObject *task_fut_waiter; PyObject
// *task_coro` in this order (3.11 to 3.15); the section gives task_coro's offset only. The
// count (Task.cancelling()) is what makes a task "cancelling": it stays above 0 from cancel()
// until the task ends, unless the task uncancels.
constexpr std::uint64_t kCancelsBeforeCoro = 16;
constexpr std::uint64_t kFutWaiterBeforeCoro = 8;
constexpr int kMaxPlausibleCancels = 1 << 20;
// Names kept for the running-task reader: one per task seen running recently.
constexpr std::size_t kMaxCachedNames = 4096;

}  // namespace

Result<TaskFields> TaskObjects::fields(std::span<const std::byte> task) const {
  const AsyncioOffsets& o = target_.offsets;
  if (load<char>(task, o.task_is_task) == 0) return torn("a future in a task list");
  TaskFields f;
  f.name = load<Address>(task, o.task_name) & ~kStackRefTagBits;
  f.coro = load<Address>(task, o.task_coro) & ~kStackRefTagBits;
  f.awaited_by = load<Address>(task, o.task_awaited_by) & ~kStackRefTagBits;
  f.awaited_by_is_set = load<char>(task, o.task_awaited_by_is_set) != 0;
  f.cancels = -1;
  if (o.task_coro >= kCancelsBeforeCoro) {
    const int cancels = load<int>(task, o.task_coro - kCancelsBeforeCoro);
    if (cancels >= 0 && cancels <= kMaxPlausibleCancels) f.cancels = cancels;
    f.fut_waiter = load<Address>(task, o.task_coro - kFutWaiterBeforeCoro) & ~kStackRefTagBits;
  }
  if (!plausible(f.name)) return torn("implausible task name");
  return f;
}

Result<std::string> task_name_text(const Objects& objects, Address name) {
  // A task named by asyncio's counter keeps the number (an int) until its name is asked for.
  auto type = objects.type_of(name);
  if (!type) return type.error();
  auto flags = objects.memory().read<std::uint64_t>(*type + objects.layout().type_flags);
  if (!flags) return as_torn(flags.error());
  if (*flags & kLongSubclass) {
    auto n = objects.unsigned_int(name);
    if (!n) return n.error();
    return fmt::format("Task-{}", *n);
  }
  if (!(*flags & kUnicodeSubclass)) return torn("task name neither str nor int");
  return objects.str(name, kMaxNameChars);
}

Result<std::string> TaskObjects::name(Address name) const { return task_name_text(objects_, name); }

Result<std::string> TaskObjects::cached_name(Address task, Address name_object) {
  if (const auto it = names_.find(task); it != names_.end() && it->second.name == name_object)
    return it->second.text;
  auto text = name(name_object);
  if (!text) return text.error();
  if (names_.size() >= kMaxCachedNames) names_.clear();
  names_[task] = {name_object, *text};
  return text;
}

Result<std::vector<std::uint64_t>> TaskObjects::awaiters(const TaskFields& task) const {
  std::vector<std::uint64_t> out;
  if (task.awaited_by == 0) return out;
  if (!task.awaited_by_is_set) {
    out.push_back(task.awaited_by);
    return out;
  }
  const Layout& l = objects_.layout();
  const auto& mem = objects_.memory();
  std::int64_t used = 0, mask = 0;
  Address table = 0;
  std::vector<process::ProcessMemory::Chunk> c{{task.awaited_by + l.set_used, &used, 8},
                                               {task.awaited_by + l.set_mask, &mask, 8},
                                               {task.awaited_by + l.set_table, &table, 8}};
  if (auto s = mem.read_many(c); !s) return as_torn(s.error());
  if (mask < 0 || static_cast<std::uint64_t>(mask) >= kMaxSetSlots || used < 0 || used > mask + 1 ||
      !plausible(table))
    return torn("implausible awaited-by set");
  std::vector<std::byte> entries((static_cast<std::uint64_t>(mask) + 1) * l.set_entry_size);
  if (auto s = mem.read(table, entries.data(), entries.size()); !s) return as_torn(s.error());
  // setentry is {key, hash}: an empty slot has no key, a removed one the dummy key.
  for (std::size_t i = 0; i < entries.size() && out.size() < static_cast<std::size_t>(used);
       i += l.set_entry_size) {
    const auto key = load<Address>(entries, i);
    if (key != 0 && key != target_.set_dummy) out.push_back(key);
  }
  return out;
}

TaskState TaskObjects::state(const TaskFields& task, bool running) {
  if (running) return TaskState::Running;
  if (task.cancels < 0) return TaskState::Unknown;
  return task.cancels > 0 ? TaskState::Cancelling : TaskState::Waiting;
}

}  // namespace dapprof::sampler::python
