#pragma once
// The session's hook for live profiling. A session owns one Profiler; it answers startProfiling /
// stopProfiling through it. Sampling happens on threads of the profiler's own, which report to
// the client through the EventSink: it posts onto the session's strand, so it is safe to call from
// any thread, also after the session has ended (the event is then dropped).
#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include "common/result.hpp"
#include "protocol/json.hpp"
#include "protocol/messages.hpp"

namespace dapprof::adapter {

using protocol::Json;

// Sends the event `event` with `body` to the session's client.
using EventSink = std::function<void(std::string event, Json body)>;

class Profiler {
 public:
  virtual ~Profiler() = default;
  // startProfiling with validated arguments; `target` is the debuggee or the `pid` argument,
  // already checked to be in the debuggee's process tree. The result is the response body.
  virtual Result<Json> start(const protocol::StartProfilingArguments& arguments, pid_t target,
                             EventSink sink) = 0;
  // stopProfiling, only called after a successful start.
  virtual Result<Json> stop(const protocol::StopProfilingArguments& arguments) = 0;
  // The session is over (either peer went away): stop sampling, never call the sink again.
  virtual void on_session_end() = 0;
};

using ProfilerFactory = std::function<std::unique_ptr<Profiler>()>;

// This build's profiler: refuses to start, saying that live sampling is not available yet.
std::unique_ptr<Profiler> make_unavailable_profiler();

}  // namespace dapprof::adapter
