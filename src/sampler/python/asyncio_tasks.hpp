#pragma once
// Reading every pending asyncio task of a CPython 3.14+ target from outside: the per-thread and
// per-interpreter task rings the _asyncio module keeps (their offsets from its .AsyncioDebug
// section, see asyncio_debug.hpp), each task's name, coroutine chain and awaiters, and each
// thread's running task. Bounded: at most AsyncTasks::kMaxTasks tasks and kMaxChain coroutines
// per task; a task that reads as nonsense is counted in AsyncTasks::torn and left out.
#include <sys/types.h>

#include <vector>

#include "common/result.hpp"
#include "sampler/async_tasks.hpp"
#include "sampler/python/asyncio_debug.hpp"
#include "sampler/python/discovery.hpp"
#include "sampler/python/objects.hpp"
#include "sampler/python/stack_walk.hpp"
#include "sampler/python/task_objects.hpp"

namespace dapprof::sampler::python {

class AsyncioTaskReader {
 public:
  AsyncioTaskReader(const Objects& objects, StackWalker& walker, const Interpreter& interp,
                    const AsyncioTarget& target)
      : objects_(objects),
        walker_(walker),
        interp_(interp),
        target_(target),
        tasks_(objects, target) {}

  // Every task of every interpreter. The caller pauses the target for a consistent tree; read
  // while it runs, a task freed or moved meanwhile is counted as torn.
  Result<AsyncTasks> read();

 private:
  struct Listed {
    Address task = 0;
    std::uint64_t os_thread_id = 0;
    Address tstate = 0;            // of the thread whose ring held it; 0 for the interpreter's
    std::vector<std::byte> bytes;  // the task object, as read while following the ring
  };
  struct ThreadWords {
    Address tstate = 0;
    std::uint64_t os_thread_id = 0;
    Address top_frame = 0;
    Address running_task = 0;  // 0 unless its loop runs a task now
  };

  // The tasks of the ring whose head (a llist_node) is at `head`, appended to `out`.
  void ring(Address head, std::uint64_t os_thread_id, Address tstate, std::vector<Listed>& out,
            AsyncTasks& result);
  // One task, without its coroutine chain unless it is running (`coro` receives its
  // coroutine); TornRead if it reads as nonsense. Not const: task names are cached.
  Result<AsyncTask> task(const Listed& listed, const std::vector<ThreadWords>& threads,
                         Address& coro);
  // The running task's frames: its thread's stack from the top down to the task's coroutine;
  // none if the coroutine is not on that stack (the loop is about to enter it, or just left it).
  Result<std::vector<model::Frame>> running_frames(const ThreadWords& thread, Address coro);

  const Objects& objects_;
  StackWalker& walker_;
  const Interpreter& interp_;
  AsyncioTarget target_;
  TaskObjects tasks_;
};

// The tasks of process `pid` (attached as `objects` and `walker` read it): paused for the read
// unless `nonblocking`. 3.14+ through this reader, 3.8-3.13 through LegacyAsyncioReader
// (asyncio_legacy.hpp). UnsupportedVersion before 3.8; NotPython if asyncio is not imported.
Result<AsyncTasks> read_asyncio_tasks(pid_t pid, const Objects& objects, StackWalker& walker,
                                      const Interpreter& interp, bool nonblocking);

}  // namespace dapprof::sampler::python
