#pragma once
// The session's hook for live profiling. A session owns one Profiler and calls it only on its
// strand. Sampling happens on threads of the profiler's own, which reach the session through a
// ProfilerLink: its callbacks post onto the session's strand, so they are safe to call from any
// thread, also after the session has ended (they are then dropped).
//
// Batches are pulled, not pushed: the profiler queues them (bounded, merging or dropping samples
// when the client is slow) and signals data_ready; the session takes them when the client's
// connection has room, so DAP traffic never waits behind profiling data.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "common/result.hpp"
#include "protocol/json.hpp"
#include "protocol/messages.hpp"

namespace dapprof::adapter {

using protocol::Json;

struct ProfilerLink {
  std::function<void(std::uint64_t run)> started;    // complete_start(run) has the answer
  std::function<void()> data_ready;                  // take_data() has something
  std::function<void(std::uint64_t run)> run_ended;  // sampling of `run` ended by itself
};

class Profiler {
 public:
  virtual ~Profiler() = default;
  // startProfiling with validated arguments; `target` is the debuggee or the `pid` argument,
  // already checked to be in the debuggee's process tree. Attaching reads the target's memory and
  // symbol tables, which can take a noticeable time, so it runs on a thread of the profiler's
  // own and the session stays responsive: link.started(run) follows, with the answer in
  // complete_start(run).
  virtual void start(const protocol::StartProfilingArguments& arguments, pid_t target,
                     ProfilerLink link) = 0;
  // start() was called and complete_start() not yet.
  virtual bool starting() const = 0;
  // The startProfiling response body or error, once link.started(run) was called; nullopt if
  // `run` is not the one starting (it was abandoned).
  virtual std::optional<Result<Json>> complete_start(std::uint64_t run) = 0;
  // Sampling is running.
  virtual bool active() const = 0;
  // stopProfiling may be answered: sampling is running, or a run ended by itself (the debuggee
  // exited) and its profile was not collected yet.
  virtual bool stoppable() const = 0;
  // stopProfiling: ends sampling; the last batch is queued for take_data() before this returns.
  // The result is the response body (the summary).
  virtual Result<Json> stop(const protocol::StopProfilingArguments& arguments) = 0;
  // The next profilingData body, if any is queued.
  virtual std::optional<Json> take_data() = 0;
  // Ends the current run if it is `run` (0: whichever is current) and still active, for `reason`
  // unless the sampler ended it (exit, error), which then gives the reason. Returns the
  // profilingStopped body, to send once take_data() is empty; nullopt if already stopped. A run
  // still starting is abandoned (its sampler stops as soon as it is attached).
  virtual std::optional<Json> end_run(std::uint64_t run, protocol::StoppedReason reason) = 0;
  // A run has started (and is running or ended) since the session began: export_profile works.
  virtual bool exportable() const = 0;
  // exportProfile: the current run so far, or the last one, in a format (the response body).
  virtual Result<Json> export_profile(const protocol::ExportProfileArguments& arguments) = 0;
  // The session is over (either peer went away): stop sampling, never call the link again.
  virtual void on_session_end() = 0;
};

using ProfilerFactory = std::function<std::unique_ptr<Profiler>()>;

// Samples waiting for a slow client beyond which the oldest are dropped (and counted): at 1000 Hz
// on ten busy threads, five seconds of data; a few tens of MiB at most.
inline constexpr std::size_t kDefaultMaxPendingSamples = 50'000;  // see Options too

// Live profiling of the debuggee with the sampler (live_profiler.cpp): every session's default.
std::unique_ptr<Profiler> make_live_profiler(
    std::size_t max_pending_samples = kDefaultMaxPendingSamples);

}  // namespace dapprof::adapter
