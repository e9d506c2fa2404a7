#include "sampler/python/task_stacks.hpp"

#include <algorithm>
#include <unordered_set>

namespace dapprof::sampler::python {
namespace {

// Each task's id and position, sorted by id: one allocation a sample, where a hash map would
// make one per task.
using Index = std::vector<std::pair<std::uint64_t, std::size_t>>;

Index index_of(const AsyncTasks& tasks) {
  Index index;
  index.reserve(tasks.tasks.size());
  for (std::size_t i = 0; i < tasks.tasks.size(); ++i) index.emplace_back(tasks.tasks[i].id, i);
  std::sort(index.begin(), index.end());
  return index;
}

const AsyncTask* find(const AsyncTasks& tasks, const Index& index, std::uint64_t id) {
  const auto it = std::lower_bound(index.begin(), index.end(), std::pair{id, std::size_t{0}});
  return it != index.end() && it->first == id ? &tasks.tasks[it->second] : nullptr;
}

// The awaiter a task's stack follows: the lowest address among those read.
const AsyncTask* parent_of(const AsyncTasks& tasks, const Index& index, const AsyncTask& t) {
  const AsyncTask* parent = nullptr;
  for (auto id : t.awaited_by)
    if (const AsyncTask* p = find(tasks, index, id); p && (!parent || id < parent->id)) parent = p;
  return parent;
}

// `seen`: scratch, kept by the caller across stacks (a chain is short: a linear search of the
// tasks already in it is cheaper than a set made for each stack).
std::vector<model::Frame> stack_of(const AsyncTasks& tasks, const Index& index, std::size_t at,
                                   std::vector<std::uint64_t>& seen) {
  std::vector<model::Frame> out;
  seen.clear();
  for (std::size_t depth = 0; depth < AsyncTasks::kMaxChain; ++depth) {
    const AsyncTask& t = tasks.tasks[at];
    if (std::find(seen.begin(), seen.end(), t.id) != seen.end()) break;  // a cycle of awaits
    seen.push_back(t.id);
    out.insert(out.end(), t.frames.begin(), t.frames.end());
    out.push_back(model::task_frame(t.name, t.state));
    const AsyncTask* parent = parent_of(tasks, index, t);
    if (!parent) break;
    at = static_cast<std::size_t>(parent - tasks.tasks.data());
  }
  out.push_back(model::event_loop_frame());
  return out;
}

}  // namespace

std::vector<model::Frame> task_stack(const AsyncTasks& tasks, std::size_t index) {
  std::vector<std::uint64_t> seen;
  return stack_of(tasks, index_of(tasks), index, seen);
}

void apply_task_stacks(model::Snapshot& snap, const AsyncTasks& tasks, model::AsyncMode mode,
                       const std::unordered_map<std::uint64_t, model::ThreadInfo>& threads) {
  if (mode == model::AsyncMode::Off) return;
  const Index index = index_of(tasks);
  std::vector<std::uint64_t> seen;
  const std::size_t own_stacks = snap.threads.size();
  // A task whose stack another's follows (a TaskGroup's parent, gather's caller) waits for that
  // one: its time is in theirs, under it, and is not sampled again on its own.
  std::unordered_set<std::uint64_t> followed;
  if (mode == model::AsyncMode::All)
    for (const auto& t : tasks.tasks)
      if (const auto* parent = parent_of(tasks, index, t)) followed.insert(parent->id);
  for (std::size_t i = 0; i < tasks.tasks.size(); ++i) {
    const AsyncTask& t = tasks.tasks[i];
    if (t.state == TaskState::Running) {
      // A running task the loop has not entered yet (no frames): its thread shows the loop.
      if (t.frames.empty()) continue;
      for (std::size_t k = 0; k < own_stacks; ++k)
        if (snap.threads[k].info.os_thread_id == t.os_thread_id)
          snap.threads[k].frames = stack_of(tasks, index, i, seen);
      continue;
    }
    if (mode != model::AsyncMode::All || followed.contains(t.id)) continue;
    model::ThreadStack stack;
    const auto own = std::find_if(
        snap.threads.begin(), snap.threads.begin() + static_cast<long>(own_stacks),
        [&](const model::ThreadStack& s) { return s.info.os_thread_id == t.os_thread_id; });
    if (own != snap.threads.begin() + static_cast<long>(own_stacks)) {
      stack.info = own->info;
    } else if (const auto it = threads.find(t.os_thread_id); it != threads.end()) {
      stack.info = it->second;
    } else {
      stack.info.pid = snap.pid;
      stack.info.os_thread_id = t.os_thread_id;
    }
    stack.waiting_task = true;
    stack.frames = stack_of(tasks, index, i, seen);
    snap.threads.push_back(std::move(stack));
  }
}

}  // namespace dapprof::sampler::python
