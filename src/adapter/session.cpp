#include "adapter/session.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include <atomic>
#include <exception>

#include "adapter/child_sessions.hpp"
#include "adapter/fields.hpp"
#include "adapter/handlers.hpp"

namespace dapprof::adapter {
namespace {

std::atomic<std::uint64_t> g_next_session_id{1};
// Above this many bytes waiting for one peer, stop reading from the other (a flood of `output`
// events must not grow memory without bound while the client is slow).
constexpr std::size_t kHighWaterBytes = 16u * 1024u * 1024u;
// After one side has ended, how long the other may take to close by itself.
constexpr auto kLinger = std::chrono::seconds(5);
// Between the adapter's exit and closing its pipe: lets its last messages be read first.
// Daemon shutdown: time for `terminated` to reach the client and the adapter to see EOF.
constexpr auto kShutdownLinger = std::chrono::milliseconds(1000);
constexpr auto kChildExitGrace = std::chrono::milliseconds(500);

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exit code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("signal {}", WTERMSIG(status));
  return fmt::format("status {:#x}", status);
}

}  // namespace

std::shared_ptr<Session> Session::create(Channel::Executor strand, int client_read_fd,
                                         int client_write_fd, Config config) {
  const std::size_t max = config.max_message_size;
  auto session = std::make_shared<Session>(strand, std::move(config));
  session->client_ = Channel::create(strand, client_read_fd, client_write_fd,
                                     fmt::format("session {} client", session->id_), max);
  return session;
}

Session::Session(Channel::Executor strand, Config config)
    : strand_(strand),
      config_(std::move(config)),
      id_(g_next_session_id++),
      profiling_(profiling::Run::create(strand, *this, config_.profiling)),
      task_reads_(TaskReads::create(strand, *this, config_.read_tasks)),
      linger_(strand),
      child_exit_grace_(strand) {}

Session::~Session() {
  if (client_) client_->close();
  if (upstream_.channel) upstream_.channel->close();
}

void Session::start() {
  asio::post(strand_, [self = shared_from_this()] {
    self->client_open_ = true;
    std::weak_ptr<Session> weak = self;
    auto on_exit = [weak, strand = self->strand_](int status) {
      asio::post(strand, [weak, status] {
        if (auto s = weak.lock()) s->on_child_exit(status);
      });
    };
    self->config_.connector(self->strand_, std::move(on_exit), [self](Result<Upstream> upstream) {
      self->on_upstream_ready(std::move(upstream));
    });
  });
}

void Session::on_upstream_ready(Result<Upstream> upstream) {
  if (ended_ || !client_open_) return;  // shut down while connecting; Upstream cleans up
  if (!upstream) {
    upstream_error_ = upstream.message();
    spdlog::error("session {}: {}", id_, upstream_error_);
  } else {
    upstream_ = std::move(*upstream);
    upstream_open_ = true;
    spdlog::info("session {}: upstream is {}", id_, upstream_.description);
    auto self = shared_from_this();
    upstream_.channel->start([self](Json&& m) { self->on_upstream_message(std::move(m)); },
                             [self](const std::string& e) { self->on_upstream_closed(e); });
    wire_flow_control();
  }
  // Read the client only now: nothing it sends can get ahead of the upstream connection.
  auto self = shared_from_this();
  // A client that can no longer be written to is gone, even if its end of the input is still
  // open (a stdio client that closed only its reading pipe): the session ends as at EOF.
  client_->on_write_failed([weak = weak_from_this()](const std::string& e) {
    if (auto s = weak.lock()) s->on_client_closed(e);
  });
  client_->start([self](Json&& m) { self->on_client_message(std::move(m)); },
                 [self](const std::string& e) { self->on_client_closed(e); });
}

void Session::wire_flow_control() {
  std::weak_ptr<Session> weak = shared_from_this();
  client_->on_drained([weak] {
    auto s = weak.lock();
    if (!s) return;
    if (s->upstream_open_) s->upstream_.channel->resume_reading();
    // Paused for its own backlog of our answers (above); if it was paused for the adapter's
    // backlog instead, the next message it forwards pauses it again.
    if (s->client_open_) s->client_->resume_reading();
    s->profiling_->client_drained();
  });
  upstream_.channel->on_drained([weak] {
    if (auto s = weak.lock(); s && s->client_open_) s->client_->resume_reading();
  });
}

void Session::trace(std::string_view direction, const Json& message) {
  if (config_.trace) config_.trace->write(id_, direction, message);
}

void Session::on_client_message(Json&& message) {
  trace("client->dapprof", message);
  try {
    const std::string_view type = string_field(message, "type");
    if (!upstream_open_) {
      // No debug adapter (failed to start, or gone): answer so that the client can end cleanly.
      if (type != "request") return;
      const std::string_view command = string_field(message, "command");
      if (command == protocol::kStopProfiling || command == protocol::kStartProfiling) {
        // Profiling is dapprof's own: a run in progress can still be stopped and collected.
        find_client_request_handler(command)(*this, message);
      } else if (command == "disconnect") {
        profiling_->end(protocol::StoppedReason::Disconnected);
        respond(message, Json::object());
        close_client_after_flush();
      } else {
        respond_error(message,
                      {protocol::ProfilingErrorId::Internal,
                       upstream_error_.empty() ? "the debug adapter has exited" : upstream_error_});
      }
      return;
    }
    if (type == "request") {
      if (Handler h = find_client_request_handler(string_field(message, "command"))) {
        if (h(*this, message) == Disposition::Consume) {
          // Answered here: a client that sends faster than it reads our answers is read no
          // further until it has taken them (the client's drain resumes it).
          if (client_->queued_bytes() > kHighWaterBytes) client_->pause_reading();
          return;
        }
      }
    } else if (type == "response") {
      // The client answers a reverse request under the seq we gave it; debugpy expects its own.
      if (auto seq = integer_field(message, "request_seq")) {
        if (auto original = seq_.take_upstream_seq(*seq))
          message["request_seq"] = *original;
        else
          spdlog::warn("session {}: client response to unknown request {}", id_, *seq);
      }
    }
    trace("dapprof->debugpy", message);
    upstream_.channel->send(message);
    if (upstream_.channel->queued_bytes() > kHighWaterBytes) client_->pause_reading();
  } catch (const std::exception& e) {
    on_client_closed(fmt::format("cannot handle a message from the client: {}", e.what()));
  }
}

void Session::on_upstream_message(Json&& message) {
  trace("debugpy->dapprof", message);
  try {
    const std::string_view type = string_field(message, "type");
    Handler handler = nullptr;
    if (type == "response")
      handler = find_upstream_response_handler(string_field(message, "command"));
    else if (type == "event")
      handler = find_upstream_event_handler(string_field(message, "event"));
    const Disposition disposition = handler ? handler(*this, message) : Disposition::Forward;
    if (disposition == Disposition::Consume) return;
    if (type == "request") {
      // A reverse request (runInTerminal, startDebugging): renumbered, answer mapped back.
      message["seq"] = seq_.map_reverse_request(integer_field(message, "seq").value_or(0));
      trace("dapprof->client", message);
      client_->send(message);
    } else {
      send_to_client(std::move(message));
    }
    if (disposition == Disposition::ForwardThenCloseUpstream)
      upstream_.channel->close_write_when_flushed();
    if (client_->queued_bytes() > kHighWaterBytes) upstream_.channel->pause_reading();
  } catch (const std::exception& e) {
    on_upstream_closed(fmt::format("cannot handle a message from the debug adapter: {}", e.what()));
  }
}

void Session::send_to_client(Json message) {
  if (!client_open_) return;
  message["seq"] = seq_.next_client_seq();
  trace("dapprof->client", message);
  client_->send(message);
}

void Session::respond(const Json& request, Json body) {
  send_to_client(protocol::make_response(request, std::move(body)));
}

void Session::respond_error(const Json& request, const protocol::ProtocolError& error) {
  spdlog::info("session {}: {} refused: {}", id_, string_field(request, "command"), error.message);
  send_to_client(protocol::make_error_response(request, error));
}

void Session::send_event(std::string_view event, Json body) {
  send_to_client(protocol::make_event(event, std::move(body)));
}

std::size_t Session::client_queued_bytes() { return client_->queued_bytes(); }

std::size_t Session::client_unsent_in_kernel() { return client_->unsent_in_kernel(); }

ChildSessions& Session::child_sessions() {
  if (!child_sessions_) child_sessions_ = std::make_shared<ChildSessions>(strand_, id_, config_);
  return *child_sessions_;
}

void Session::on_client_closed(const std::string& error) {
  if (!client_open_) return;
  client_open_ = false;
  client_->close();
  if (!error.empty()) spdlog::error("session {}: client: {}; closing the session", id_, error);
  if (upstream_open_ && !disconnect_requested_)
    spdlog::warn(
        "session {}: the client's connection ended without disconnect; ending the session as "
        "its debug adapter would",
        id_);
  else if (error.empty())
    spdlog::info("session {}: client disconnected", id_);
  // Nobody is left to read the profile: stop sampling now (the run's end is logged), not when
  // the adapter has finished.
  profiling_->end(protocol::StoppedReason::Disconnected);
  if (upstream_open_) {
    // What the adapter would see if the client had talked to it directly: end of input.
    upstream_.channel->resume_reading();
    upstream_.channel->close_write_when_flushed();
    linger_.expires_after(kLinger);
    linger_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
      if (!ec) self->on_upstream_closed("it did not end within 5 s of the client leaving");
    });
  }
  maybe_end();
}

void Session::on_upstream_closed(const std::string& error) {
  if (!upstream_open_) return;
  upstream_open_ = false;
  upstream_.channel->close();
  child_exit_grace_.cancel();
  if (!error.empty())
    spdlog::error("session {}: debug adapter: {}; ending the session", id_, error);
  else if (disconnect_requested_ || !client_open_)
    spdlog::info("session {}: debug adapter finished", id_);
  else
    spdlog::warn("session {}: debug adapter closed the connection unexpectedly", id_);
  if (client_open_) {
    client_->resume_reading();
    if (!terminated_sent_ && !disconnect_requested_) {
      terminated_sent_ = true;
      send_to_client(protocol::make_event("terminated", Json::object()));
    }
    // The client normally answers `terminated` with `disconnect`, which we answer ourselves.
    if (disconnect_requested_) close_client_after_flush();
    linger_.expires_after(kLinger);
    linger_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
      if (!ec) self->on_client_closed({});
    });
  }
  maybe_end();
}

void Session::on_child_exit(int status) {
  spdlog::log(disconnect_requested_ ? spdlog::level::debug : spdlog::level::warn,
              "session {}: debug adapter exited ({})", id_, describe_status(status));
  if (!upstream_open_) return;
  child_exit_grace_.expires_after(kChildExitGrace);
  child_exit_grace_.async_wait([self = shared_from_this(), status](const asio::error_code& ec) {
    if (ec) return;
    self->on_upstream_closed(self->disconnect_requested_
                                 ? std::string{}
                                 : fmt::format("it exited ({})", describe_status(status)));
  });
}

void Session::close_client_after_flush() {
  if (!client_open_) return;
  // Once the client has everything, a session without its adapter has nothing left to do.
  client_->close_write_when_flushed([weak = weak_from_this()] {
    if (auto self = weak.lock(); self && !self->upstream_open_) self->force_close();
  });
}

void Session::shutdown() {
  asio::post(strand_, [self = shared_from_this()] {
    if (self->ended_) return;
    spdlog::info("session {}: daemon stopping", self->id_);
    if (self->client_open_) {
      if (!self->terminated_sent_) {
        self->terminated_sent_ = true;
        self->send_to_client(protocol::make_event("terminated", Json::object()));
      }
      self->close_client_after_flush();
    }
    if (self->upstream_open_) self->upstream_.channel->close_write_when_flushed();
    self->linger_.expires_after(kShutdownLinger);
    self->linger_.async_wait([self](const asio::error_code& ec) {
      if (!ec) self->force_close();
    });
    self->maybe_end();
  });
}

void Session::force_close() {
  if (upstream_open_) {
    upstream_open_ = false;
    upstream_.channel->close();
  }
  if (client_open_) {
    client_open_ = false;
    client_->close();
  }
  maybe_end();
}

void Session::maybe_end() {
  if (ended_ || client_open_ || upstream_open_) return;
  ended_ = true;
  linger_.cancel();
  child_exit_grace_.cancel();
  profiling_->close();
  task_reads_->close();
  if (child_sessions_) child_sessions_->close();
  upstream_.child.reset();  // released to the reaper: exits by itself or is terminated
  spdlog::info("session {}: ended", id_);
  if (auto on_end = std::move(config_.on_end)) on_end();
}

Result<pid_t> Session::debuggee_process() {
  if (debuggee_host_) return *debuggee_host_;
  auto host = resolve_debuggee(debuggee_, upstream_.peer);
  if (!host) {
    spdlog::info("session {}: {}", id_, host.message());
    return host;
  }
  debuggee_host_ = *host;
  return host;
}

}  // namespace dapprof::adapter
