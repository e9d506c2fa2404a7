#include "sampler/python/asyncio_tasks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "sampler/process/pause.hpp"
#include "sampler/python/asyncio_legacy.hpp"
#include "sampler/python/coroutine_chains.hpp"

namespace dapprof::sampler::python {
namespace {

constexpr int kMaxInterpreters = 64;
constexpr std::uint64_t kMaxObjectCopy = 4096;

}  // namespace

Result<AsyncTasks> AsyncioTaskReader::read() {
  const Layout& l = objects_.layout();
  const auto& mem = objects_.memory();
  const AsyncioOffsets& o = target_.offsets;
  if (l.gen_iframe == kAbsent || l.frame_stackpointer == kAbsent || l.set_table == kAbsent) {
    return Error{
        fmt::format("dapprof knows no coroutine layout for Python {}.{}", l.major, l.minor),
        ErrorCode::UnsupportedVersion};
  }
  // Copies of these are made per task, a thousand at a time: sizes from the target that no
  // build has (a misread, or a hostile target) must not turn into gigabytes.
  if (std::max(l.gen_size, l.gen_iframe + l.frame_size) > kMaxObjectCopy ||
      l.code_size > kMaxObjectCopy || l.set_entry_size == 0 || l.set_entry_size > 64 ||
      l.frame_stackpointer + 8 > l.frame_size || l.gen_frame_state >= l.gen_size ||
      o.task_size > kMaxObjectCopy || o.task_node + 8 > o.task_size) {
    return Error{"the target's generator or code object offsets are implausible",
                 ErrorCode::UnsupportedVersion};
  }
  AsyncTasks result;
  std::vector<Listed> listed;
  std::vector<ThreadWords> threads;
  auto head = mem.read<Address>(interp_.runtime + l.runtime_interpreters_head);
  if (!head) return as_torn(head.error());
  std::vector<Address> seen;
  for (Address interp = *head; interp != 0;) {
    if (seen.size() >= kMaxInterpreters ||
        std::find(seen.begin(), seen.end(), interp) != seen.end())
      return torn("interpreter list cycle");
    seen.push_back(interp);
    Address words[2] = {};  // threads_head, next
    std::vector<process::ProcessMemory::Chunk> chunks{
        {interp + l.interp_threads_head, &words[0], 8}, {interp + l.interp_next, &words[1], 8}};
    if (auto s = mem.read_many(chunks); !s) return as_torn(s.error());
    auto raw = walker_.threads(interp, words[0]);
    if (!raw) return raw.error();
    for (const auto& t : *raw) {
      Address loop_task[2] = {};
      std::vector<process::ProcessMemory::Chunk> c{
          {t.tstate + o.tstate_running_loop, &loop_task[0], 8},
          {t.tstate + o.tstate_running_task, &loop_task[1], 8}};
      if (auto s = mem.read_many(c); !s) return as_torn(s.error());
      threads.push_back({t.tstate, t.native_thread_id, t.top_frame,
                         loop_task[0] != 0 ? loop_task[1] & ~kStackRefTagBits : 0});
      ring(t.tstate + o.tstate_tasks_head, t.native_thread_id, t.tstate, listed, result);
    }
    ring(interp + o.interp_tasks_head, 0, 0, listed, result);
    interp = words[1];
  }
  // Each task alone, then the coroutine chains of those not running, all together.
  std::vector<AsyncTask> read_tasks;
  std::vector<Address> coros;
  for (const auto& item : listed) {
    Address coro = 0;
    auto t = task(item, threads, coro);
    if (!t) {
      if (t.code() != ErrorCode::TornRead) return t.error();
      ++result.torn;
      continue;
    }
    if (t->frames.size() >= AsyncTasks::kMaxChain) result.truncated = true;
    read_tasks.push_back(std::move(*t));
    coros.push_back(read_tasks.back().frames.empty() ? coro : 0);
  }
  auto chains =
      CoroutineChains(objects_, walker_).read(coros, AsyncTasks::kMaxChain, result.truncated);
  for (std::size_t i = 0; i < read_tasks.size(); ++i) {
    if (!chains[i]) {
      if (chains[i].code() != ErrorCode::TornRead) return chains[i].error();
      ++result.torn;
      continue;
    }
    if (coros[i] != 0) read_tasks[i].frames = std::move(*chains[i]);
    result.tasks.push_back(std::move(read_tasks[i]));
  }
  return result;
}

void AsyncioTaskReader::ring(Address head, std::uint64_t os_thread_id, Address tstate,
                             std::vector<Listed>& out, AsyncTasks& result) {
  // llist_node is {next, prev}: the ring is followed through `next` (offset 0) back to its head.
  // Each node is inside its task: one read of the task gives its fields and the next node.
  const auto& mem = objects_.memory();
  const std::uint64_t at = target_.offsets.task_node;
  auto node = mem.read<Address>(head);
  if (!node) {
    ++result.torn;
    return;
  }
  for (Address next = *node; next != head;) {
    if (out.size() >= AsyncTasks::kMaxTasks) {
      result.truncated = true;
      return;
    }
    if (!plausible(next) || next < at) {
      ++result.torn;  // the rest of this ring is out of reach
      return;
    }
    Listed item{next - at, os_thread_id, tstate, std::vector<std::byte>(tasks_.size())};
    if (!mem.read(item.task, item.bytes.data(), item.bytes.size())) {
      ++result.torn;
      return;
    }
    next = load<Address>(item.bytes, at);
    out.push_back(std::move(item));
  }
}

Result<AsyncTask> AsyncioTaskReader::task(const Listed& listed,
                                          const std::vector<ThreadWords>& threads, Address& coro) {
  auto fields = tasks_.fields(listed.bytes);
  if (!fields) return fields.error();
  AsyncTask t;
  t.id = listed.task;
  t.os_thread_id = listed.os_thread_id;
  auto name = tasks_.cached_name(listed.task, fields->name);
  if (!name) return name.error();
  t.name = std::move(*name);
  coro = fields->coro;
  const ThreadWords* running = nullptr;
  for (const auto& th : threads)
    if (th.running_task == listed.task) running = &th;
  t.state = TaskObjects::state(*fields, running != nullptr);
  // The running task's frames are its thread's; the others' (and a running task's whose
  // coroutine its loop has not entered yet) are read with every other task's, by the caller.
  if (running) {
    t.os_thread_id = running->os_thread_id;
    if (coro != 0) {
      auto frames = running_frames(*running, coro);
      if (!frames) return frames.error();
      t.frames = std::move(*frames);
    }
  }
  auto by = tasks_.awaiters(*fields);
  if (!by) return by.error();
  t.awaited_by = std::move(*by);
  return t;
}

Result<std::vector<model::Frame>> AsyncioTaskReader::running_frames(const ThreadWords& thread,
                                                                    Address coro) {
  const Layout& l = objects_.layout();
  std::vector<StackWalker::FrameAt> where;
  auto frames = walker_.walk(thread.top_frame, nullptr, nullptr, &where);
  if (!frames) return frames.error();
  const Address own = coro + l.gen_iframe;
  for (std::size_t i = 0; i < where.size(); ++i) {
    if (where[i].frame != own) continue;
    frames->resize(std::min(i + 1, AsyncTasks::kMaxChain));
    return std::move(*frames);
  }
  // Not entered yet, or just left: the loop is between the task's step and its coroutine.
  return std::vector<model::Frame>{};
}

}  // namespace dapprof::sampler::python

namespace dapprof::sampler::python {

Result<AsyncTasks> read_asyncio_tasks(pid_t pid, const Objects& objects, StackWalker& walker,
                                      const Interpreter& interp, bool nonblocking) {
  const Layout& l = objects.layout();
  if (!l.at_least(3, 8)) {
    return Error{fmt::format("dapprof reads the asyncio tasks of CPython 3.8 and newer; process "
                             "{} runs Python {}",
                             pid, interp.version),
                 ErrorCode::UnsupportedVersion};
  }
  // 3.14+ say where their tasks are (.AsyncioDebug); before, they are found through asyncio's
  // own registries.
  std::optional<AsyncioTarget> target;
  if (l.at_least(3, 14)) {
    auto found = find_asyncio(pid, objects.memory(), interp.binary);
    if (!found) return found.error();
    target = *found;
  }
  // Paused, the tree is one instant's: no task moves between the reads of its awaiters and its
  // coroutines.
  std::optional<process::PausedProcess> pause;
  if (!nonblocking) {
    auto p = process::PausedProcess::pause(pid);
    if (!p) return p.error();
    pause.emplace(std::move(*p));
  }
  try {
    if (!target) return LegacyAsyncioReader(pid, objects, walker, interp).read();
    return AsyncioTaskReader(objects, walker, interp, *target).read();
  } catch (const std::exception& e) {
    // As a snapshot: nothing read from a running target may bring the profiler down.
    return Error{fmt::format("reading the asyncio tasks of process {} failed: {}", pid, e.what()),
                 ErrorCode::TornRead};
  }
}

}  // namespace dapprof::sampler::python
