#pragma once
// How a profiling run samples, whether `dapprof record` or startProfiling asked for it: the
// settings a user chooses, passed unchanged from the command line or the request to the sampler.
#include <cstdint>

namespace dapprof::model {

// Sampling by asyncio task (record --async-aware, startProfiling's "async"). Off: threads' stacks
// as they are. Running: a thread stepping a task has that task's stack: its coroutine frames
// under its task frame, under the tasks awaiting it, under one event_loop_frame(). All: that, and
// every other pending task once per tick too, as a waiting task's stack ending at what it awaits
// (wall time: where requests wait).
enum class AsyncMode : std::uint8_t { Off, Running, All };

struct SamplingSettings {
  double rate_hz = 100;       // samples per second
  bool nonblocking = false;   // false: the target's threads are paused for each read
  bool idle = false;          // keep idle threads
  bool gil = false;           // keep only the thread holding the GIL
  bool native = false;        // merge native frames (needs blocking mode)
  bool gc = true;             // a collecting thread gets model::gc_frame() on top
  bool subprocesses = false;  // also sample child Python processes as they appear
  AsyncMode async = AsyncMode::Off;
  bool operator==(const SamplingSettings&) const = default;
};

}  // namespace dapprof::model
