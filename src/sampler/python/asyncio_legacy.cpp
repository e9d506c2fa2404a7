#include "sampler/python/asyncio_legacy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <unordered_map>

#include "sampler/process/tasks.hpp"
#include "sampler/python/asyncio_legacy_awaiters.hpp"
#include "sampler/python/asyncio_legacy_kinds.hpp"
#include "sampler/python/asyncio_legacy_task.hpp"
#include "sampler/python/legacy_coroutine_chains.hpp"
#include "sampler/python/pthread_tids.hpp"

namespace dapprof::sampler::python {
namespace {

constexpr std::size_t kMaxInterpreters = 64;
// Event loops whose thread is kept (a program runs a few).
constexpr std::size_t kMaxLoops = 1024;
// Objects copied per task; larger sizes are no build's (a misread, or a hostile target).
constexpr std::uint64_t kMaxObjectCopy = 4096;
// Tasks named in one note about awaiters not found.
constexpr std::size_t kNamedInNote = 5;

struct Thread {
  std::uint64_t pthread = 0;
  std::uint64_t tid = 0;
  Address top_frame = 0;
};

}  // namespace

Result<AsyncTasks> LegacyAsyncioReader::read() {
  const Layout& l = objects_.layout();
  if (l.task_size == kAbsent || l.set_table == kAbsent || l.weakref_object == kAbsent ||
      (l.gen_frame == kAbsent && l.gen_iframe == kAbsent)) {
    return Error{fmt::format("dapprof knows no asyncio layout for Python {}.{}", l.major, l.minor),
                 ErrorCode::UnsupportedVersion};
  }
  if (l.task_size > kMaxObjectCopy || l.gen_size > kMaxObjectCopy ||
      l.frame_size > kMaxObjectCopy || l.code_size > kMaxObjectCopy || l.set_entry_size == 0 ||
      l.set_entry_size > 64) {
    return Error{"the target's task, generator or code object offsets are implausible",
                 ErrorCode::UnsupportedVersion};
  }
  AsyncTasks result;
  const auto& mem = objects_.memory();
  auto head = mem.read<Address>(interp_.runtime + l.runtime_interpreters_head);
  if (!head) return as_torn(head.error());
  std::vector<Address> seen;
  bool imported = false;
  for (Address interp = *head; interp != 0;) {
    if (seen.size() >= kMaxInterpreters ||
        std::find(seen.begin(), seen.end(), interp) != seen.end())
      return torn("interpreter list cycle");
    seen.push_back(interp);
    Address words[3] = {};  // modules, threads_head, next
    std::vector<process::ProcessMemory::Chunk> chunks{
        {interp + l.interp_modules, &words[0], 8},
        {interp + l.interp_threads_head, &words[1], 8},
        {interp + l.interp_next, &words[2], 8}};
    if (auto s = mem.read_many(chunks); !s) return as_torn(s.error());
    if (words[0] != 0) {
      auto got = read_interpreter(interp, words[0], words[1], result);
      if (!got) return got.error();
      imported = imported || *got;
    }
    interp = words[2];
  }
  if (!imported) {
    return Error{fmt::format("process {} has not imported asyncio: it has no tasks to show", pid_),
                 ErrorCode::NotPython};
  }
  if (!l.at_least(3, 11)) {
    result.missing.push_back(fmt::format(
        "Python {}.{} keeps no count of cancel() requests (Task.cancelling() is 3.11's): a task "
        "cancelled while it awaited and still cleaning up shows as waiting",
        l.major, l.minor));
  }
  return result;
}

Result<LegacyRegistry> LegacyAsyncioReader::registry(Address interp, Address modules,
                                                     std::size_t room) {
  const auto now = Clock::now();
  if (const auto it = places_.find(interp); it != places_.end() && now - it->second.at < kKeep) {
    auto reg = read_legacy_registry(objects_, it->second.value, room);
    if (reg || reg.code() != ErrorCode::TornRead) return reg;
    places_.erase(it);  // moved (a module reloaded, an interpreter's memory reused): find again
  }
  auto places = find_legacy_registry(objects_, modules);
  if (!places) return places.error();
  if (places_.size() >= kMaxInterpreters) places_.clear();
  places_[interp] = {*places, now};
  return read_legacy_registry(objects_, *places, room);
}

Result<std::uint64_t> LegacyAsyncioReader::loop_thread(Address loop) {
  if (loop == 0) return std::uint64_t{0};
  const auto now = Clock::now();
  if (const auto it = loop_threads_.find(loop);
      it != loop_threads_.end() && now - it->second.at < kKeep)
    return it->second.value;
  auto ident = objects_.instance_attribute(loop, "_thread_id");
  if (!ident && ident.code() != ErrorCode::TornRead) return ident.error();
  if (!ident) return std::uint64_t{0};  // torn: not kept, read again next time
  std::uint64_t pthread = 0;
  if (*ident != 0)
    if (auto n = objects_.unsigned_int(*ident)) pthread = *n;
  if (loop_threads_.size() >= kMaxLoops) loop_threads_.clear();
  loop_threads_[loop] = {pthread, now};
  return pthread;
}

Result<bool> LegacyAsyncioReader::read_interpreter(Address interp, Address modules,
                                                   Address threads_head, AsyncTasks& result) {
  const Layout& l = objects_.layout();
  const auto& mem = objects_.memory();
  const std::size_t room =
      AsyncTasks::kMaxTasks - std::min(AsyncTasks::kMaxTasks, result.tasks.size());
  auto reg = registry(interp, modules, room);
  if (!reg) {
    if (reg.code() == ErrorCode::NotPython) return false;
    return reg.error();
  }
  result.torn += reg->torn;
  result.truncated = result.truncated || reg->truncated;
  // The mirrored layout is of the minor version's patch release tools/layouts measured: a Task
  // of another size is of a patch release that changed it, and is not read as if it were not.
  auto basicsize = mem.read<std::int64_t>(reg->task_type + l.type_basicsize);
  if (!basicsize) return as_torn(basicsize.error());
  if (*basicsize != static_cast<std::int64_t>(l.task_size)) {
    return Error{fmt::format("the _asyncio.Task of this Python {} is {} bytes, where the {}.{} "
                             "layout dapprof knows has {}: its tasks cannot be read",
                             interp_.version, *basicsize, l.major, l.minor, l.task_size),
                 ErrorCode::UnsupportedVersion};
  }
  ObjectKinds kinds(objects_, reg->task_type, reg->future_type);
  auto tasks = read_legacy_tasks(objects_, kinds, reg->tasks, result.torn);
  if (!tasks) return tasks.error();

  // The threads, by pthread_t (what a loop's _thread_id holds), with their TIDs.
  auto raw = walker_.threads(interp, threads_head);
  if (!raw) return raw.error();
  std::vector<Thread> threads;
  for (const auto& t : *raw) threads.push_back({t.thread_id, t.native_thread_id, t.top_frame});
  if (l.tstate_native_thread_id == kAbsent && !threads.empty()) {
    auto known = process::list_threads(pid_);
    if (!known) return known.error();
    std::vector<std::uint64_t> pthreads;
    for (const auto& t : threads) pthreads.push_back(t.pthread);
    const auto tids = PthreadTids().tids(mem, pthreads, *known, walker_.tids());
    for (std::size_t i = 0; i < threads.size(); ++i) threads[i].tid = tids[i];
  }
  std::unordered_map<Address, std::uint64_t> loop_tid;
  for (const auto& t : *tasks) {
    if (loop_tid.contains(t.loop)) continue;
    std::uint64_t tid = 0;  // the loop is not running (or not a loop asyncio's base class made)
    auto pthread = loop_thread(t.loop);
    if (!pthread) return pthread.error();
    if (*pthread != 0)
      for (const auto& th : threads)
        if (th.pthread == *pthread) tid = th.tid;
    loop_tid.emplace(t.loop, tid);
  }

  // The running tasks' frames: their threads' stacks down to their coroutines' frames.
  LegacyCoroutineChains chains(objects_, walker_);
  std::unordered_map<Address, std::pair<std::uint64_t, std::vector<model::Frame>>> running;
  std::vector<std::pair<std::vector<model::Frame>, std::vector<StackWalker::FrameAt>>> stacks;
  for (const auto& current : reg->current) {
    // (Not a structured binding: clang 14, of the fuzz build, cannot capture one.)
    const Address task = current.second;
    const auto it = std::find_if(tasks->begin(), tasks->end(),
                                 [&](const LegacyTask& t) { return t.id == task; });
    if (it == tasks->end()) continue;
    running[task] = {loop_tid[it->loop], {}};
    auto frame = chains.frame_of(it->coro);
    if (!frame) return frame.error();
    if (stacks.empty()) {
      for (const auto& th : threads) {
        std::vector<StackWalker::FrameAt> where;
        auto frames = walker_.walk(th.top_frame, nullptr, nullptr, &where);
        if (!frames) return frames.error();
        stacks.emplace_back(std::move(*frames), std::move(where));
      }
    }
    for (std::size_t s = 0; s < stacks.size(); ++s) {
      const auto& where = stacks[s].second;
      for (std::size_t i = 0; i < where.size(); ++i) {
        if (*frame == 0 || where[i].frame != *frame) continue;
        auto& r = running[task];
        r.first = threads[s].tid;
        r.second.assign(stacks[s].first.begin(),
                        stacks[s].first.begin() +
                            static_cast<std::ptrdiff_t>(std::min(i + 1, AsyncTasks::kMaxChain)));
      }
    }
  }

  // The others' coroutine chains (and a running task's whose coroutine its loop has not entered
  // yet, or just left), all together.
  std::vector<Address> coros;
  for (const auto& t : *tasks) {
    auto it = running.find(t.id);
    coros.push_back(it != running.end() && !it->second.second.empty() ? 0 : t.coro);
  }
  auto read_chains = chains.read(coros, AsyncTasks::kMaxChain, result.truncated);
  LegacyAwaiters awaiters(objects_, kinds, *tasks);
  std::vector<std::string> unfollowed;
  std::size_t unfollowed_count = 0;
  for (std::size_t i = 0; i < tasks->size(); ++i) {
    const LegacyTask& t = (*tasks)[i];
    if (!read_chains[i]) {
      if (read_chains[i].code() != ErrorCode::TornRead) return read_chains[i].error();
      ++result.torn;
      continue;
    }
    bool lost = false;
    auto by = awaiters.of(i, lost);
    if (!by) {
      if (by.code() != ErrorCode::TornRead) return by.error();
      ++result.torn;
      continue;
    }
    AsyncTask task;
    task.id = t.id;
    task.name = t.name;
    task.awaited_by = std::move(*by);
    auto run = running.find(t.id);
    if (run != running.end()) {
      task.state = TaskState::Running;
      task.os_thread_id = run->second.first;
      task.frames = std::move(run->second.second);
    } else {
      task.state = t.cancelling ? TaskState::Cancelling : TaskState::Waiting;
      task.os_thread_id = loop_tid[t.loop];
    }
    if (task.frames.empty()) task.frames = std::move(*read_chains[i]);
    if (task.frames.size() >= AsyncTasks::kMaxChain) result.truncated = true;
    if (lost && ++unfollowed_count <= kNamedInNote)
      unfollowed.push_back(fmt::format("{} ({:#x})", t.name, t.id));
    result.tasks.push_back(std::move(task));
  }
  if (unfollowed_count > 0) {
    result.missing.push_back(fmt::format(
        "{}{} complete{} through a done-callback a future that no task awaits directly (or that "
        "dapprof does not follow to one): who awaits {} is not shown",
        fmt::join(unfollowed, ", "),
        unfollowed_count > kNamedInNote
            ? fmt::format(" and {} other task(s)", unfollowed_count - kNamedInNote)
            : "",
        unfollowed_count == 1 ? "s" : "", unfollowed_count == 1 ? "it" : "them"));
  }
  return true;
}

}  // namespace dapprof::sampler::python
