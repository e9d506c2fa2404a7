#pragma once
// The asyncio tasks that sampled threads are running now, with the tasks awaiting them up to a
// root, for async "running" sampling on CPython 3.14+: read from each thread state's running
// task, a level of awaiters at a time, so that a sample costs a few reads more than a plain one
// rather than a walk of every task. Frames of a running task are its thread's, from the top of
// the stack already walked for the sample down to the task's own coroutine.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"
#include "model/snapshot.hpp"
#include "sampler/async_tasks.hpp"
#include "sampler/python/asyncio_debug.hpp"
#include "sampler/python/coroutine_chains.hpp"
#include "sampler/python/objects.hpp"
#include "sampler/python/stack_walk.hpp"
#include "sampler/python/task_objects.hpp"

namespace dapprof::sampler::python {

// A thread of the sample: where its thread state is, and the address of each of its Python
// frames as walked, innermost first (in the order of its stack's Python frames).
struct SampledThread {
  Address tstate = 0;
  std::vector<Address> frames;
};

class RunningTasks {
 public:
  RunningTasks(const Objects& objects, StackWalker& walker, const AsyncioTarget& target)
      : objects_(objects), walker_(walker), target_(target), tasks_(objects, target) {}

  // `threads` parallel to `snap.threads`. The tasks running in them (state Running, os_thread_id
  // their thread's) and every task awaiting those, each awaited by the first of its awaiters
  // only (the lowest address: the one task_stack follows). TornRead if any reads as nonsense.
  Result<AsyncTasks> read(const model::Snapshot& snap, const std::vector<SampledThread>& threads);

 private:
  // A waiting awaiter's coroutine chain as last read. While the task waits on the same future
  // with the same coroutine, and its innermost coroutine is at the same instruction, the chain
  // is the same: only that instruction word is read again, not every coroutine and code object
  // of the chain (most of what a running sample would touch beyond a plain one).
  struct KnownChain {
    Address coro = 0;
    Address fut_waiter = 0;
    CoroutineChains::Tip tip;
    std::vector<model::Frame> frames;
  };
  // The chains of `waiting`'s tasks (indices into `tasks`), from `known_` where still true.
  Status chains_of(AsyncTasks& result, const std::vector<std::size_t>& waiting,
                   const std::vector<TaskFields>& fields);

  const Objects& objects_;
  StackWalker& walker_;
  AsyncioTarget target_;
  TaskObjects tasks_;
  std::unordered_map<Address, KnownChain> known_;
};

// The frames of `stack` from its top down to its Python frame number `python_index` (0 being
// the innermost Python frame): native frames merged among them are kept.
std::vector<model::Frame> frames_down_to(const std::vector<model::Frame>& stack,
                                         std::size_t python_index);

}  // namespace dapprof::sampler::python
