#pragma once
// The debug adapter behind dapprof, one per session: a spawned `PYTHON -m debugpy.adapter` on
// pipes (or any argv), or a TCP connection to a debugpy that listens.
#include <functional>
#include <memory>

#include "adapter/child.hpp"
#include "adapter/debuggee.hpp"
#include "adapter/options.hpp"
#include "adapter/transport.hpp"
#include "common/result.hpp"

namespace dapprof::adapter {

struct Upstream {
  std::shared_ptr<Channel> channel;
  std::unique_ptr<ChildProcess> child;  // null when connected over TCP
  std::string description;              // for logs: "debugpy adapter (pid 123)", "127.0.0.1:5678"
  UpstreamPeer peer;                    // to find the debuggee debugpy names (debuggee.hpp)
};

using UpstreamReady = std::function<void(Result<Upstream>)>;
// Establishes a session's upstream. Runs on the session's strand and calls `ready` there, once.
// on_child_exit (spawned adapters only) runs on the io_context when the child has exited.
using UpstreamConnector = std::function<void(Channel::Executor strand, Reaper::OnExit on_child_exit,
                                             UpstreamReady ready)>;

// The argv that `options` asks for: adapter_command, else PYTHON -m debugpy.adapter.
std::vector<std::string> adapter_argv(const UpstreamOptions& options);

UpstreamConnector make_upstream_connector(const UpstreamOptions& options, Reaper& reaper,
                                          std::size_t max_message_size);

// A TCP connection to a debug adapter that listens at `target` (what --connect does).
// `unreachable_hint` ends the error message when it cannot be reached: what the user may check.
UpstreamConnector make_tcp_connector(HostPort target, std::size_t max_message_size,
                                     std::string unreachable_hint);

}  // namespace dapprof::adapter
