#pragma once
// Reading every pending asyncio task of a CPython 3.8-3.13 target from outside, into the same
// AsyncTasks the 3.14+ reader (asyncio_tasks.hpp) gives. These versions publish nothing for it:
// the tasks come from asyncio's own registries (asyncio_legacy_registry.hpp), each task from the
// C Task layout tools/layouts mirrors (asyncio_legacy_task.hpp), who awaits whom from what the
// objects keep (asyncio_legacy_awaiters.hpp), the coroutine chains from their frames
// (legacy_coroutine_chains.hpp), and each task's thread from its event loop's _thread_id.
// The running task of each loop (_current_tasks) gets its thread's frames from the top of the
// stack down to its coroutine's frame, found by address among that stack's frames.
#include <sys/types.h>

#include <chrono>
#include <unordered_map>

#include "common/result.hpp"
#include "sampler/async_tasks.hpp"
#include "sampler/python/asyncio_legacy_registry.hpp"
#include "sampler/python/discovery.hpp"
#include "sampler/python/objects.hpp"
#include "sampler/python/stack_walk.hpp"

namespace dapprof::sampler::python {

class LegacyAsyncioReader {
 public:
  LegacyAsyncioReader(pid_t pid, const Objects& objects, StackWalker& walker,
                      const Interpreter& interp)
      : pid_(pid), objects_(objects), walker_(walker), interp_(interp) {}

  // Every task of every interpreter that imported asyncio. The caller pauses the target for a
  // consistent tree; read while it runs, a task freed or moved meanwhile is counted as torn.
  // NotPython if no interpreter imported asyncio; UnsupportedVersion if the target's Task is not
  // of the layout known for its version (a patch release that changed it).
  Result<AsyncTasks> read();

  // How long what was found by name (the registry's places, each loop's thread) is trusted: a
  // reader kept across samples finds them again at most this often, not at every sample.
  static constexpr std::chrono::seconds kKeep{1};

 private:
  using Clock = std::chrono::steady_clock;
  // The tasks of one interpreter, appended to `result`; false if it has not imported asyncio.
  Result<bool> read_interpreter(Address interp, Address modules, Address threads_head,
                                AsyncTasks& result);
  // The registry of `interp`, from its places as last found while they are fresh.
  Result<LegacyRegistry> registry(Address interp, Address modules, std::size_t room);
  // The pthread_t of the thread running `loop` (its _thread_id), 0 if it runs in none.
  Result<std::uint64_t> loop_thread(Address loop);

  pid_t pid_;
  const Objects& objects_;
  StackWalker& walker_;
  const Interpreter& interp_;
  template <typename T>
  struct Kept {
    T value;
    Clock::time_point at;
  };
  std::unordered_map<Address, Kept<LegacyRegistryPlaces>> places_;  // by interpreter
  std::unordered_map<Address, Kept<std::uint64_t>> loop_threads_;   // by event loop
};

}  // namespace dapprof::sampler::python
