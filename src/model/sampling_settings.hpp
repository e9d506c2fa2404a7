#pragma once
// How a profiling run samples, whether `dapprof record` or startProfiling asked for it: the
// settings a user chooses, passed unchanged from the command line or the request to the sampler.
#include <cstdint>
#include <optional>
#include <string_view>

namespace dapprof::model {

// Sampling by asyncio task (record --async-aware, startProfiling's "async"). Off: threads' stacks
// as they are. Running: a thread stepping a task has that task's stack: its coroutine frames
// under its task frame, under the tasks awaiting it, under one event_loop_frame(). All: that, and
// every other pending task once per tick too, as a waiting task's stack ending at what it awaits
// (wall time: where requests wait).
enum class AsyncMode : std::uint8_t { Off, Running, All };

// Which threads a sample holds (record --mode, startProfiling's "mode"), named as CPython 3.15's
// own profiler names its modes; sampler/loop/sampling_mode.cpp is what each means. Active, the
// default: threads the kernel shows running, less those in a well-known waiting function. Wall:
// every thread. Cpu: threads the kernel shows running or runnable. Gil: the GIL's holder.
// Exception: threads handling an exception, under a frame naming its type.
enum class SamplingMode : std::uint8_t { Active, Wall, Cpu, Gil, Exception };

// "active", "wall", "cpu", "gil", "exception".
std::string_view sampling_mode_name(SamplingMode mode);
std::optional<SamplingMode> sampling_mode_named(std::string_view name);

// The mode of a request that may also use the older switches: `idle` is Wall, `gil` Gil (both
// together Gil, as they always kept the GIL's holder whatever it did). `mode` Active means none
// was named. Nothing when the switches name another mode than `mode`: the caller says which of
// its spellings conflict.
std::optional<SamplingMode> sampling_mode_with_aliases(SamplingMode mode, bool idle, bool gil);

struct SamplingSettings {
  double rate_hz = 100;      // samples per second
  bool nonblocking = false;  // false: the target's threads are paused for each read
  SamplingMode mode = SamplingMode::Active;
  bool native = false;        // merge native frames (needs blocking mode)
  bool gc = true;             // a collecting thread gets model::gc_frame() on top
  bool opcodes = false;       // each Python frame gets its instruction (model::Instruction)
  bool subprocesses = false;  // also sample child Python processes as they appear
  AsyncMode async = AsyncMode::Off;
  bool operator==(const SamplingSettings&) const = default;
};

}  // namespace dapprof::model
