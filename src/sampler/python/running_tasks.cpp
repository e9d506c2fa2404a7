#include "sampler/python/running_tasks.hpp"

#include <algorithm>
#include <unordered_set>

#include "sampler/python/coroutine_chains.hpp"

namespace dapprof::sampler::python {

using Chunk = process::ProcessMemory::Chunk;

std::vector<model::Frame> frames_down_to(const std::vector<model::Frame>& stack,
                                         std::size_t python_index) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < stack.size(); ++i) {
    if (stack[i].native()) continue;
    if (seen++ == python_index) return {stack.begin(), stack.begin() + static_cast<long>(i) + 1};
  }
  return {};
}

Result<AsyncTasks> RunningTasks::read(const model::Snapshot& snap,
                                      const std::vector<SampledThread>& threads) {
  const AsyncioOffsets& o = target_.offsets;
  const Layout& l = objects_.layout();
  const auto& mem = objects_.memory();
  AsyncTasks result;
  // Each thread's running loop and task, in one system call.
  std::vector<Address> words(threads.size() * 2);
  std::vector<Chunk> chunks;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    chunks.push_back({threads[i].tstate + o.tstate_running_loop, &words[2 * i], 8});
    chunks.push_back({threads[i].tstate + o.tstate_running_task, &words[2 * i + 1], 8});
  }
  if (!chunks.empty())
    if (auto s = mem.read_many(chunks); !s) return as_torn(s.error());
  struct Pending {
    Address task = 0;
    std::ptrdiff_t thread = -1;  // the index of the thread running it; -1 for an awaiter
  };
  std::vector<Pending> level;
  std::unordered_set<Address> seen;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    const Address task = words[2 * i + 1] & ~kStackRefTagBits;
    if (words[2 * i] == 0 || task == 0) continue;
    if (!plausible(task)) return torn("implausible running task");
    if (seen.insert(task).second) level.push_back({task, static_cast<std::ptrdiff_t>(i)});
  }
  std::vector<Address> coros;  // of the tasks that wait, parallel to `waiting`
  std::vector<std::size_t> waiting;
  std::vector<std::byte> bytes;
  for (std::size_t depth = 0; !level.empty(); ++depth) {
    if (depth == AsyncTasks::kMaxChain) {
      result.truncated = true;
      break;
    }
    // The tasks of this level, in one system call.
    const std::size_t size = tasks_.size();
    bytes.resize(level.size() * size);
    chunks.clear();
    for (std::size_t k = 0; k < level.size(); ++k)
      chunks.push_back({level[k].task, bytes.data() + k * size, size});
    if (auto s = mem.read_many(chunks); !s) return as_torn(s.error());
    std::vector<Pending> next;
    for (std::size_t k = 0; k < level.size(); ++k) {
      const std::vector<std::byte> one(bytes.begin() + static_cast<long>(k * size),
                                       bytes.begin() + static_cast<long>((k + 1) * size));
      // An awaiter that is a plain future (not a task) ends the chain there.
      if (level[k].thread < 0 && !tasks_.is_task(one)) continue;
      auto fields = tasks_.fields(one);
      if (!fields) return fields.error();
      AsyncTask t;
      t.id = level[k].task;
      auto name = tasks_.cached_name(t.id, fields->name);
      if (!name) return name.error();
      t.name = std::move(*name);
      const bool running = level[k].thread >= 0;
      t.state = TaskObjects::state(*fields, running);
      if (running) {
        const auto i = static_cast<std::size_t>(level[k].thread);
        t.os_thread_id = snap.threads[i].info.os_thread_id;
        const auto& at = threads[i].frames;
        const auto own = std::find(at.begin(), at.end(), fields->coro + l.gen_iframe);
        // Not found: the loop is between the task's step and its coroutine.
        if (fields->coro != 0 && own != at.end())
          t.frames =
              frames_down_to(snap.threads[i].frames, static_cast<std::size_t>(own - at.begin()));
      }
      auto by = tasks_.awaiters(*fields);
      if (!by) return by.error();
      t.awaited_by = std::move(*by);
      if (!t.awaited_by.empty()) {
        const Address parent = *std::min_element(t.awaited_by.begin(), t.awaited_by.end());
        if (!plausible(parent)) return torn("implausible awaiter");
        if (seen.insert(parent).second) next.push_back({parent, -1});
      }
      if (!running) {
        waiting.push_back(result.tasks.size());
        coros.push_back(fields->coro);
      }
      result.tasks.push_back(std::move(t));
    }
    level = std::move(next);
  }
  // The awaiters' coroutine chains, all together.
  auto chains =
      CoroutineChains(objects_, walker_).read(coros, AsyncTasks::kMaxChain, result.truncated);
  for (std::size_t k = 0; k < waiting.size(); ++k) {
    if (!chains[k]) return chains[k].error();
    result.tasks[waiting[k]].frames = std::move(*chains[k]);
  }
  return result;
}

}  // namespace dapprof::sampler::python
