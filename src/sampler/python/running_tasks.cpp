#include "sampler/python/running_tasks.hpp"

#include <algorithm>
#include <span>
#include <unordered_set>

namespace dapprof::sampler::python {

using Chunk = process::ProcessMemory::Chunk;
// Chains kept for the awaiters of recently running tasks (a few per thread in practice).
constexpr std::size_t kMaxKnownChains = 4096;

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
  std::vector<TaskFields> waiting_fields;  // of the tasks that wait, parallel to `waiting`
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
      const std::span<const std::byte> one(bytes.data() + k * size, size);
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
        waiting_fields.push_back(*fields);
      }
      result.tasks.push_back(std::move(t));
    }
    level = std::move(next);
  }
  if (auto s = chains_of(result, waiting, waiting_fields); !s) return s.error();
  return result;
}

Status RunningTasks::chains_of(AsyncTasks& result, const std::vector<std::size_t>& waiting,
                               const std::vector<TaskFields>& fields) {
  const Layout& l = objects_.layout();
  // The tasks whose chain is known, and the instruction words that tell whether it still is, in
  // one system call.
  std::vector<std::size_t> known;  // indices into `waiting`
  std::vector<Address> instrs;
  std::vector<Chunk> chunks;
  for (std::size_t k = 0; k < waiting.size(); ++k) {
    const auto it = known_.find(result.tasks[waiting[k]].id);
    if (it == known_.end() || fields[k].fut_waiter == 0 || it->second.tip.coro == 0 ||
        it->second.coro != fields[k].coro || it->second.fut_waiter != fields[k].fut_waiter)
      continue;
    known.push_back(k);
  }
  instrs.resize(known.size());
  for (std::size_t j = 0; j < known.size(); ++j) {
    const auto& chain = known_[result.tasks[waiting[known[j]]].id];
    chunks.push_back({chain.tip.coro + l.gen_iframe + l.frame_instr, &instrs[j], sizeof(Address)});
  }
  std::vector<char> failed;
  objects_.memory().read_each(chunks, failed);
  std::vector<char> done(waiting.size(), 0);
  for (std::size_t j = 0; j < known.size(); ++j) {
    auto& task = result.tasks[waiting[known[j]]];
    const auto& chain = known_[task.id];
    if (failed[j] || instrs[j] != chain.tip.instr) continue;
    task.frames = chain.frames;
    done[known[j]] = 1;
  }
  // The rest, all together.
  std::vector<std::size_t> unknown;
  std::vector<Address> coros;
  for (std::size_t k = 0; k < waiting.size(); ++k) {
    if (done[k]) continue;
    unknown.push_back(k);
    coros.push_back(fields[k].coro);
  }
  if (unknown.empty()) return Ok{};
  std::vector<CoroutineChains::Tip> tips;
  auto chains = CoroutineChains(objects_, walker_)
                    .read(coros, AsyncTasks::kMaxChain, result.truncated, &tips);
  if (known_.size() + unknown.size() > kMaxKnownChains) known_.clear();
  for (std::size_t j = 0; j < unknown.size(); ++j) {
    if (!chains[j]) return chains[j].error();
    const std::size_t k = unknown[j];
    auto& task = result.tasks[waiting[k]];
    task.frames = std::move(*chains[j]);
    if (fields[k].fut_waiter != 0 && tips[j].coro != 0)
      known_[task.id] = {fields[k].coro, fields[k].fut_waiter, tips[j], task.frames};
    else
      known_.erase(task.id);
  }
  return Ok{};
}

}  // namespace dapprof::sampler::python
