#pragma once
// One debug session: the client's channel, the upstream debug adapter, and the state dapprof
// keeps between them (client-side seq numbering, the debuggee's PID, the profiler). Everything
// runs on the session's strand. Messages dapprof does not own pass through unchanged except for
// the client-side seq; the few it does own are handled by small handlers (handlers.cpp).
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "adapter/profiler.hpp"
#include "adapter/seq_map.hpp"
#include "adapter/trace.hpp"
#include "adapter/transport.hpp"
#include "adapter/upstream.hpp"
#include "protocol/envelope.hpp"

namespace dapprof::adapter {

class Session : public std::enable_shared_from_this<Session> {
 public:
  struct Config {
    std::size_t max_message_size = protocol::kDefaultMaxBodyBytes;
    UpstreamConnector connector;
    ProfilerFactory profiler_factory;    // default: make_unavailable_profiler
    std::shared_ptr<TraceWriter> trace;  // may be null
    std::function<void()> on_end;        // runs on the strand once both sides are closed
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
  bool profiling() const { return profiling_; }
  void set_profiling(bool active) { profiling_ = active; }
  Profiler& profiler() { return *profiler_; }
  EventSink event_sink();
  void note_terminated_sent() { terminated_sent_ = true; }
  void note_disconnect_requested() { disconnect_requested_ = true; }

 private:
  void on_upstream_ready(Result<Upstream> upstream);
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
  asio::steady_timer linger_;  // bounds how long one side may stay open after the other ended
  asio::steady_timer child_exit_grace_;
  pid_t debuggee_ = 0;
  bool profiling_ = false;
  bool terminated_sent_ = false;
  bool disconnect_requested_ = false;
  bool client_open_ = false;
  bool upstream_open_ = false;
  bool ended_ = false;
};

}  // namespace dapprof::adapter
