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

#include "adapter/debuggee.hpp"
#include "adapter/profiling/run.hpp"
#include "adapter/profiling/sink.hpp"
#include "adapter/seq_map.hpp"
#include "adapter/task_reads.hpp"
#include "adapter/trace.hpp"
#include "adapter/transport.hpp"
#include "adapter/upstream.hpp"
#include "protocol/envelope.hpp"

namespace dapprof::adapter {

class ChildSessions;

class Session : public std::enable_shared_from_this<Session>, private profiling::Sink {
 public:
  struct Config {
    std::size_t max_message_size = protocol::kDefaultMaxBodyBytes;
    UpstreamConnector connector;
    profiling::Config profiling;         // default: the real sampler
    ReadTasks read_tasks;                // asyncTasks; default: the real sampler
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
  void respond(const Json& request, Json body) override;
  void respond_error(const Json& request, const protocol::ProtocolError& error) override;
  // What debugpy's process event names (pid 0: none yet).
  const ReportedDebuggee& debuggee() const { return debuggee_; }
  void set_debuggee(ReportedDebuggee reported) {
    debuggee_ = std::move(reported);
    debuggee_host_.reset();
  }
  // The debuggee's host PID, found once (debuggee.hpp); an error says why it cannot be.
  Result<pid_t> debuggee_process();
  profiling::Run& profiling() { return *profiling_; }
  TaskReads& task_reads() { return *task_reads_; }
  void note_terminated_sent() { terminated_sent_ = true; }
  void note_disconnect_requested() { disconnect_requested_ = true; }
  ChildSessions& child_sessions();  // created on first use

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

  // profiling::Sink: how the profiling run reaches the client.
  void send_event(std::string_view event, Json body) override;
  bool client_open() override { return client_open_; }
  std::size_t client_queued_bytes() override;
  std::size_t client_unsent_in_kernel() override;

  Channel::Executor strand_;
  Config config_;
  std::uint64_t id_;
  std::shared_ptr<Channel> client_;
  Upstream upstream_;
  std::string upstream_error_;  // set when the upstream could not be started
  SeqMapper seq_;
  std::shared_ptr<profiling::Run> profiling_;
  std::shared_ptr<TaskReads> task_reads_;
  std::shared_ptr<ChildSessions> child_sessions_;
  asio::steady_timer linger_;  // bounds how long one side may stay open after the other ended
  asio::steady_timer child_exit_grace_;
  ReportedDebuggee debuggee_;
  std::optional<pid_t> debuggee_host_;
  bool terminated_sent_ = false;
  bool disconnect_requested_ = false;
  bool client_open_ = false;
  bool upstream_open_ = false;
  bool ended_ = false;
};

}  // namespace dapprof::adapter
