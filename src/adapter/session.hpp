#pragma once
// One debug session: the client's channel, the upstream debug adapter, and the state dapprof
// keeps between them (client-side seq numbering, the debuggee's PID, the profiler). Everything
// runs on the session's strand. Messages dapprof does not own pass through unchanged except for
// the client-side seq; the few it does own are handled by small handlers (handlers.cpp).
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "adapter/profiler.hpp"
#include "adapter/seq_map.hpp"
#include "adapter/trace.hpp"
#include "adapter/transport.hpp"
#include "adapter/upstream.hpp"
#include "protocol/envelope.hpp"

namespace dapprof::adapter {

class ChildSessions;

class Session : public std::enable_shared_from_this<Session> {
 public:
  struct Config {
    std::size_t max_message_size = protocol::kDefaultMaxBodyBytes;
    UpstreamConnector connector;
    ProfilerFactory profiler_factory;    // default: make_live_profiler()
    std::shared_ptr<TraceWriter> trace;  // may be null
    std::function<void()> on_end;        // runs on the strand once both sides are closed
    // Starts a child process's session (child_sessions.hpp) the way the daemon starts its own,
    // so that it ends with the daemon. Null: it is just started.
    std::function<void(std::shared_ptr<Session>)> start_child;
  };

  // Takes ownership of the client's fds (equal for a socket).
  static std::shared_ptr<Session> create(Channel::Executor strand, int client_read_fd,
                                         int client_write_fd, Config config);
  Session(Channel::Executor strand, Config config);
  ~Session();

  void start();     // thread-safe
  void shutdown();  // thread-safe: the daemon stops; the client gets `terminated`
  // Once the loop has stopped: closes everything now, on the calling thread.
  void abort() { force_close(); }
  std::uint64_t id() const { return id_; }
  // Before start(): runs on the strand once both sides are closed.
  void set_on_end(std::function<void()> on_end) { config_.on_end = std::move(on_end); }

  // For handlers (on the strand).
  void send_to_client(Json message);  // numbers it
  void respond(const Json& request, Json body);
  void respond_error(const Json& request, const protocol::ProtocolError& error);
  pid_t debuggee() const { return debuggee_; }
  void set_debuggee(pid_t pid) { debuggee_ = pid; }
  Profiler& profiler() { return *profiler_; }
  // How the profiler reaches this session from its threads.
  ProfilerLink profiler_link();
  // Sends queued profilingData events: all of them, or only while the client's connection has
  // nothing else waiting (DAP traffic first; a slow client makes the profiler merge or drop).
  void send_profiling_data(bool everything);
  // Ends profiling run `run` (0: the current one): its last data, then profilingStopped.
  void end_profiling_run(std::uint64_t run, protocol::StoppedReason reason);
  // startProfiling is answered once the profiler has attached (on_profiler_started); a
  // stopProfiling that arrives meanwhile is handled right after.
  void await_profiler_start(Json request) { pending_start_ = std::move(request); }
  void defer_stop_profiling(Json request) { deferred_stop_ = std::move(request); }
  void note_terminated_sent() { terminated_sent_ = true; }
  void note_disconnect_requested() { disconnect_requested_ = true; }
  ChildSessions& child_sessions();  // created on first use

 private:
  void on_upstream_ready(Result<Upstream> upstream);
  void on_profiler_started(std::uint64_t run);
  void fail_pending_profiling_requests(const std::string& why);
  void on_client_message(Json&& message);
  void on_upstream_message(Json&& message);
  void on_client_closed(const std::string& error);
  void on_upstream_closed(const std::string& error);
  void on_child_exit(int status);
  void close_client_after_flush();
  void force_close();
  void maybe_end();
  void trace(std::string_view direction, const Json& message);
  void wire_flow_control();

  Channel::Executor strand_;
  Config config_;
  std::uint64_t id_;
  std::shared_ptr<Channel> client_;
  Upstream upstream_;
  std::string upstream_error_;  // set when the upstream could not be started
  SeqMapper seq_;
  std::unique_ptr<Profiler> profiler_;
  std::shared_ptr<ChildSessions> child_sessions_;
  asio::steady_timer linger_;  // bounds how long one side may stay open after the other ended
  asio::steady_timer child_exit_grace_;
  asio::steady_timer profiling_retry_;  // the client's kernel buffer was too full for data
  bool profiling_retry_armed_ = false;
  std::optional<Json> pending_start_;   // startProfiling waiting for the attach
  std::optional<Json> deferred_stop_;   // stopProfiling that came while attaching
  pid_t debuggee_ = 0;
  bool terminated_sent_ = false;
  bool disconnect_requested_ = false;
  bool client_open_ = false;
  bool upstream_open_ = false;
  bool ended_ = false;
};

}  // namespace dapprof::adapter
